/* task.h: one task of a run: its baseline, the pipeline, its records and its summary. */
#ifndef EGG_TASK_H
#define EGG_TASK_H

#include <pthread.h>

#include <jansson.h>

#include "../agents/agents.h"
#include "../llm/llm.h"
#include "../pipeline/pipeline.h"
#include "../store/store.h"
#include "../eval/pool.h"

/* What all tasks of a run share. Borrowed pointers outlive the run. */
struct run_shared {
	const struct config *cfg;
	struct store *store;
	const char *run_id;
	const char *runs_dir;		/* STORE/runs/RUN_ID: task folders go here */
	struct pool *pool;
	struct llm *llm;
	struct budget *budget;		/* run budget, or NULL */
	struct pipeline_opts po;
	struct eval_opts eo;		/* device and lock are set per task */
	long task_max_tokens;
	double task_max_cost;
	struct evcache *cache;		/* baselines, verdicts and profiles, or NULL */
	const char *existing;		/* run_opts.existing */
	int print_progress;		/* one line per event on stderr (egg optimize) */
	int judge_only;			/* run_opts.judge_only */
	int resumed;			/* run_resume: task folders may hold an earlier pass */
	pthread_mutex_t mu;		/* guards the task states' live fields */
};

/* One task's live state (read by the progress display). */
struct task_state {
	char *task_id, *path, *group;
	char *run_dir;			/* NULL: runs_dir/task_id */
	char *kernel;			/* a judge-only run's kernel for the task, else NULL */
	int device;
	int running, finished;
	char stage[32];
	enum task_status status;	/* store.h: done, failed, waiting, stopped once finished (from stop) */
	long tokens;
	double cost;
	double started, ended;		/* monotonic ms */
	json_t *result;			/* the summary, owned */
	struct pipeline_opts *po;	/* its own options (a whole program's effort), owned; NULL: the run's */
	char *po_why;			/* why it got them (po->effort_why points here), owned */
	struct stop stop;		/* why it ended early, once finished (pipeline/stop.h): its status and
					 * error kind follow from it */
};

/* Task ids from paths: GROUP__STEM, GROUP being the parent folder's name. */
char *task_id_of(const char *path, char **group);
/* Runs the task to its end and records everything (store and run folder).
 * Never fails the caller: errors become the task's failed status. */
void task_run(struct run_shared *rs, struct task_state *ts);

#endif
