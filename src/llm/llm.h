/* llm.h: a thread-safe LLM client: retries, deadlines, reply cache, usage and cost. */
#ifndef EGG_LLM_H
#define EGG_LLM_H

#include "../config/config.h"
#include "provider.h"

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
	long prompt_tokens;
	long completion_tokens;
	double latency_ms;	/* of the successful attempt; 0 for a cache hit */
	int attempts;		/* HTTP attempts made (0 for a cache hit) */
	int cached;
	int truncated;		/* cut off by the output limit */
	int spooled;		/* the reply came from the --llm-spool folder */
	double cost_usd;	/* of this call; < 0 when the model has no price */
	char cache_key[65];
};

/* Returns a client, or NULL with ERR_INPUT when the model is missing or a
 * remote endpoint has no API key, ERR_INFRA when the endpoint's host does not
 * resolve (checked up front, before any work; not with cfg->llm_spool). With
 * `use_cache`, replies are read from and written to cfg->cache_dir. */
struct llm *llm_new(const struct config *cfg, int use_cache);
/* Retries that wait (2 s or more, or a call silent that long) print one line
 * each on stderr, naming the attempt, the cause and the wait; quiet: none. */
void llm_set_quiet(struct llm *c, int quiet);
/* Whether the URL's host is this machine (localhost, 127.x, ::1). */
int llm_url_is_local(const char *url);
/*
 * One call with retries. Returns 0 with `res` filled (a truncated reply is
 * still 0, with res->truncated set), or -1 with ERR_INFRA: unreachable or
 * failing after retries, a non-retryable status (400/401/403/404: the
 * server's message, redacted), a deadline, or a body that is not the
 * expected JSON. With cfg->llm_spool the network is never used: a request
 * without a cached or spooled reply is written to the spool and the call
 * returns -1 with ERR_WAITING (res->cache_key names it); see spool.h.
 */
int llm_call(struct llm *c, const struct llm_request *req, struct llm_result *res);
void llm_result_clear(struct llm_result *res);
void llm_free(struct llm *c);

/* Price of a call in USD from the built-in table and the config's
 * "prices"; < 0 when unknown. Longest model-name prefix wins. */
double llm_price(const struct config *cfg, const char *model, long prompt_tokens,
		 long completion_tokens);

/* Parses a Retry-After value (seconds or HTTP-date); -1 when unusable. */
double llm_parse_retry_after(const char *value);

#endif
