/* rules.c: the table of request rules per provider and model family, and its overrides (rules.h). */
#include "rules.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define NOT_SENT (-1.0)

/*
 * The built-in rules, as the providers document them. A row applies to the
 * model names that start with its prefix; "" is the provider's default.
 * max_output: the family's largest output limit where it is published (a
 * retry after a reply cut at the limit stays within it). An Anthropic row's
 * `reasoning` says the family has extended thinking (claude-3-7-sonnet and
 * the claude-4 families); a model no row names is given the benefit of the
 * doubt, and a refusal of `thinking` is adapted to (llm.c). cache_min: the
 * least prompt prefix the provider's cache keeps, as documented (Anthropic:
 * 1024 tokens, 2048 for Haiku 3 and 3.5, 4096 for Haiku 4.5 and Opus 4.5;
 * OpenAI's automatic cache: 1024); 0 for a server egg cannot know.
 */
static const struct rule_row {
	const char *provider;
	const char *prefix;
	const char *family;
	const char *token_field;
	double temperature;
	int reasoning;		/* takes reasoning_effort (Anthropic: has extended thinking) */
	long max_output;
	long cache_min;
} builtin_rules[] = {
	{ "openai", "gpt-5", "OpenAI reasoning models (gpt-5*, o1*, o3*, o4*)", "max_completion_tokens", NOT_SENT, 1, 128000, 1024 },
	{ "openai", "o1", "OpenAI reasoning models (gpt-5*, o1*, o3*, o4*)", "max_completion_tokens", NOT_SENT, 1, 0, 1024 },
	{ "openai", "o3", "OpenAI reasoning models (gpt-5*, o1*, o3*, o4*)", "max_completion_tokens", NOT_SENT, 1, 100000, 1024 },
	{ "openai", "o4", "OpenAI reasoning models (gpt-5*, o1*, o3*, o4*)", "max_completion_tokens", NOT_SENT, 1, 100000, 1024 },
	{ "openai", "gpt-", "OpenAI-compatible chat models", "max_tokens", LLM_DEFAULT_TEMPERATURE, 0, 0, 1024 },
	{ "openai", "", "OpenAI-compatible chat models", "max_tokens", LLM_DEFAULT_TEMPERATURE, 0, 0, 0 },
	{ "anthropic", "claude-opus-4-5", "Anthropic Messages API", "max_tokens", LLM_DEFAULT_TEMPERATURE, 1, 64000, 4096 },
	{ "anthropic", "claude-opus-4", "Anthropic Messages API", "max_tokens", LLM_DEFAULT_TEMPERATURE, 1, 32000, 1024 },
	{ "anthropic", "claude-sonnet-4", "Anthropic Messages API", "max_tokens", LLM_DEFAULT_TEMPERATURE, 1, 64000, 1024 },
	{ "anthropic", "claude-haiku-4-5", "Anthropic Messages API", "max_tokens", LLM_DEFAULT_TEMPERATURE, 1, 64000, 4096 },
	{ "anthropic", "claude-3-7-sonnet", "Anthropic Messages API", "max_tokens", LLM_DEFAULT_TEMPERATURE, 1, 64000, 1024 },
	{ "anthropic", "claude-3-5-sonnet", "Anthropic Messages API", "max_tokens", LLM_DEFAULT_TEMPERATURE, 0, 8192, 1024 },
	{ "anthropic", "claude-3-5-haiku", "Anthropic Messages API", "max_tokens", LLM_DEFAULT_TEMPERATURE, 0, 8192, 2048 },
	{ "anthropic", "claude-3-opus", "Anthropic Messages API", "max_tokens", LLM_DEFAULT_TEMPERATURE, 0, 4096, 1024 },
	{ "anthropic", "claude-3-haiku", "Anthropic Messages API", "max_tokens", LLM_DEFAULT_TEMPERATURE, 0, 4096, 2048 },
	{ "anthropic", "", "Anthropic Messages API", "max_tokens", LLM_DEFAULT_TEMPERATURE, 1, 0, 1024 },
};

static void add_source(struct llm_rules *r, const char *what)
{
	size_t n = strlen(r->source);
	snprintf(r->source + n, sizeof(r->source) - n, "%s%s", n ? ", " : "", what);
}

/* The config file's rule with the longest prefix of the model that is at
 * least `floor` long, or NULL. */
static const json_t *config_rule(const struct config *cfg, size_t floor, const char **prefix_out)
{
	const char *prefix;
	const json_t *rule, *best = NULL;
	size_t best_n = 0;
	if (!cfg->request_rules || !cfg->model)
		return NULL;
	json_object_foreach(cfg->request_rules, prefix, rule) {
		size_t n = strlen(prefix);
		if (n >= floor && (!best || n > best_n) && !strncmp(cfg->model, prefix, n)) {
			best = rule;
			best_n = n;
			*prefix_out = prefix;
		}
	}
	return best;
}

/* Anthropic's extended thinking for --reasoning-effort: the budget of
 * thinking tokens each effort buys (the API's least is 1024). */
static const struct { const char *effort; long budget; } thinking_budgets[] = {
	{ "minimal", 1024 }, { "low", 4096 }, { "medium", 12288 }, { "high", 24576 },
};

