/* config.c: the settings table and its resolution (flag > env > file > default). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/suggest.h"

enum cfg_type { CFG_STR, CFG_INT, CFG_DOUBLE };

struct cfg_setting {
	const char *key;	/* name in the config file */
	const char *flag;	/* long flag, or NULL */
	const char *env[2];	/* environment variables, in order */
	enum cfg_type type;
	size_t offset;
	const char *def;	/* default, or NULL */
	const char *arg;
	const char *help;
	unsigned groups;	/* which commands offer its flag (CFG_FOR_*) */
};

#define S(field) offsetof(struct config, field)

static const struct cfg_setting settings[] = {
	{ "provider", "provider", { "EGG_PROVIDER" }, CFG_STR, S(provider), "openai",
	  "NAME", "LLM provider: openai (any OpenAI-compatible server) or anthropic", CFG_FOR_LLM },
	{ "base_url", "base-url", { "EGG_BASE_URL" }, CFG_STR, S(base_url), NULL,
	  "URL", "LLM endpoint base URL (default: the provider's public URL)", CFG_FOR_LLM },
	{ "model", "model", { "EGG_MODEL" }, CFG_STR, S(model), NULL,
	  "NAME", "LLM model name (required for LLM calls; with --llm-spool, 'spool' when none is named)", CFG_FOR_LLM },
	{ "python", "python", { "EGG_PYTHON" }, CFG_STR, S(python), "python3",
	  "PATH", "Python interpreter for the eval worker", CFG_FOR_WORKER },
	{ "store", "store", { "EGG_STORE" }, CFG_STR, S(store), "./egg-runs",
	  "DIR", "run store folder", CFG_FOR_STORE },
	{ "cache_dir", "cache-dir", { "EGG_CACHE_DIR" }, CFG_STR, S(cache_dir), NULL,
	  "DIR", "LLM reply cache folder (default: STORE/llm-cache)", CFG_FOR_LLM },
	{ "llm_spool", "llm-spool", { "EGG_LLM_SPOOL" }, CFG_STR, S(llm_spool), NULL,
	  "DIR", "no network: requests without a cached reply go to DIR/pending, replies are read from DIR/replies", CFG_FOR_LLM },
	{ "worker_cmd", "worker-cmd", { "EGG_WORKER_CMD" }, CFG_STR, S(worker_cmd), NULL,
	  "CMD", "command prefix that carries the worker's stdio (e.g. 'ssh gpu1')", CFG_FOR_WORKER },
	{ "slurm", NULL, { "EGG_SLURM" }, CFG_INT, S(slurm), "0",
	  NULL, "1: start each device's worker as a Slurm step (srun); the flag is --slurm", CFG_FOR_SLURM },
	{ "slurm_args", "slurm-args", { "EGG_SLURM_ARGS" }, CFG_STR, S(slurm_args), NULL,
	  "ARGS", "more srun arguments for the worker steps (partition, account, time, --gres...)", CFG_FOR_SLURM },
	{ "device", "device", { "EGG_DEVICE" }, CFG_STR, S(device), NULL,
	  "DEV", "cpu, cuda or cuda:N (default: cuda when a GPU is visible)", CFG_FOR_WORKER },
	{ "token_field", NULL, { "EGG_TOKEN_FIELD" }, CFG_STR, S(token_field), NULL,
	  NULL, "openai body field for the output limit (max_tokens or max_completion_tokens; default: the model's request rule)", CFG_FOR_LLM_CALLS },
	{ "temperature", "temperature", { "EGG_TEMPERATURE" }, CFG_DOUBLE, S(temperature), NULL,
	  "T", "sampling temperature (default: the model's request rule, 0.7 where it takes one; negative: not sent)", CFG_FOR_LLM_CALLS },
	{ "reasoning_effort", "reasoning-effort", { "EGG_REASONING_EFFORT" }, CFG_STR, S(reasoning_effort), NULL,
	  "LEVEL", "reasoning effort (minimal, low, medium, high): OpenAI's reasoning_effort (gpt-5*, o*), Anthropic's extended-thinking budget", CFG_FOR_LLM_CALLS },
	{ "stream", NULL, { "EGG_LLM_STREAM" }, CFG_INT, S(stream), "1",
	  NULL, "1: replies are streamed (the stall timeout measures silence); 0: one body at the end", CFG_FOR_LLM_CALLS },
	{ "max_output_tokens", "max-output-tokens", { "EGG_MAX_OUTPUT_TOKENS" }, CFG_INT,
	  S(max_output_tokens), "16384", "N", "output token limit per LLM call", CFG_FOR_LLM_CALLS },
	{ "timeout_s", "llm-timeout", { "EGG_LLM_TIMEOUT" }, CFG_DOUBLE, S(timeout_s), "600",
	  "S", "seconds one LLM request may take", CFG_FOR_LLM_CALLS },
	{ "stall_timeout_s", "llm-stall-timeout", { "EGG_LLM_STALL_TIMEOUT" }, CFG_DOUBLE,
	  S(stall_timeout_s), "120", "S", "seconds without a byte before a request is abandoned", CFG_FOR_LLM_CALLS },
	{ "llm_concurrency", "llm-concurrency", { "EGG_LLM_CONCURRENCY" }, CFG_INT, S(llm_concurrency), "8",
	  "N", "LLM requests in flight at once, across all tasks of a run", CFG_FOR_LLM_CALLS },
	{ "max_attempts", "llm-attempts", { "EGG_LLM_ATTEMPTS" }, CFG_INT, S(max_attempts), "6",
	  "N", "attempts per LLM call, retries included", CFG_FOR_LLM_CALLS },
	{ "deadline_s", "llm-deadline", { "EGG_LLM_DEADLINE" }, CFG_DOUBLE, S(deadline_s), "1800",
	  "S", "total seconds per LLM call, retries included", CFG_FOR_LLM_CALLS },
	{ "retry_base_ms", NULL, { "EGG_LLM_RETRY_BASE_MS" }, CFG_INT, S(retry_base_ms), "1000",
	  NULL, "first retry delay in milliseconds (doubles per retry)", CFG_FOR_LLM_CALLS },
	{ "retry_max_ms", NULL, { "EGG_LLM_RETRY_MAX_MS" }, CFG_INT, S(retry_max_ms), "30000",
	  NULL, "largest retry delay in milliseconds", CFG_FOR_LLM_CALLS },
};

