/* store.h: the run store: one SQLite database (WAL, transactions, versioned schema). */
#ifndef EGG_STORE_H
#define EGG_STORE_H

#include <jansson.h>

/*
 * One struct store per process, shared by threads (SQLite serialized mode,
 * every write in a transaction, a busy timeout for concurrent processes).
 * Strings passed in are copied; JSON passed in is borrowed.
 */
struct store;

#define STORE_SCHEMA_VERSION 3

/* A task's state: the tasks table's status column, and the reports'. */
enum task_status {
	TASK_PENDING,	/* registered, not started (or egg died while it ran) */
	TASK_RUNNING,
	TASK_DONE,	/* finished: a kernel found, or none and why (its stop_reason) */
	TASK_FAILED,	/* finished without a pipeline: the task itself is unusable (error_kind "input") */
	TASK_WAITING,	/* not finished: it waits for replies in the --llm-spool folder */
	TASK_STOPPED,	/* not finished: an infrastructure failure stopped it (error_kind "infra") */
};
/* "pending", "running", "done", "failed", "waiting", "stopped". */
const char *task_status_name(enum task_status st);
/* The state a name stands for; TASK_PENDING for an unknown one. */
enum task_status task_status_of(const char *name);
/* Finished with a verdict (done or failed): what success rates count. A
 * waiting or stopped task is not finished and counts in no rate. */
int task_status_judged(enum task_status st);

/*
 * Errors. Every write returns 0 or -1 with ERR_INFRA (a transaction whose
 * COMMIT fails is rolled back and fails); every read returns NULL with
 * ERR_INFRA when the store cannot be read (a corrupted file, an I/O error),
 * never an empty result. Messages name the store's file.
 */

/* Opens (creating and migrating) DIR/egg.db. NULL with ERR_INFRA. */
struct store *store_open(const char *dir);
/* Whether `dir` holds a store (its egg.db): read-only commands (egg runs,
 * egg report) open only a store that exists, and create nothing. */
int store_exists(const char *dir);
void store_close(struct store *s);
int store_schema_version(struct store *s);
/* DIR/egg.db (borrowed). */
const char *store_path(const struct store *s);

/* Runs */
int store_run_create(struct store *s, const char *run_id, const char *command, json_t *config);
/*
 * Marks the run live for as long as this store is open: an exclusive flock
 * on DIR/runs/RUN/run.lock (it holds the holder's pid and host, for
 * messages), which the kernel releases however the process ends. Taken
 * before a run is created or resumed. 0, or -1: ERR_INPUT when another
 * process runs it now, ERR_INFRA when the lock cannot be made.
 */
int store_run_hold(struct store *s, const char *run_id);
/* Why a run recorded as running is read as stopped: nobody holds its lock. */
#define STORE_GONE_REASON "its egg process ended before the run finished (interrupted or killed)"
/* A run's status (running, done, waiting, stopped, refused: store_runs), and why it stopped or
 * was refused when no task says so (`stop_reason`, or NULL). */
int store_run_set_status(struct store *s, const char *run_id, const char *status, const char *stop_reason);
/* {id, created, command, status, config, finished, stop_reason} of the run `run_id` names: its
 * id, or the beginning of one run's id (every command taking a run id reads it here; callers go
 * on with the returned "id"). NULL with ERR_INPUT when unknown ("no run 'ID' in the store
 * 'PATH'", naming `egg runs`) or ambiguous (the newest few it fits), ERR_INFRA when unreadable.
 * A run recorded as running whose process is gone (no one holds its lock: store_run_hold) reads
 * "stopped", here and in store_runs, with STORE_GONE_REASON when no other reason was recorded. */
json_t *store_run_get(struct store *s, const char *run_id);
/* All runs, newest first: [{id, created, command, status, tasks, done, failed, waiting, stopped,
 * cost_usd}]. A run's status: running, done, waiting (a task waits for a reply), stopped (a task
 * stopped on an infrastructure failure, the run's own record could not be written, or its process
 * ended while it ran; resuming finishes it) or refused (it ended on its user's input, exit 2: its
 * stop_reason says what to fix; there is nothing to resume). NULL with ERR_INFRA when unreadable. */
json_t *store_runs(struct store *s);

/* Tasks of a run */
int store_task_add(struct store *s, const char *run_id, const char *task_id, const char *path,
		   const char *group, const char *source_hash);
/* Starting (or restarting after a crash) a task: deletes every row it left
 * behind and marks it running, in one transaction. */
int store_task_begin(struct store *s, const char *run_id, const char *task_id);
int store_task_finish(struct store *s, const char *run_id, const char *task_id, enum task_status status,
		      json_t *result);
/* [{task_id, path, group, status, result, started, finished}] in insertion order; NULL with ERR_INFRA. */
json_t *store_tasks(struct store *s, const char *run_id);

/* What a task's pipeline produced */
int store_add_call(struct store *s, const char *run_id, const char *task_id, json_t *call);
int store_add_candidate(struct store *s, const char *run_id, const char *task_id, const char *cand_id,
			const char *stage, const char *source, json_t *eval);
int store_add_profile(struct store *s, const char *run_id, const char *task_id, const char *cand_id,
		      json_t *profile);
int store_add_decision(struct store *s, const char *run_id, const char *task_id, json_t *decision);
int store_add_step(struct store *s, const char *run_id, const char *task_id, json_t *step);
/* Rows of one kind for a task, in order: "steps", "decisions", "calls", "candidates", "profiles";
 * NULL with ERR_INFRA. */
json_t *store_rows(struct store *s, const char *run_id, const char *task_id, const char *kind);

#endif
