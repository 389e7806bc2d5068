/* io.h: what one task's pipeline run takes and gives: its options, what it
 * works with (the pool, the agents, the recorders), its result and why it
 * stopped early (stop.h). The types alone: pipeline.h runs the method on them, and
 * the phase files (pipe.h) share them without reaching back up. */
#ifndef EGG_PIPELINE_IO_H
#define EGG_PIPELINE_IO_H

#include <jansson.h>

#include "../agents/agents.h"
#include "../eval/eval.h"
#include "../eval/pool.h"
#include "../store/record.h"
#include "stages.h"
#include "stop.h"

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

struct pipeline_result {
	int found;		/* a valid kernel exists */
	char *source;		/* the best kernel (owned) */
	char *id;		/* its candidate id (owned) */
	json_t *eval;		/* its evaluation (owned) */
	json_t *stage_rows;	/* [{stage, title, kernel_ms, speedup_eager, speedup_compile}] (owned) */
	struct stop stop;	/* why it ended early (stop.h), or cause STOP_NONE */
	int llm_chain;		/* LLM calls on the longest chain of calls that waited on each other */
	double llm_s;		/* waiting for LLM replies (not cached), summed over concurrent calls */
	double eval_s;		/* evaluating and profiling, summed over concurrent jobs */
	double device_wait_s;	/* waiting for a worker of the task's device, summed likewise */
	json_t *rule_skips;	/* the tuning stages a rule on the profile decided without a call (ask.h):
				 * [{stage, rule, candidate, calls_saved, figures: {metric: value}}] (owned) */
	json_t *extras;		/* the rounds the task's effort gave beyond the flags' pipeline and what each
				 * gained: [{kind: "round"|"fresh_seed", candidate, round|seed, why,
				 * gained: the speedup it brought, or null}] (owned) */
	json_t *sol_stop;	/* the early end at the speed of light, or NULL (owned; not a stop: the
				 * task ran to its end, its later stages skipped): {after_stage, sol_pct,
				 * threshold_pct, skipped_stages, skipped_calls_est, tokens_per_call,
				 * tokens_saved_est, note (its sentence)} */
};

#endif