#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

const char *const config_secret_env[] = {
	"EGG_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", NULL
};

static char *taken_secrets[sizeof(config_secret_env) / sizeof(config_secret_env[0])];

void config_take_secrets(void)
{
	for (int i = 0; config_secret_env[i]; i++) {
		char *v = getenv(config_secret_env[i]);
		if (!v)
			continue;
		if (*v && !taken_secrets[i]) {
			taken_secrets[i] = xstrdup(v);
			secret_register(v);
		}
		memset(v, 0, strlen(v));
		unsetenv(config_secret_env[i]);
	}
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

const char *config_secret(const char *name)
{
	const char *v;
	for (int i = 0; config_secret_env[i]; i++)
		if (!strcmp(name, config_secret_env[i]) && taken_secrets[i])
			return taken_secrets[i];
	v = getenv(name);
	return v && *v ? v : NULL;
}

void config_set_flag(struct config *cfg, const char *flag, const char *value)
{
	for (size_t i = 0; i < NSETTINGS; i++)
		if (settings[i].flag && !strcmp(settings[i].flag, flag))
			cfg->flag_values[i] = value;
}

int config_env_is_secret(const char *name)
{
	static const char *const marks[] = { "KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", NULL };
	for (int i = 0; config_secret_env[i]; i++)
		if (!strcmp(name, config_secret_env[i]))
			return 1;
	for (int i = 0; marks[i]; i++)
		if (strstr(name, marks[i]))
			return 1;
	return 0;
}

static struct opt option_table[NSETTINGS + 3];

void config_init(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->cache = 1;
	cfg->temperature = NAN;	/* not set: the model's request rule decides */
}

const struct opt *config_options(struct config *cfg, unsigned groups)
{
	size_t n = 0;
	for (size_t i = 0; i < NSETTINGS; i++) {
		if (!settings[i].flag || !(settings[i].groups & groups))
			continue;
		option_table[n++] = (struct opt){ settings[i].flag, 0, OPT_STRING,
			&cfg->flag_values[i], settings[i].arg, settings[i].help };
	}
	option_table[n++] = (struct opt){ "config", 0, OPT_STRING, &cfg->config_flag,
		"FILE", "config file (JSON)" };
	if (groups & (CFG_FOR_LLM | CFG_FOR_STORE))
		option_table[n++] = (struct opt){ "no-cache", 0, OPT_NEGATE, &cfg->cache,
			NULL, "do not read or write the LLM reply cache and the evaluation cache" };
	option_table[n] = (struct opt)OPT_TABLE_END;
	return option_table;
}

static int parse_number(const struct cfg_setting *s, const char *value,
			const char *where, struct config *cfg)
{
	char *end;
	void *dest = (char *)cfg + s->offset;

	errno = 0;
	if (s->type == CFG_INT) {
		long v = strtol(value, &end, 10);
		if (errno || end == value || *end || v < 0) {
			err_set(ERR_INPUT, "%s: '%s' needs a whole number, not '%s'", where, s->key, value);
			return -1;
		}
		*(long *)dest = v;
	} else {
		double v = strtod(value, &end);
		if (errno || end == value || *end) {
			err_set(ERR_INPUT, "%s: '%s' needs a number, not '%s'", where, s->key, value);
			return -1;
		}
		*(double *)dest = v;
	}
	return 0;
}

static int apply(struct config *cfg, const struct cfg_setting *s, const char *value,
		 const char *where)
{
	if (s->type == CFG_STR) {
		char **dest = (char **)((char *)cfg + s->offset);
		free(*dest);
		*dest = xstrdup(value);
		return 0;
	}
	return parse_number(s, value, where, cfg);
}

static char *default_config_path(void)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	if (xdg && *xdg)
		return xasprintf("%s/egg/config.json", xdg);
	if (home && *home)
		return xasprintf("%s/.config/egg/config.json", home);
	return NULL;
}

