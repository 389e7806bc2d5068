/* spool.h: the reply spool: LLM requests written to a folder, replies read back from it. */
#ifndef EGG_SPOOL_H
#define EGG_SPOOL_H

#include <jansson.h>

#include "../config/config.h"

/*
 * For machines that cannot reach an LLM, replies written by a person or
 * another tool, and exact reproduction of a run. A request is named by its
 * reply-cache key (64 hex digits):
 *
 *   DIR/pending/KEY.json   written by egg: {"key", "provider", "model",
 *                          "max_tokens", "temperature", "messages":
 *                          [{"role", "content"}], "context": {task, agent,
 *                          stage, candidate, call}}
 *   DIR/replies/KEY.txt    the reply text, as the model would return it
 *   DIR/replies/KEY.json   or {"content": "...", "usage": {"prompt_tokens":
 *                          N, "completion_tokens": N}, "model": "...",
 *                          "finish_reason": "stop"|"length"} (all but
 *                          content optional)
 *
 * A reply read back goes into the reply cache and its pending file is
 * removed; a .txt reply's token counts are estimated (4 characters a token).
 */

struct spool_reply {
	char *content;		/* owned */
	char *model;		/* owned, or NULL */
	char *finish_reason;	/* owned */
	long prompt_tokens, completion_tokens;
	int estimated;		/* token counts estimated, not reported */
};

/* Reads the reply for `key`: 0 with `out` filled, 1 when there is none yet,
 * -1 with ERR_INPUT when the reply file is unusable. */
int spool_take(const char *dir, const char *key, size_t prompt_chars, struct spool_reply *out);
void spool_reply_clear(struct spool_reply *r);
/* Writes DIR/pending/KEY.json (unless it is there); temperature < 0: not
 * sent (null in the file). 0, or -1 with ERR_INFRA. */
int spool_post(const char *dir, const char *key, const struct config *cfg, double temperature, const char *system,
	       const char *user, long max_tokens, const json_t *context);
/* Removes DIR/pending/KEY.json once its reply was used. */
void spool_done(const char *dir, const char *key);
/* The keys pending in DIR (sorted), as a JSON array (owned). */
json_t *spool_pending(const char *dir);

#endif
