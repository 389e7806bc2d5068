/* prices.c: what a call cost: list prices per model prefix, extended by the config file's "prices". */
#include "llm.h"

#include <string.h>

/* USD per million tokens (input, cached input, output): list prices at the
 * time of writing; extend or override with "prices" in the config file.
 * Cached input is what a prompt-cache hit costs (Anthropic: a cache read).
 * Writing the cache costs more than plain input on Anthropic (1.25 times,
 * for the five-minute cache egg asks for); OpenAI's automatic cache writes
 * at the input price. */
#define ANTHROPIC_CACHE_WRITE 1.25

static const struct { const char *prefix; double in, cached, out; } builtin_prices[] = {
	{ "gpt-5.1", 1.25, 0.125, 10.0 },
	{ "gpt-5", 1.25, 0.125, 10.0 },
	{ "gpt-5-mini", 0.25, 0.025, 2.0 },
	{ "gpt-5-nano", 0.05, 0.005, 0.4 },
	{ "gpt-4.1", 2.0, 0.5, 8.0 },
	{ "gpt-4.1-mini", 0.4, 0.1, 1.6 },
	{ "gpt-4o", 2.5, 1.25, 10.0 },
	{ "gpt-4o-mini", 0.15, 0.075, 0.6 },
	{ "o3", 2.0, 0.5, 8.0 },
	{ "o4-mini", 1.1, 0.275, 4.4 },
	{ "claude-opus-4", 15.0, 1.5, 75.0 },
	{ "claude-opus-4-5", 5.0, 0.5, 25.0 },
	{ "claude-sonnet-4", 3.0, 0.3, 15.0 },
	{ "claude-haiku-4-5", 1.0, 0.1, 5.0 },
	{ "claude-3-7-sonnet", 3.0, 0.3, 15.0 },
	{ "claude-3-5-sonnet", 3.0, 0.3, 15.0 },
	{ "claude-3-5-haiku", 0.8, 0.08, 4.0 },
	{ "claude-3-opus", 15.0, 1.5, 75.0 },
	{ "claude-3-haiku", 0.25, 0.03, 1.25 },
	{ "deepseek-chat", 0.28, 0.028, 0.42 },
	{ "deepseek-reasoner", 0.28, 0.028, 0.42 },
};

static void clamp(long *v, long hi)
{
	if (*v > hi)
		*v = hi;
	if (*v < 0)
		*v = 0;
}

double llm_price(const struct config *cfg, const char *model, const struct llm_tokens *t, double *saved_usd)
{
	size_t best = 0;
	double in = -1, out = -1, cached = -1, write = -1;
	long read, written;
	const char *key;
	json_t *v;

	if (saved_usd)
		*saved_usd = 0;
	if (!model)
		return -1;
	for (size_t i = 0; i < sizeof(builtin_prices) / sizeof(builtin_prices[0]); i++) {
		size_t n = strlen(builtin_prices[i].prefix);
		if (n > best && !strncmp(model, builtin_prices[i].prefix, n)) {
			best = n;
			in = builtin_prices[i].in;
			cached = builtin_prices[i].cached;
			out = builtin_prices[i].out;
			write = !strncmp(model, "claude", 6) ? in * ANTHROPIC_CACHE_WRITE : in;
		}
	}
	if (cfg->prices) {
		/* The user's table wins over the built-in one on equal or longer prefixes. */
		json_object_foreach(cfg->prices, key, v) {
			size_t n = strlen(key);
			if (n >= best && !strncmp(model, key, n)) {
				json_t *c = json_object_get(v, "cached_input"), *w = json_object_get(v, "cache_write_input");
				best = n;
				in = json_number_value(json_object_get(v, "input"));
				out = json_number_value(json_object_get(v, "output"));
				cached = c ? json_number_value(c) : in;
				write = w ? json_number_value(w) : in;
			}
		}
	}
	if (!best)
		return -1;
	read = t->cached_prompt_tokens;
	clamp(&read, t->prompt_tokens);
	written = t->cache_write_tokens;
	clamp(&written, t->prompt_tokens - read);
	/* What the cache saved: the same prompt at the plain input price, less
	 * what its reads and writes cost instead (negative on a call that only
	 * wrote the cache). */
	if (saved_usd)
		*saved_usd = ((double)read * (in - cached) - (double)written * (write - in)) / 1e6;
	return ((double)(t->prompt_tokens - read - written) * in + (double)read * cached + (double)written * write +
		(double)t->completion_tokens * out) / 1e6;
}