/* Loads the config file; returns the object (owned) or NULL with *failed. */
static json_t *load_file(struct config *cfg, int *failed)
{
	const char *explicit_path = cfg->config_flag ? cfg->config_flag : getenv("EGG_CONFIG");
	char *path = explicit_path ? xstrdup(explicit_path) : default_config_path();
	json_error_t jerr;
	json_t *root = NULL;

	*failed = 0;
	if (!path || cfg->ignore_file) {
		free(path);
		return NULL;
	}
	if (!explicit_path && !fs_exists(path)) {
		free(path);
		return NULL;
	}
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		if (!fs_exists(path))
			err_set(ERR_INPUT, "cannot read config file '%s': no such file", path);
		else
			err_set(ERR_INPUT, "config file '%s' line %d: %s", path, jerr.line, jerr.text);
		*failed = 1;
		free(path);
		return NULL;
	}
	if (!json_is_object(root)) {
		err_set(ERR_INPUT, "config file '%s': top level must be an object", path);
		json_decref(root);
		*failed = 1;
		free(path);
		return NULL;
	}
	cfg->config_path = path;
	return root;
}

static int check_prices(const char *path, json_t *prices)
{
	const char *model;
	json_t *v;
	if (!json_is_object(prices)) {
		err_set(ERR_INPUT, "config file '%s': 'prices' must be an object", path);
		return -1;
	}
	json_object_foreach(prices, model, v) {
		json_t *in = json_object_get(v, "input"), *out = json_object_get(v, "output");
		json_t *cached = json_object_get(v, "cached_input");
		if (!json_is_number(in) || !json_is_number(out) || (cached && !json_is_number(cached))) {
			err_set(ERR_INPUT, "config file '%s': price of '%s' needs numbers 'input' and 'output' (and optionally "
				"'cached_input'; USD per million tokens)", path, model);
			return -1;
		}
	}
	return 0;
}

/* "request_rules": {"MODEL_PREFIX": {"token_field", "temperature", "reasoning_effort", "max_output"}}:
 * each field optional; null for temperature or reasoning_effort means "not sent". */
static int check_request_rules(const char *path, json_t *rules)
{
	const char *prefix, *field;
	json_t *rule, *v;
	if (!json_is_object(rules)) {
		err_set(ERR_INPUT, "config file '%s': 'request_rules' must be an object (model prefix -> rule)", path);
		return -1;
	}
	json_object_foreach(rules, prefix, rule) {
		if (!json_is_object(rule)) {
			err_set(ERR_INPUT, "config file '%s': request rule '%s' must be an object", path, prefix);
			return -1;
		}
		json_object_foreach(rule, field, v) {
			const char *s = json_string_value(v);
			int ok;
			if (!strcmp(field, "token_field"))
				ok = s && (!strcmp(s, "max_tokens") || !strcmp(s, "max_completion_tokens"));
			else if (!strcmp(field, "temperature"))
				ok = json_is_null(v) || json_is_number(v);
			else if (!strcmp(field, "reasoning_effort"))
				ok = json_is_null(v) || (s && *s);
			else if (!strcmp(field, "max_output"))
				ok = json_is_integer(v) && json_integer_value(v) >= 0;
			else {
				err_set(ERR_INPUT, "config file '%s': request rule '%s': unknown field '%s' (the fields: "
					"token_field, temperature, reasoning_effort, max_output)", path, prefix, field);
				return -1;
			}
			if (!ok) {
				err_set(ERR_INPUT, "config file '%s': request rule '%s': '%s' has the wrong value (token_field: "
					"max_tokens or max_completion_tokens; temperature: a number or null; reasoning_effort: "
					"a word or null; max_output: a whole number)", path, prefix, field);
				return -1;
			}
		}
	}
	return 0;
}

