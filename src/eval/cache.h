/* cache.h: the one evaluation cache: baselines, verdicts and profiles, each entry authenticated. */
#ifndef EGG_EVAL_CACHE_H
#define EGG_EVAL_CACHE_H

#include <jansson.h>

/*
 * Entries are JSON files DIR/KIND-KEY.json. KEY hashes everything that can
 * change the result (evaluation_key below). Each entry carries "mac", an
 * HMAC-SHA-256 of its canonical text under a key that egg keeps in
 * DIR/.mac-key (created on first use, readable by egg's user only; the
 * folder is hidden from candidates by their sandbox). An entry whose MAC
 * does not match, as a verdict forged by someone who could write the
 * folder would, is ignored and counted. Thread-safe.
 */
struct evcache;

/* Opens (creating) DIR and its key. NULL with ERR_INFRA when it cannot. */
struct evcache *evcache_open(const char *dir);
void evcache_free(struct evcache *c);
/* The entry, or NULL when there is none or it fails its MAC. Owned. */
json_t *evcache_get(struct evcache *c, const char *kind, const char key[65]);
/* Stores `value` (a JSON object; its "mac" member is replaced). A failure
 * to write never fails the caller. */
void evcache_put(struct evcache *c, const char *kind, const char key[65], const json_t *value);
/* How many entries were ignored for a MAC that did not match. */
long evcache_rejected(struct evcache *c);
/* Closes the cache, first saying on stderr how many entries were ignored
 * for a MAC that did not match (and were measured again), if any. */
void evcache_close(struct evcache *c);

#endif
