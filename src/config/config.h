/* config.h: egg's settings, resolved as flag > environment > config file > default. */
#ifndef EGG_CONFIG_H
#define EGG_CONFIG_H

#include <jansson.h>

#include "../util/opt.h"

/*
 * The settings every command may use. Strings are owned by the config and
 * freed by config_free. The API key is taken from the environment only
 * (EGG_API_KEY, then OPENAI_API_KEY or ANTHROPIC_API_KEY by provider) and is
 * registered as a secret so that it is redacted from every message.
 *
 * The config file is JSON (parsed by jansson): --config FILE, else
 * $EGG_CONFIG, else $XDG_CONFIG_HOME/egg/config.json, else
 * ~/.config/egg/config.json. Keys are the setting names below plus
 * "prices": {"MODEL": {"input": USD_PER_MTOK, "output": USD_PER_MTOK,
 * "cached_input": USD_PER_MTOK}} and "request_rules" (llm/rules.h).
 */
/* The model's name in a spool run that names none (--llm-spool without --model). */
#define CONFIG_SPOOL_MODEL "spool"

struct config {
	char *provider;
	char *base_url;
	char *model;		/* with llm_spool and none named: CONFIG_SPOOL_MODEL */
	char *api_key;
	char *python;
	char *store;
	char *cache_dir;
	char *llm_spool;	/* folder of the reply spool (--llm-spool), or NULL */
	char *worker_cmd;
	long slurm;		/* start each device's worker as a Slurm step (srun) */
	char *slurm_args;	/* more srun arguments (partition, account, time, --gres) */
	char *device;
	char *token_field;	/* set by the user, or NULL: the model's request rule (llm/rules.h) */
	double temperature;	/* NAN when not set: the request rule; < 0: not sent */
	char *reasoning_effort;	/* set by the user, or NULL */
	long stream;		/* stream replies (1, the default) */
	long max_output_tokens;
	double timeout_s;
	double stall_timeout_s;
	long max_attempts;
	long llm_concurrency;	/* LLM requests in flight at once, across all tasks */
	double deadline_s;
	long retry_base_ms;
	long retry_max_ms;
	int cache;		/* reply cache on (runs) */

	char *config_path;	/* the file read, or NULL */
	json_t *prices;		/* object: model -> {input, output, cached_input}; owned */
	json_t *request_rules;	/* object: model prefix -> {token_field, temperature, reasoning_effort, max_output}; owned */

	/* Raw flag values, filled by the option table of config_options. */
	const char *flag_values[32];
	const char *config_flag;
	int ignore_file;		/* resolve without the config file (doctor, after the file failed) */
};

/* A provider egg speaks to: its default base URL, the variable that may
 * name another (or NULL), its API key's variable and its API's path. */
struct provider_info {
	const char *name;	/* "openai" (any OpenAI-compatible server), "anthropic" */
	const char *base_url;
	const char *url_env;
	const char *key_env;
	const char *path;	/* appended to the base URL: "/chat/completions" */
	double temperature_max;	/* the API's documented range is 0..this */
};
/* The full URL egg posts to: the base URL without trailing slashes, taken
 * with or without its API version ("http://host/v1" or "http://host" for
 * either provider: Anthropic's path carries /v1 itself, an OpenAI-compatible
 * server's base URL needs it when it has no path of its own), then the
 * provider's path; a base URL that ends in that path already is the
 * endpoint itself. Owned. */
char *config_endpoint(const struct config *cfg);
/* The provider called `name`, or NULL (static). */
const struct provider_info *config_provider(const char *name);

void config_init(struct config *cfg);
/* Which settings a command offers as flags. */
enum {
	CFG_FOR_LLM = 1,	/* the endpoint: provider, URL, model, reply cache, spool */
	CFG_FOR_WORKER = 2,	/* python, worker command, device */
	CFG_FOR_STORE = 4,	/* the store */
	CFG_FOR_LLM_CALLS = 32,	/* how calls are made: temperature, limits, timeouts, retries */
	CFG_FOR_SLURM = 64,	/* the Slurm settings (bench, doctor) */
};
/* The option table for the settings in `groups` that have flags (plus
 * --config, and --no-cache with the LLM or the store); it points into `cfg`. */
const struct opt *config_options(struct config *cfg, unsigned groups);
/* Sets a setting's flag value as if given on the command line (borrowed). */
void config_set_flag(struct config *cfg, const char *flag, const char *value);
/* Resolves every setting. Returns 0, or -1 with ERR_INPUT for a bad value
 * or a malformed/unreadable config file. */
int config_resolve(struct config *cfg);
void config_free(struct config *cfg);

/* Environment variables that hold secrets; they are removed from every
 * child's environment. NULL-terminated. */
extern const char *const config_secret_env[];
/*
 * Called first thing in main: copies the values of config_secret_env out of
 * the process's environment, overwrites them in place (the block that
 * /proc/PID/environ shows is the original one, which unsetenv leaves
 * intact), removes the variables, and makes the process non-dumpable (so
 * that no other process of the user can read its memory). Idempotent.
 */
void config_take_secrets(void);
/* The value a secret variable had (taken by config_take_secrets, else the
 * current environment's, for callers that set it later, like unit tests);
 * NULL when unset or empty. Borrowed. */
const char *config_secret(const char *name);
/* Whether an environment variable name looks secret (keys, tokens). */
int config_env_is_secret(const char *name);

#endif