/* Takes settings from the config file object. */
static int apply_file(struct config *cfg, json_t *root, int *from_file)
{
	const char *key;
	json_t *v;

	json_object_foreach(root, key, v) {
		size_t i;
		char num[64];
		if (!strcmp(key, "prices")) {
			if (check_prices(cfg->config_path, v) < 0)
				return -1;
			cfg->prices = json_incref(v);
			continue;
		}
		if (!strcmp(key, "request_rules")) {
			if (check_request_rules(cfg->config_path, v) < 0)
				return -1;
			cfg->request_rules = json_incref(v);
			continue;
		}
		if (!strcmp(key, "api_key")) {
			err_set(ERR_INPUT, "config file '%s': API keys are read from the environment only (EGG_API_KEY)",
				cfg->config_path);
			return -1;
		}
		for (i = 0; i < NSETTINGS; i++)
			if (!strcmp(settings[i].key, key))
				break;
		if (i == NSETTINGS) {
			const char *names[NSETTINGS + 2], *near;
			struct buf keys = BUF_INIT;
			for (size_t k = 0; k < NSETTINGS; k++) {
				names[k] = settings[k].key;
				buf_addf(&keys, "%s%s", k ? ", " : "", settings[k].key);
			}
			names[NSETTINGS] = "prices";
			names[NSETTINGS + 1] = "request_rules";
			buf_adds(&keys, ", prices, request_rules");
			near = suggest_closest(key, strlen(key), names, NSETTINGS + 2);
			err_set(ERR_INPUT, "config file '%s': unknown setting '%s'%s%s%s (the settings: %s)", cfg->config_path,
				key, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "", buf_str(&keys));
			buf_release(&keys);
			return -1;
		}
		if (json_is_string(v)) {
			if (apply(cfg, &settings[i], json_string_value(v), cfg->config_path) < 0)
				return -1;
		} else if (json_is_number(v) && settings[i].type != CFG_STR) {
			snprintf(num, sizeof(num), "%.17g", json_number_value(v));
			if (settings[i].type == CFG_INT)
				snprintf(num, sizeof(num), "%lld", (long long)json_number_value(v));
			if (apply(cfg, &settings[i], num, cfg->config_path) < 0)
				return -1;
		} else {
			err_set(ERR_INPUT, "config file '%s': '%s' has the wrong type", cfg->config_path, key);
			return -1;
		}
		from_file[i] = 1;
	}
	return 0;
}

/* What egg knows of each provider: where it is, its own variables, its
 * API's path. The one place a provider's defaults are written. */
static const struct provider_info providers[] = {
	{ "openai", "https://api.openai.com/v1", "OPENAI_BASE_URL", "OPENAI_API_KEY", "/chat/completions", 2.0 },
	{ "anthropic", "https://api.anthropic.com", NULL, "ANTHROPIC_API_KEY", "/v1/messages", 1.0 },
};

char *config_endpoint(const struct config *cfg)
{
	const struct provider_info *prov = config_provider(cfg->provider);
	const char *base = cfg->base_url ? cfg->base_url : prov ? prov->base_url : "";
	const char *host = strstr(base, "://");
	size_t n = strlen(base);
	while (n && base[n - 1] == '/')
		n--;
	/* A base URL given as the whole endpoint is the endpoint: its path is
	 * not added twice (/v1/messages/v1/messages). */
	if (prov && n >= strlen(prov->path) && !strncmp(base + n - strlen(prov->path), prov->path, strlen(prov->path)))
		return xasprintf("%.*s", (int)n, base);
	if (prov && !strcmp(prov->name, "anthropic") && n >= 3 && !strncmp(base + n - 3, "/v1", 3))
		n -= 3;	/* the Messages API's path has its version: not /v1/v1/messages */
	if (prov && !strcmp(prov->name, "openai") && host && !memchr(host + 3, '/', n - (size_t)(host + 3 - base)))
		return xasprintf("%.*s/v1%s", (int)n, base, prov->path);	/* http://host:8000: its /v1 */
	return xasprintf("%.*s%s", (int)n, base, prov ? prov->path : "");
}

