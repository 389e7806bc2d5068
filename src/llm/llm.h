/* llm.h: a thread-safe LLM client: retries, deadlines, reply cache, usage and cost. */
#ifndef EGG_LLM_H
#define EGG_LLM_H

#include "../config/config.h"
#include "provider.h"
#include "rules.h"

#include <jansson.h>

/*
 * One struct llm serves many threads at once: each call uses its own curl
 * handle. It counts nothing: a call's usage is in its llm_result, and the
 * agents count it (agents.c, account). The client borrows `cfg` (which must
 * outlive it) for provider, URL, model, key, limits and prices.
 */
struct llm;

struct llm_request {
	const char *system;	/* may be NULL */
	const char *user;
	int sample;		/* distinguishes deliberate re-asks in the cache key */
	long max_tokens;	/* 0: the configured default */
	const json_t *context;	/* who asks (task, agent, stage, candidate, call), for the spool; may be NULL */
};

struct llm_result {
	char *content;		/* owned; "" when the reply had no text */
	char *finish_reason;	/* owned; "stop", "length", ... or NULL */
	char *model;		/* owned; the model the server named, or NULL */
	long prompt_tokens;	/* every input token, cached ones included */
	long completion_tokens;	/* every output token, reasoning ones included */
	long cached_prompt_tokens;	/* of prompt_tokens, read from the provider's prompt cache */
	long reasoning_tokens;	/* of completion_tokens, spent on hidden reasoning */
	long cache_write_tokens;	/* of prompt_tokens, written to the provider's prompt cache */
	int usage_estimated;	/* the server reported no usage: 4 characters a token */
	long max_tokens;	/* the answer's output limit the request was sent with */
	long sent_max_tokens;	/* the body's output limit: with extended thinking, the answer's and the budget */
	long thinking_budget;	/* Anthropic's extended thinking: the budget sent; 0: none */
	char *adapted;		/* owned, or NULL: how this call changed the request on the server's word */
	char *partial;		/* owned, or NULL: on failure, the text of a reply cut off in transit */
	double latency_ms;	/* the whole call, its failed attempts and retry waits included; 0 for a cache hit */
	int attempts;		/* HTTP attempts made (0 for a cache hit) */
	int cached;
	int truncated;		/* cut off by the output limit */
	int spooled;		/* the reply came from the --llm-spool folder (in a spool run, also
				 * when read back from the reply cache) */
	double cost_usd;	/* of this call; < 0 when the model has no price, and for a reply
				 * from the spool (written elsewhere: not priced as the model's) */
	double cache_saved_usd;	/* what the prompt cache saved on this call (llm_price) */
	char cache_key[65];
};

/* Returns a client, or NULL with ERR_INPUT when the model is missing or a
 * remote endpoint has no API key, ERR_INFRA when the endpoint's host does not
 * resolve (checked up front, before any work; not with cfg->llm_spool). With
 * `use_cache`, replies are read from and written to cfg->cache_dir. */
struct llm *llm_new(const struct config *cfg, int use_cache);
/* Whether the endpoint takes a connection now (TCP and TLS); -1 with
 * ERR_INFRA, one line naming the base URL, when it does not. Then whether
 * it takes the key: the models list is asked for with the request's
 * credentials (a GET, no tokens: nothing paid), and a 401 or 403 is -1 with
 * ERR_INPUT naming the key's variables; any other answer leaves it to the
 * first request. A run calls it before its first baseline, so that an
 * unreachable server or a missing or refused key is said first and at once
 * (not with cfg->llm_spool, which never uses the network). */
int llm_check_reachable(const struct llm *c);
/* Retries that wait (2 s or more, or a call silent that long) print one line
 * each on stderr, naming the attempt, the cause and the wait; quiet: none. */
void llm_set_quiet(struct llm *c, int quiet);
/* on: a call that lasts prints a line on stderr every 10 s while it waits
 * ("egg: LLM call to MODEL, 20 s: waiting for the reply (N bytes so far)"):
 * one task's run (egg optimize), whose lines are its only progress. */
void llm_set_wait_notices(struct llm *c, int on);
/* The largest output limit a retry may ask for: the model family's
 * published one or what the server said it accepts; 0 when not known. */
long llm_output_ceiling(struct llm *c);
/* Whether the URL's host is this machine (localhost, 127.x, ::1). */
int llm_url_is_local(const char *url);
/*
 * One call with retries. Returns 0 with `res` filled (a truncated reply is
 * still 0, with res->truncated set), or -1 with ERR_INFRA: unreachable or
 * failing after retries, a non-retryable status (400/404: the server's
 * message, redacted), a deadline, or a body that is not the expected JSON;
 * or -1 with ERR_INPUT when the server refused the key, or the request
 * that carried none (401/403: the message names the key's variables). The request follows the model's rules (rules.h); a 400
 * that names a parameter egg sent as unsupported (or an output limit above
 * the most the server accepts) changes that parameter, once per client,
 * says so once on stderr and in res->adapted, and is sent again at once;
 * the cache key is the one of the request before any change. Replies are
 * streamed (cfg->stream), so the stall timeout measures silence: a stream
 * cut off is retried, and what arrived is in res->partial when the call
 * fails. With cfg->llm_spool the network is never used: a request
 * without a cached or spooled reply is written to the spool and the call
 * returns -1 with ERR_WAITING (res->cache_key names it); see spool.h.
 */
int llm_call(struct llm *c, const struct llm_request *req, struct llm_result *res);
void llm_result_clear(struct llm_result *res);
void llm_free(struct llm *c);

/*
 * What a request with the configured output limit carries when egg sends
 * one now, made by the function that builds every request's body: the
 * model's rules (rules.refusal says why they cannot be sent), changed by
 * what earlier runs adapted to (kept.h), the output limit within the most
 * the server takes and, with extended thinking, the budget beside it.
 * Nothing is sent or checked on the network; egg doctor shows it. Strings
 * are borrowed from the rules' table or from `cfg`.
 */
struct llm_plan {
	struct llm_rules rules;
	const char *token_field;
	long max_tokens;		/* the body's: with extended thinking, the answer's and the budget */
	double temperature;		/* < 0: not sent */
	const char *reasoning_effort;	/* NULL: not sent */
	long thinking_budget;		/* 0: no extended thinking */
	int stream;
	int cache_prefix;		/* Anthropic: the system text marked for the prompt cache */
	char dropped[300];		/* what the kept adaptations leave out of the rules' request, or "" */
};
void llm_plan(const struct config *cfg, struct llm_plan *out);

/* A call's token counts, as llm_price reads them. */
struct llm_tokens {
	long prompt_tokens;		/* every input token */
	long cached_prompt_tokens;	/* of them, read from the prompt cache */
	long cache_write_tokens;	/* of them, written to the prompt cache */
	long completion_tokens;		/* every output token, reasoning included */
};

/* Price of a call in USD from the built-in table and the config's
 * "prices" ({"PREFIX": {"input", "output", "cached_input",
 * "cache_write_input"}}, USD per million tokens); < 0 when unknown. Longest
 * model-name prefix wins. Cached prompt tokens cost the cached-input price
 * (the input price where none is known), cache writes the cache-write price
 * (Anthropic: 1.25 times input), reasoning tokens are output. `saved_usd`
 * (may be NULL): what the prompt cache saved on this call against the
 * plain input price, negative when its writes cost more than its reads
 * saved. */
double llm_price(const struct config *cfg, const char *model, const struct llm_tokens *t, double *saved_usd);

/* Parses a Retry-After value (seconds or HTTP-date); -1 when unusable. */
double llm_parse_retry_after(const char *value);

#endif
