/* rules.h: what egg sends to each provider and model family: the output limit's field, temperature, reasoning effort. */
#ifndef EGG_RULES_H
#define EGG_RULES_H

#include "../config/config.h"

/*
 * Providers differ in what a request may carry, and so do model families of
 * one provider: OpenAI's reasoning models (gpt-5*, o1*, o3*, o4*) refuse
 * `max_tokens` (they take `max_completion_tokens`) and any temperature but
 * their default, other OpenAI-compatible servers take both, and Anthropic's
 * Messages API requires `max_tokens`. One table in rules.c says it per
 * provider and model-name prefix (the longest prefix wins); the config file's
 * "request_rules" ({"PREFIX": {"token_field", "temperature",
 * "reasoning_effort", "max_output"}}, null for "not sent") overrides any field
 * of it on an equal or longer prefix, and the settings token_field,
 * temperature and reasoning_effort, when set, override both. For Anthropic,
 * reasoning_effort is extended thinking (a thinking budget, no temperature);
 * asked of a model without it, `refusal` says why it cannot be sent.
 *
 * Strings are borrowed from the table or from `cfg` and live as long as it.
 */
struct llm_rules {
	const char *family;		/* the built-in row that matched, in words */
	const char *token_field;	/* "max_tokens" or "max_completion_tokens" */
	double temperature;		/* < 0: not sent */
	const char *reasoning_effort;	/* NULL: not sent */
	long max_output;		/* the family's largest output limit; 0 when not known */
	long cache_min_tokens;		/* the least prefix the provider's prompt cache keeps; 0 when not known */
	long thinking_budget;		/* Anthropic's extended thinking: its budget of tokens; 0: off */
	char refusal[300];		/* "" or why these settings cannot be sent to this model (exit 2) */
	char source[200];		/* "built-in", then what changed it: "config request_rules 'gpt-5'", ... */
};

/* The rules for cfg's provider and model. */
void llm_rules_for(const struct config *cfg, struct llm_rules *out);

/* The temperature egg sends to a model that takes one, unless told otherwise. */
#define LLM_DEFAULT_TEMPERATURE 0.7

#endif
