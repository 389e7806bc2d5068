/* stop.h: why a task ended before its end, as one record (cause, reason, awaited key), and what follows from it. */
#ifndef EGG_STOP_H
#define EGG_STOP_H

#include <jansson.h>

#include "../store/store.h"

/*
 * Why a task ended before its end: one cause. Each has the name records
 * carry ("stop_cause"), the task status it gives (a stop is "stopped": the
 * same command again goes on; a wait is "waiting"; a spent budget is the
 * task's result, "done"; a bad task "failed") and its rank in the join
 * rule (stop_join).
 */
enum stop_cause {
	STOP_NONE,		/* it ran to its end */
	STOP_BUDGET,		/* a token or cost budget was spent */
	STOP_LLM,		/* the LLM failed after its retries */
	STOP_KEY,		/* the LLM endpoint refused the API key (a key revoked mid-run) */
	STOP_WORKER,		/* the evaluator failed (infrastructure) */
	STOP_NO_MEMORY,		/* an evaluation its device's memory cannot hold */
	STOP_STORE,		/* the run store (its database or the run folder) refused a write */
	STOP_WAITING,		/* a reply is awaited in the --llm-spool folder */
	STOP_INPUT,		/* the task itself is unusable (unreadable, malformed): it failed */
	STOP_EGG,		/* egg's own code failed (its candidate table full, say) */
	STOP_CAUSE_COUNT
};

/*
 * A task's stop: one value, written whole by stop_set and taken whole by
 * stop_join, never assembled from pieces of two records. The reason is
 * words for people (nothing decides on it); the key is set only for a wait.
 * A kernel found or not, and the speed-of-light note, are not stops: they
 * are the task's result (pipeline_result's found and sol_stop).
 */
struct stop {
	enum stop_cause cause;	/* STOP_NONE: the task ran to its end */
	char reason[512];	/* why, or "" with STOP_NONE */
	char pending_key[65];	/* STOP_WAITING: the awaited request's key, else "" */
};
#define STOP_INIT { STOP_NONE, "", "" }

/* Sets the whole record: `cause`, the reason from `fmt`, and `pending_key`
 * (kept only for STOP_WAITING; may be NULL). STOP_NONE clears it. */
void stop_set(struct stop *s, enum stop_cause cause, const char *pending_key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * The join rule: when a task's branches (or one branch's successive
 * failures) stopped for several causes, the task keeps the record whose
 * cause says most about what must happen next: egg's own failure, then a
 * bad task, then a wait (answer the reply, then the task goes on), then an
 * infrastructure stop (run it again), then a spent budget. Of two of the
 * same rank, the first stays. stop_join copies `from` whole into `into`
 * when it outranks it; 1 when it did.
 */
int stop_join(struct stop *into, const struct stop *from);

/* "budget", "llm", "key", "worker", "memory", "store", "waiting", "input", "egg";
 * NULL for STOP_NONE. */
const char *stop_cause_name(enum stop_cause c);
/* The cause a name stands for; STOP_NONE for NULL or an unknown name. */
enum stop_cause stop_cause_of(const char *name);
/* The task status the stop gives its task: done (none, a budget), waiting,
 * failed (a bad task) or stopped (every infrastructure cause, egg's own). */
enum task_status stop_task_status(const struct stop *s);
/* The records' "error_kind": "", "budget", "input" or "infra". */
const char *stop_error_kind(const struct stop *s);

/* Writes the record into a task's result: "stop_cause" (null with none),
 * "stop_reason" (null with none), "pending_key" (a wait only), and what is
 * derived from it, "status" and "error_kind". */
void stop_write(const struct stop *s, json_t *result);
/* Reads a stored result's record into *s, for records of every egg:
 * "stop_cause" when present, else the status and error kind of an older
 * one (a stopped task that named no cause reads as the worker's, the
 * generic infrastructure stop). A reason beside no stop (an older record's
 * speed-of-light note or "no valid kernel") is not a stop's and is left out. */
void stop_read(const json_t *result, struct stop *s);

#endif