const struct provider_info *config_provider(const char *name)
{
	for (size_t i = 0; name && i < sizeof(providers) / sizeof(providers[0]); i++)
		if (!strcmp(providers[i].name, name))
			return &providers[i];
	return NULL;
}

int config_resolve(struct config *cfg)
{
	int failed, from_file[NSETTINGS] = { 0 };
	json_t *root = load_file(cfg, &failed);
	const struct provider_info *prov;
	const char *key;
	int rc = -1;

	if (failed)
		return -1;
	/* Defaults first, then the file, then environment, then flags. */
	for (size_t i = 0; i < NSETTINGS; i++)
		if (settings[i].def && apply(cfg, &settings[i], settings[i].def, "default") < 0)
			goto out;
	if (root && apply_file(cfg, root, from_file) < 0)
		goto out;
	for (size_t i = 0; i < NSETTINGS; i++) {
		for (int e = 0; e < 2 && settings[i].env[e]; e++) {
			const char *v = getenv(settings[i].env[e]);
			if (v && *v) {
				char where[96];
				snprintf(where, sizeof(where), "environment %s", settings[i].env[e]);
				if (apply(cfg, &settings[i], v, where) < 0)
					goto out;
				break;
			}
		}
	}
	for (size_t i = 0; i < NSETTINGS; i++) {
		if (cfg->flag_values[i]) {
			char where[96];
			snprintf(where, sizeof(where), "option --%s", settings[i].flag);
			if (apply(cfg, &settings[i], cfg->flag_values[i], where) < 0)
				goto out;
		}
	}
	if (!(prov = config_provider(cfg->provider))) {
		err_set(ERR_INPUT, "unknown provider '%s' (use openai or anthropic)", cfg->provider);
		goto out;
	}
	if (!cfg->base_url && prov->url_env && getenv(prov->url_env) && *getenv(prov->url_env))
		cfg->base_url = xstrdup(getenv(prov->url_env));
	if (!cfg->base_url)
		cfg->base_url = xstrdup(prov->base_url);
	key = config_secret("EGG_API_KEY");
	if (!key)
		key = config_secret(prov->key_env);
	if (key) {
		cfg->api_key = xstrdup(key);
		secret_register(key);
	}
	if (!cfg->cache_dir)
		cfg->cache_dir = fs_join(cfg->store, "llm-cache");
	/* Replies written by hand name no model: the requests, the reply
	 * cache's keys and the run say "spool" (never priced: llm.h). */
	if ((!cfg->model || !*cfg->model) && cfg->llm_spool && *cfg->llm_spool) {
		free(cfg->model);
		cfg->model = xstrdup(CONFIG_SPOOL_MODEL);
	}
	if (cfg->max_attempts < 1)
		cfg->max_attempts = 1;
	/* A negative temperature means "not sent"; above the API's range, the
	 * server would refuse every request (and egg must not drop the user's
	 * setting to go on). */
	if (!isnan(cfg->temperature) && cfg->temperature > prov->temperature_max) {
		err_set(ERR_INPUT, "temperature %g is outside the %s API's range 0..%g (a negative temperature is not sent)",
			cfg->temperature, prov->name, prov->temperature_max);
		goto out;
	}
	if (cfg->max_output_tokens < 1) {
		err_set(ERR_INPUT, "max_output_tokens must be at least 1");
		goto out;
	}
	if (cfg->llm_concurrency < 1) {
		err_set(ERR_INPUT, "llm_concurrency must be at least 1 (requests in flight at once)");
		goto out;
	}
	if (cfg->token_field && strcmp(cfg->token_field, "max_tokens") && strcmp(cfg->token_field, "max_completion_tokens")) {
		err_set(ERR_INPUT, "token_field must be max_tokens or max_completion_tokens, not '%s'",
			cfg->token_field);
		goto out;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

void config_free(struct config *cfg)
{
	for (size_t i = 0; i < NSETTINGS; i++)
		if (settings[i].type == CFG_STR) {
			char **p = (char **)((char *)cfg + settings[i].offset);
			free(*p);
			*p = NULL;
		}
	free(cfg->api_key);
	free(cfg->config_path);
	json_decref(cfg->prices);
	json_decref(cfg->request_rules);
	cfg->api_key = cfg->config_path = NULL;
	cfg->prices = cfg->request_rules = NULL;
}