/* The thinking budget of a documented effort, 0 for any other word (the
 * table has every documented one: OpenAI's reasoning_effort takes the same
 * four words). */
static long effort_budget(const char *effort)
{
	for (size_t i = 0; i < sizeof(thinking_budgets) / sizeof(thinking_budgets[0]); i++)
		if (!strcmp(effort, thinking_budgets[i].effort))
			return thinking_budgets[i].budget;
	return 0;
}

static void thinking_rules(const struct config *cfg, int has_thinking, struct llm_rules *out)
{
	long budget = effort_budget(cfg->reasoning_effort);
	if (!has_thinking) {
		snprintf(out->refusal, sizeof(out->refusal), "--reasoning-effort: %s has no extended thinking (it is "
			 "Anthropic's reasoning setting; claude-3-7-sonnet and the claude-4 models have it): leave the "
			 "setting out", cfg->model ? cfg->model : "the model");
	} else if (!isnan(cfg->temperature) && cfg->temperature >= 0 && cfg->temperature != 1) {
		snprintf(out->refusal, sizeof(out->refusal), "--reasoning-effort with --temperature %g: Anthropic's "
			 "extended thinking takes no temperature but 1; leave one of them out", cfg->temperature);
	} else {
		out->thinking_budget = budget;
		out->temperature = NOT_SENT;
		add_source(out, "setting reasoning_effort (extended thinking)");
	}
}

void llm_rules_for(const struct config *cfg, struct llm_rules *out)
{
	const struct rule_row *row = NULL;
	const char *model = cfg->model ? cfg->model : "", *prefix = NULL;
	const json_t *user, *v;
	size_t best = 0;
	int reasoning;

	for (size_t i = 0; i < sizeof(builtin_rules) / sizeof(builtin_rules[0]); i++) {
		const struct rule_row *r = &builtin_rules[i];
		size_t n = strlen(r->prefix);
		if (!strcmp(r->provider, cfg->provider) && (!row || n > best) && !strncmp(model, r->prefix, n)) {
			row = r;
			best = n;
		}
	}
	/* config.c admits only the two providers, each with a default row. */
	memset(out, 0, sizeof(*out));
	out->family = row ? row->family : "unknown provider";
	out->token_field = row ? row->token_field : "max_tokens";
	out->temperature = row ? row->temperature : LLM_DEFAULT_TEMPERATURE;
	out->max_output = row ? row->max_output : 0;
	out->cache_min_tokens = row ? row->cache_min : 0;
	reasoning = row && row->reasoning;
	snprintf(out->source, sizeof(out->source), "built-in");

	user = config_rule(cfg, best, &prefix);
	if (user) {
		char what[120];
		if ((v = json_object_get(user, "token_field")))
			out->token_field = json_string_value(v);
		if ((v = json_object_get(user, "temperature")))
			out->temperature = json_is_null(v) ? NOT_SENT : json_number_value(v);
		if ((v = json_object_get(user, "reasoning_effort"))) {
			out->reasoning_effort = json_string_value(v);
			reasoning = !json_is_null(v);
		}
		if ((v = json_object_get(user, "max_output")))
			out->max_output = (long)json_integer_value(v);
		snprintf(what, sizeof(what), "config request_rules '%.80s'", prefix);
		add_source(out, what);
	}
	if (cfg->token_field) {
		out->token_field = cfg->token_field;
		add_source(out, "setting token_field");
	}
	if (!isnan(cfg->temperature)) {
		out->temperature = cfg->temperature < 0 ? NOT_SENT : cfg->temperature;
		add_source(out, "setting temperature");
	}
	/* A reasoning effort goes only to a family that takes one (or one the
	 * config file's rules say takes it); an OpenAI-compatible model that
	 * takes none is sent none. Anthropic's is extended thinking: a budget
	 * of tokens, and no temperature but its default. */
	if (cfg->reasoning_effort && reasoning && strcmp(cfg->provider, "anthropic")) {
		out->reasoning_effort = cfg->reasoning_effort;
		add_source(out, "setting reasoning_effort");
	}
	if (cfg->reasoning_effort && !effort_budget(cfg->reasoning_effort)) {
		/* Refused for every provider and model, whether or not it would be
		 * sent: a value the API does not document is a typo to say now. */
		snprintf(out->refusal, sizeof(out->refusal), "--reasoning-effort '%.40s' is not one of minimal, low, "
			 "medium, high%s", cfg->reasoning_effort, strcmp(cfg->provider, "anthropic") ? "" :
			 " (for Anthropic, a thinking budget of 1024, 4096, 12288 or 24576 tokens)");
	} else if (out->reasoning_effort && !effort_budget(out->reasoning_effort)) {
		snprintf(out->refusal, sizeof(out->refusal), "request_rules '%.80s': reasoning_effort '%.40s' is not one of "
			 "minimal, low, medium, high", prefix ? prefix : "?", out->reasoning_effort);
	} else if (cfg->reasoning_effort && !strcmp(cfg->provider, "anthropic")) {
		thinking_rules(cfg, reasoning, out);
	}
	/* The Messages API has one output-limit field, whatever a rule says. */
	if (!strcmp(cfg->provider, "anthropic"))
		out->token_field = "max_tokens";
}
