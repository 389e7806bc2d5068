/* run.h: a run of the EGG pipeline over tasks: open or resume, add tasks, execute, summarise, close. */
#ifndef EGG_RUN_H
#define EGG_RUN_H

#include <jansson.h>

#include "../config/config.h"
#include "../eval/eval.h"
#include "../pipeline/pipeline.h"
#include "../util/strvec.h"
#include "outcome.h"
#include "task.h"

/*
 * A run owns what its tasks share: the store and its record of the run,
 * the LLM client, the evaluation cache, the eval workers of every device,
 * and the run's budget. `egg optimize` is a run of one task, `egg bench` a
 * run of many; both are thin callers of this module.
 */
struct run;

struct run_opts {
	const char *command;		/* "optimize" or "bench", as the store records it */
	const char *id_hint;		/* part of a new run's id (a task's name), or NULL */
	const struct strvec *devices;	/* e.g. cuda:0, cuda:1; or cpu (several for CPU "devices") */
	int workers_per_device;		/* 0: 2 */
	struct pipeline_opts po;
	struct eval_opts eo;		/* its device, lock and cache are set per task */
	long task_max_tokens;		/* budgets; 0: none */
	double task_max_cost;
	long run_max_tokens;
	double run_max_cost;
	const json_t *config;		/* recorded with a new run */
	const char *existing;		/* an existing Triton kernel for the (one) task, or NULL:
					 * else TASK.existing.py beside each task, when present */
	int judge_only;			/* each task is a (task, kernel) pair to judge (egg eval
					 * --batch): no LLM, no pipeline */
};

/* How a run reports while it executes. */
enum run_progress {
	RUN_QUIET,			/* nothing */
	RUN_EVENTS,			/* one line per pipeline event (one task: egg optimize) */
	RUN_BOARD,			/* a board of running tasks (a terminal) or a summary line */
};

/* A new run in cfg->store; NULL with the error (ERR_INPUT for a bad
 * setting, ERR_INFRA for the store, the cache, the model). */
struct run *run_open(const struct config *cfg, const struct run_opts *o);
/* An existing run, to finish: its finished tasks stay finished (an
 * infrastructure failure or a wait is not finished). NULL with the error. */
struct run *run_resume(const struct config *cfg, const struct run_opts *o, const char *run_id);
/*
 * Registers tasks (a resumed run already knows them). `run_dir`, for a run
 * of one task, is its folder (default STORE/runs/RUN/TASK). Returns 0, or -1
 * with ERR_INFRA when the store refuses (the run is recorded stopped when
 * the store takes that: run_end_on_error).
 */
int run_add_tasks(struct run *r, const struct strvec *paths, const char *run_dir);
/* Task `path` (as registered) runs with options `po` (copied) in place of
 * the run's, `why` (copied; may be NULL) saying why it got them. -1 when
 * no task has that path. */
int run_set_task_opts(struct run *r, const char *path, const struct pipeline_opts *po, const char *why);
/* Registers (task, kernel) pairs of a judge-only run: tasks[i] with
 * kernels[i], each pair a task of its own, named TASKID__KERNELSTEM. */
int run_add_pairs(struct run *r, const struct strvec *tasks, const struct strvec *kernels);
/* Runs every unfinished task, `jobs` at once (0: 2 per device), and sets
 * the run's status from its outcome (outcome.h): "done", "waiting" (a task
 * waits for a reply) or "stopped" (an infrastructure failure stopped a
 * task, or the store refused the run's status: run_stop_reason; a resume
 * finishes it). Task failures are the tasks' statuses, never this
 * function's; the exit code is run_outcome_exit's. */
void run_execute(struct run *r, int jobs, enum run_progress progress);
/* The run stopped for `why` though its tasks did not (a record of the run
 * could not be written): the store says so (status "stopped" and the
 * reason) when it takes the write, and run_outcome_exit exits 3. */
void run_mark_stopped(struct run *r, const char *why);
/* Why the run stopped though no task did, or NULL (borrowed). */
const char *run_stop_reason(const struct run *r);
/* The run's outcome (outcome.h): its tasks counted. */
void run_outcome_of(const struct run *r, struct run_outcome *o);
/* The run's exit code with its one line (run_outcome_exit); a run that
 * ends on its user's input by the rule (run_outcome_refused) is recorded
 * "refused" with why. */
int run_exit_code(struct run *r, enum outcome_rule rule, const struct outcome_words *w);
/* The command ends its run on the pending error, which stays pending for
 * the command to report: the store records the run as run_status_on_error
 * says ("refused" for the user's input, "stopped" for an infrastructure
 * failure) with the error's words, so that no reader takes it for an
 * interrupted run to resume. NULL `r`: nothing to record. */
void run_end_on_error(struct run *r);

const char *run_id(const struct run *r);
int run_task_count(const struct run *r);
const struct task_state *run_task(const struct run *r, int i);
/* The report of the run (report_compute); owned, or NULL with the error. */
json_t *run_report(struct run *r);
void run_close(struct run *r);

/* What the run's tasks share (its pool, cache, store, settings), for work
 * on the run besides its tasks' pipelines (a whole program: whole.c). */
struct run_shared *run_shared(struct run *r);
/* STORE/runs/RUN_ID. */
const char *run_dir(const struct run *r);

/* A new run id (UTC time, `hint`, random suffix); owned. */
char *run_new_id(const char *hint);

#endif
