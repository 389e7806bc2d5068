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

#define STORE_SCHEMA_VERSION 1

/* Opens (creating and migrating) DIR/egg.db. NULL with ERR_INFRA. */
struct store *store_open(const char *dir);
void store_close(struct store *s);
int store_schema_version(struct store *s);

/* Runs */
int store_run_create(struct store *s, const char *run_id, const char *command, json_t *config);
int store_run_set_status(struct store *s, const char *run_id, const char *status);
/* {id, created, command, status, config, finished} or NULL when unknown. */
json_t *store_run_get(struct store *s, const char *run_id);
/* All runs, newest first: [{id, created, command, status, tasks, done, failed, cost_usd}] */
json_t *store_runs(struct store *s);

/* Tasks of a run */
int store_task_add(struct store *s, const char *run_id, const char *task_id, const char *path,
		   const char *group, const char *source_hash);
/* Starting (or restarting after a crash) a task: deletes every row it left
 * behind and marks it running, in one transaction. */
int store_task_begin(struct store *s, const char *run_id, const char *task_id);
int store_task_finish(struct store *s, const char *run_id, const char *task_id, const char *status,
		      json_t *result);
/* [{task_id, path, group, status, result, started, finished}] in insertion order. */
json_t *store_tasks(struct store *s, const char *run_id);

/* What a task's pipeline produced */
int store_add_call(struct store *s, const char *run_id, const char *task_id, json_t *call);
int store_add_candidate(struct store *s, const char *run_id, const char *task_id, const char *cand_id,
			const char *stage, const char *source, json_t *eval);
int store_add_profile(struct store *s, const char *run_id, const char *task_id, const char *cand_id,
		      json_t *profile);
int store_add_decision(struct store *s, const char *run_id, const char *task_id, json_t *decision);
int store_add_step(struct store *s, const char *run_id, const char *task_id, json_t *step);
/* Rows of one kind for a task, in order: "steps", "decisions", "calls", "candidates", "profiles". */
json_t *store_rows(struct store *s, const char *run_id, const char *task_id, const char *kind);

#endif
