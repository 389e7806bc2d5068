/* kept.h: a server's refusals adapted to, kept in the store so that the next run starts adapted. */
#ifndef EGG_KEPT_H
#define EGG_KEPT_H

#include <jansson.h>

/*
 * When a server refuses a parameter for a model egg's rules do not know
 * (llm.c, adapt), the change is kept in STORE/llm-adapted.json under the
 * endpoint and the model ("URL model": {"token_field": ..., "temperature":
 * false, "reasoning_effort": false, "thinking": false, "cache_control":
 * false, "stream": false, "stream_options": false, "max_output": N}), so
 * that every later process starts with it instead of paying the same
 * refusal again. The file is small and rewritten whole (atomically); two
 * runs adapting at once may lose one's change, which the next refusal
 * writes again.
 */

/* The kept changes for the endpoint and model (owned), or NULL. */
json_t *kept_load(const char *store, const char *endpoint, const char *model);
/* Merges `changes` into what is kept for the endpoint and model. 0, or -1
 * (nothing kept: the run goes on, adapted in this process only). */
int kept_save(const char *store, const char *endpoint, const char *model, const json_t *changes);

#endif
