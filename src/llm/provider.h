/* provider.h: the wire formats of the two LLM protocols (request bodies, reply parsing). */
#ifndef EGG_PROVIDER_H
#define EGG_PROVIDER_H

#include "../util/buf.h"

enum llm_provider { LLM_OPENAI, LLM_ANTHROPIC };

/* What a reply body says, normalised across providers. finish_reason is
 * "stop", "length" (cut off by the output limit) or the provider's own word.
 * Strings are owned by the struct; provider_reply_clear frees them. */
struct provider_reply {
	char *content;
	char *finish_reason;
	char *model;
	long prompt_tokens;
	long completion_tokens;
};

/* Builds the JSON request body. temperature < 0 means "not sent".
 * token_field is the openai body field for the output limit. */
char *provider_request_body(enum llm_provider p, const char *model,
			    const char *system, const char *user,
			    double temperature, long max_tokens,
			    const char *token_field);

/* Parses a 2xx reply body. Returns 0, or -1 with a reason in `why`
 * ("not valid JSON", "no choices", ...). Never crashes on any input. */
int provider_parse_reply(enum llm_provider p, const char *body, size_t len,
			 struct provider_reply *out, char *why, size_t why_len);

/* Extracts the server's error message from an error body (JSON
 * error.message or message, else the start of the body, one line). */
void provider_error_message(const char *body, size_t len, struct buf *out);

void provider_reply_clear(struct provider_reply *r);

#endif
