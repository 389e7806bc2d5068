/* pipe.h: the pipeline's working state (candidates, the pool, branches) and its phases, shared by the files of src/pipeline only. */
#ifndef EGG_PIPE_H
#define EGG_PIPE_H

#include <pthread.h>

#include <jansson.h>

#include "../agents/decisions.h"
#include "../agents/prompts.h"
#include "ask.h"
#include "io.h"
#include "stages.h"

/* Enough for the largest run the flags allow: PIPELINE_MAX_SEEDS seeds with
 * their repairs, their refinements and PIPELINE_MAX_TOP_K candidates in
 * each tuning stage and the combination. */
#define MAX_CANDS 128

struct cand {
	char id[128];
	char parent[128];
	const char *stage;
	char *source;
	char *plan;		/* the profile agent's plan it was written from (JSON text), or NULL */
	json_t *eval;
	json_t *profile;
	double ms;		/* INFINITY when not valid */
	double cv;
	int valid;
};

/*
 * The state the method works on. A task has one; work that runs beside
 * other work (a seed's validation and refinement beside the next seed, the
 * pool's candidates in a tuning stage) runs on a branch: a copy that records
 * into a buffer, counts its own calls and keeps its own decisions and
 * candidates, joined back in a fixed order (pipe_join), so that the choices,
 * the records and the prompts that follow are the same whatever finished
 * first.
 */
struct pipe {
	struct pipeline_env *env;
	const struct pipeline_opts *o;
	struct pipeline_result *out;
	struct cand *cands[MAX_CANDS];	/* owned by the task's pipe (a branch's new ones until joined) */
	int ncands;
	struct cand *pool[PIPELINE_MAX_TOP_K];
	int npool;
	json_t *decisions;	/* the decisions so far (decisions.h), carried between stages */
	int stop;		/* 1: stop now (out->stop says why) */
	int at_sol;		/* the best kernel reached --stop-at-sol: later stages are skipped */
	int broken;		/* egg itself failed (err holds why); the run stops */
	int chain;		/* LLM calls on the longest chain of calls that waited on each other */
	double eval_ms, wait_ms; /* evaluating and profiling; waiting for a worker of the device */
	/* A branch: */
	struct pipeline_env own_env;
	struct agents own_agents;
	struct pipeline_result own_out;
	struct llm_usage base;	/* the usage counters when it forked */
	int base_cands;		/* candidates it had when it forked */
	size_t base_decisions;
	double base_eval_ms, base_wait_ms;
	pthread_t thread;
};

/* A cand and what it owns. */
void cand_free(struct cand *c);

/* ---- branches (branch.c): work beside other work, joined in a fixed order ---- */

/* A branch of `p`: the same state, recording into a buffer, counting its own calls. */
struct pipe *pipe_fork(struct pipe *p);
/* Brings what branch b did into p (its records, calls, decisions and
 * candidates, after p's own), and frees b. The task's stop record is p's
 * or b's, whole, by the join rule (stop_join): never a mix of the two. */
void pipe_join(struct pipe *p, struct pipe *b);
/* Drops what branch b did (it recorded nothing that must stay and made no
 * candidate) and frees it. */
void pipe_discard(struct pipe *b);
/* Runs fn(b, arg) on its own thread (here, in order, when no thread can be
 * had); branch_wait waits for it. */
void branch_start(struct pipe *b, void (*fn)(struct pipe *b, void *arg), void *arg);
void branch_wait(struct pipe *b);

/*
 * The pipeline's phases, each in its own file, in layers: each file calls
 * only into the ones listed before it. calls.c asks the agents and records
 * decisions and stops; cand.c makes a candidate (pipe_new_cand), validates
 * it with its repairs (pipe_validate), profiles it (pipe_profile), records
 * its step (pipe_step) and keeps the pool; improve.c makes one improvement
 * step; seed.c and tune.c run their stages with it; pipeline.c runs the
 * stages in order.
 */

/* ---- calls.c: the agents, decisions and stops ---- */

/* A progress line of the task's stage (the run's display). */
void pipe_progress(struct pipe *p, const char *stage, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Records a decision of kind `k` with its fields (stolen; NULL: none). */
void pipe_decide(struct pipe *p, const char *stage, enum decision_kind k, json_t *fields);
/* {"candidate": ID}: the fields of a decision about one candidate. */
json_t *pipe_about(const char *candidate);
/* The code agent's kernel (owned) or NULL, and the JSON reply of a profile
 * or debug agent (owned) or NULL; `oc` says what became of the call. */
char *pipe_code_call(struct pipe *p, enum prompt_id id, struct prompt_vars *v, const char *stage,
		     const char *candidate, enum agent_outcome *oc);
json_t *pipe_json_call(struct pipe *p, enum prompt_id id, enum reply_schema schema, struct prompt_vars *v,
		       const char *stage, const char *candidate, enum agent_outcome *oc);
/* The task stops for `s` (made by stop_set): its record becomes s when s
 * outranks the one it has (stop_join), and the pipeline stops; STOP_EGG
 * marks egg itself broken too. The one way the pipeline takes a stop. */
void pipe_stop(struct pipe *p, const struct stop *s);
/* After an agent gave nothing usable: 1 when the task stops here. */
int pipe_stop_for(struct pipe *p, enum agent_outcome oc, const char *stage, const char *subject);
/* The run store refused a write: the task stops (STOP_STORE); 1 when it did. */
int pipe_store_broken(struct pipe *p);
/* The LLM calls one improvement step makes: the profile agent's plan and
 * the code agent's kernel, or one call of the single agent. */
int pipe_calls_per_step(const struct pipe *p);

/* ---- cand.c: a candidate made, validated, profiled, recorded; the pool ---- */

struct cand *pipe_new_cand(struct pipe *p, const char *id, const char *parent, const char *stage, char *source);
void pipe_validate(struct pipe *p, struct cand *c, int repairs, const char *kind);
json_t *pipe_profile(struct pipe *p, struct cand *c);
int pipe_timing_confirmed(struct pipe *p, struct cand *c);
void pipe_step(struct pipe *p, const struct cand *c, const char *kind, int accepted_known, int accepted,
	       const char *note);
/* The pool: the valid candidates of `list`, fastest first, at most top_k. */
void pipe_set_pool(struct pipe *p, struct cand **list, int n);
/* The stage's row of the table: its best kernel's time and speedups. */
void pipe_stage_row(struct pipe *p, const struct stage *st);

/* ---- improve.c: one improvement step ---- */

struct cand *pipe_judge(struct pipe *p, const struct stage *st, const struct cand *parent, const char *id,
			char *src, const char *plan);
struct cand *pipe_improve(struct pipe *p, const struct stage *st, struct cand *parent, const char *id);

/* ---- seed.c and tune.c: the stages ---- */

void pipe_run_seeds(struct pipe *p, int *seeds_at_sol);
void pipe_run_tuning(struct pipe *p, const struct stage *st);
void pipe_run_tuning_together(struct pipe *p);

#endif
