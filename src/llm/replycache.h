/* replycache.h: the reply cache under cfg->cache_dir: a reply is found again
 * by what was asked (provider, model, messages, temperature, output limit,
 * sample number, token field, reasoning effort), never by the endpoint's URL, so a resumed run
 * pays for no call twice. */
#ifndef EGG_REPLYCACHE_H
#define EGG_REPLYCACHE_H

#include "llm.h"

/* The request's content address (64 hex digits and a NUL), from what the
 * model's rules ask for (temperature, token field, reasoning effort). */
void replycache_key(const struct config *cfg, const struct llm_rules *rules, const struct llm_request *req,
		    long max_tokens, char key[65]);
/* Fills res's content, finish reason, model and tokens from the cache: 0,
 * or -1 when there is no usable entry. */
int replycache_read(const char *cache_dir, const char key[65], struct llm_result *res);
/* Stores a reply; a failure never fails the call (the reply is in hand). */
void replycache_write(const char *cache_dir, const char key[65], const struct llm_result *res);

#endif
