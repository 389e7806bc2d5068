/* prices.c: what a call cost: list prices per model prefix, extended by the config file's "prices". */
#include "llm.h"

#include <string.h>

/* USD per million tokens (input, output): list prices at the time of writing;
 * extend or override with "prices" in the config file. */
static const struct { const char *prefix; double in, out; } builtin_prices[] = {
	{ "gpt-5.1", 1.25, 10.0 },
	{ "gpt-5", 1.25, 10.0 },
	{ "gpt-5-mini", 0.25, 2.0 },
	{ "gpt-5-nano", 0.05, 0.4 },
	{ "gpt-4.1", 2.0, 8.0 },
	{ "gpt-4.1-mini", 0.4, 1.6 },
	{ "gpt-4o", 2.5, 10.0 },
	{ "gpt-4o-mini", 0.15, 0.6 },
	{ "o3", 2.0, 8.0 },
	{ "o4-mini", 1.1, 4.4 },
	{ "claude-opus-4", 15.0, 75.0 },
	{ "claude-opus-4-5", 5.0, 25.0 },
	{ "claude-sonnet-4", 3.0, 15.0 },
	{ "claude-haiku-4-5", 1.0, 5.0 },
	{ "deepseek-chat", 0.28, 0.42 },
	{ "deepseek-reasoner", 0.28, 0.42 },
};

double llm_price(const struct config *cfg, const char *model, long prompt_tokens,
		 long completion_tokens)
{
	size_t best = 0;
	double in = -1, out = -1;
	const char *key;
	json_t *v;

	if (!model)
		return -1;
	for (size_t i = 0; i < sizeof(builtin_prices) / sizeof(builtin_prices[0]); i++) {
		size_t n = strlen(builtin_prices[i].prefix);
		if (n > best && !strncmp(model, builtin_prices[i].prefix, n)) {
			best = n;
			in = builtin_prices[i].in;
			out = builtin_prices[i].out;
		}
	}
	if (cfg->prices) {
		/* The user's table wins over the built-in one on equal or longer prefixes. */
		json_object_foreach(cfg->prices, key, v) {
			size_t n = strlen(key);
			if (n >= best && !strncmp(model, key, n)) {
				best = n;
				in = json_number_value(json_object_get(v, "input"));
				out = json_number_value(json_object_get(v, "output"));
			}
		}
	}
	if (!best)
		return -1;
	return ((double)prompt_tokens * in + (double)completion_tokens * out) / 1e6;
}
