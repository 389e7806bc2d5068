/* provider.h: the wire formats of the two LLM protocols (request bodies, replies whole or streamed, refusals). */
#ifndef EGG_PROVIDER_H
#define EGG_PROVIDER_H

#include <stddef.h>

#include "../util/buf.h"

enum llm_provider { LLM_OPENAI, LLM_ANTHROPIC };

/* What goes into a request body (strings borrowed). */
struct provider_request {
	const char *model;
	const char *system;		/* may be NULL */
	const char *user;
	long max_tokens;
	const char *token_field;	/* openai: the output limit's field; anthropic always sends max_tokens */
	double temperature;		/* < 0: not sent */
	const char *reasoning_effort;	/* openai: NULL for not sent; anthropic: never sent */
	long thinking_budget;		/* anthropic: extended thinking's budget (0: off); openai: never sent */
	int cache_prefix;		/* anthropic: mark the system text as the prompt cache's prefix */
	int stream;			/* ask for server-sent events */
	int stream_usage;		/* openai, streamed: ask for the usage in the last chunk (stream_options) */
};

/* What a reply says, normalised across providers. finish_reason is "stop",
 * "length" (cut off by the output limit) or the provider's own word.
 * prompt_tokens counts every input token, cached_prompt_tokens those of them
 * read from the provider's prompt cache; completion_tokens counts every
 * output token, reasoning_tokens those of them the model spent on hidden
 * reasoning. Strings are owned; provider_reply_clear frees them. */
struct provider_reply {
	char *content;
	char *finish_reason;
	char *model;
	long prompt_tokens;
	long completion_tokens;
	long cached_prompt_tokens;
	long reasoning_tokens;
	long cache_write_tokens;	/* of prompt_tokens, written to the prompt cache (Anthropic's cache creation) */
	int usage_seen;			/* the reply reported its usage */
};

/* Builds the JSON request body (owned). */
char *provider_request_body(enum llm_provider p, const struct provider_request *r);

/* Parses a whole 2xx reply body. Returns 0, or -1 with a reason in `why`
 * ("not valid JSON", "no choices", ...). Never crashes on any input. */
int provider_parse_reply(enum llm_provider p, const char *body, size_t len,
			 struct provider_reply *out, char *why, size_t why_len);

/*
 * Parses a streamed reply: server-sent events (OpenAI's chunks ending in
 * `data: [DONE]`, Anthropic's message events ending in message_stop), or a
 * plain JSON body from a server that did not stream. Returns 0 for a
 * complete reply; 1 for one that stopped before its end (`out` holds the
 * text that arrived, `why` says so); -1 with `why` for an error event or a
 * body with nothing usable. `out` is filled in every case and must be
 * cleared. Never crashes on any input.
 */
int provider_parse_stream(enum llm_provider p, const char *body, size_t len,
			  struct provider_reply *out, char *why, size_t why_len);

/* Extracts the server's error message from an error body (JSON
 * error.message or message, else the start of the body, one line). */
void provider_error_message(const char *body, size_t len, struct buf *out);

/*
 * What a refusal (an HTTP 400 body) says about one request parameter: the
 * parameter it names (OpenAI's error.param, else a known parameter quoted in
 * the message), whether the parameter or its value is not supported
 * (OpenAI's codes unsupported_parameter and unsupported_value, or the
 * message's words), and the largest value the server states it accepts
 * ("at most N", "> N, which is the maximum"), or 0. Returns 1 when a known
 * parameter is named, else 0.
 */
struct provider_refusal {
	char param[48];
	int unsupported;
	long stated_max;
};
int provider_refusal(const char *body, size_t len, struct provider_refusal *out);

void provider_reply_clear(struct provider_reply *r);

#endif
