/* io.h: what one task's pipeline run takes and gives: its options, what it
 * works with (the pool, the agents, the recorders), its result and why it
 * stopped early. The types alone: pipeline.h runs the method on them, and
 * the phase files (pipe.h) share them without reaching back up. */
#ifndef EGG_PIPELINE_IO_H
#define EGG_PIPELINE_IO_H

#include <jansson.h>

#include "../agents/agents.h"
#include "../eval/eval.h"
#include "../eval/pool.h"
#include "../store/record.h"
#include "stages.h"

struct pipeline_opts {
	int seeds;		/* S structurally different seeds (2; 1 with --no-multi-seed) */
	int seed_repairs;	/* repairs per seed (3) */
	int repairs;		/* repairs per later candidate (1) */
	int refine;		/* algorithmic refinement on (--no-refine turns it off) */
	int refine_rounds;	/* refinement rounds per seed while each gains (1; --refine-rounds, or a whole
				 * program's effort by time at stake) */
	int fresh_seeds;	/* seeds written afresh, each with another algorithm, when refinement stalls (0) */
	const char *effort_why;	/* why this task got its rounds and fresh seeds (said in the decisions), or NULL */
	int stage_on[STAGE_COUNT]; /* which tuning stages run (--no-hw-tune: none) */
	int single_agent;	/* --single-agent: the code agent reads metrics and logs itself */
	int top_k;		/* candidates kept through each stage (1, as in the paper; at most PIPELINE_MAX_TOP_K) */
	int profile;		/* profile with ncu before refinement and tuning */
	double stop_at_sol;	/* stop once the best kernel is at this % of the roofline bound (85; 0: never) */
	int seed_from_existing;	/* the task's existing kernel, when it passes, is seed 1 */
	int tuning_together;	/* the tuning stages improve the same kernel side by side, and the changes that
				 * win are combined (1); 0 (--sequential-tuning): one after the other, as the
				 * paper orders them */
	int ask_always;		/* --ask-every-stage: no rule on the profile skips a tuning stage's call (ask.h) */
	int skip_eager_at_sol;	/* a task whose PyTorch eager already runs at stop_at_sol is not optimized
				 * (the subgraphs of a whole program: egg optimize --split) */
};

/* What the pipeline needs; all borrowed. */
struct pipeline_env {
	struct pool *pool;		/* eval workers; the task uses device `device` */
	int device;
	struct eval_opts eval;		/* its device and lock are the device's; its cache holds verdicts and profiles */
	const json_t *baseline;		/* eager/compile times, or NULL */
	struct agents *agents;
	struct recorder *rec;
	struct recorder *store_rec;	/* the task's own recorder: a write its store refused stops the
					 * pipeline (branches record into buffers, this one stays); or NULL */
	const char *task_source;
	const char *existing_source;	/* the task's existing kernel, or NULL */
	const json_t *existing_eval;	/* its evaluation (it passed), or NULL */
	/* Progress report (stage name, short text); may be NULL. */
	void (*progress)(void *ctx, const char *stage, const char *text);
	void *progress_ctx;
};

/*
 * Why a task's pipeline ended before its end: one cause. Each has the name
 * records carry ("stop_cause") and what it makes of the task: a wait for a
 * reply, a stop (infrastructure: the same command again goes on), or an
 * end that is the task's result (a budget spent).
 */
enum stop_cause {
	STOP_NONE,		/* it ran to its end */
	STOP_BUDGET,		/* a token or cost budget was spent */
	STOP_LLM,		/* the LLM failed after its retries */
	STOP_WORKER,		/* the evaluator failed (infrastructure) */
	STOP_NO_MEMORY,		/* an evaluation its device's memory cannot hold */
	STOP_STORE,		/* the run store refused a write */
	STOP_WAITING,		/* a reply is awaited in the --llm-spool folder */
	STOP_CAUSE_COUNT
};

struct stop_cause_info {
	const char *name;	/* "budget", "llm", "worker", "memory", "store", "waiting"; NULL for none */
	int infra;		/* an infrastructure failure: the task is stopped, not done */
	int rank;		/* which cause a task keeps when its branches stopped for several */
};
extern const struct stop_cause_info stop_causes[STOP_CAUSE_COUNT];

struct pipeline_result {
	int found;		/* a valid kernel exists */
	char *source;		/* the best kernel (owned) */
	char *id;		/* its candidate id (owned) */
	json_t *eval;		/* its evaluation (owned) */
	json_t *stage_rows;	/* [{stage, title, kernel_ms, speedup_eager, speedup_compile}] (owned) */
	char stop_reason[512];	/* why the run ended early, or "" */
	enum stop_cause stop_cause;	/* why it ended early (stop_causes), or STOP_NONE */
	char pending_key[65];	/* STOP_WAITING: the awaited request's key */
	int llm_chain;		/* LLM calls on the longest chain of calls that waited on each other */
	double llm_s;		/* waiting for LLM replies (not cached), summed over concurrent calls */
	double eval_s;		/* evaluating and profiling, summed over concurrent jobs */
	double device_wait_s;	/* waiting for a worker of the task's device, summed likewise */
	json_t *rule_skips;	/* the tuning stages a rule on the profile decided without a call (ask.h):
				 * [{stage, rule, candidate, calls_saved, figures: {metric: value}}] (owned) */
	json_t *extras;		/* the rounds the task's effort gave beyond the flags' pipeline and what each
				 * gained: [{kind: "round"|"fresh_seed", candidate, round|seed, why,
				 * gained: the speedup it brought, or null}] (owned) */
	json_t *sol_stop;	/* the early stop at the speed of light, or NULL (owned):
				 * {after_stage, sol_pct, threshold_pct, skipped_stages, skipped_calls_est,
				 *  tokens_per_call, tokens_saved_est} */
};

#endif
