/* pipe.h: the pipeline's working state (candidates, the pool, branches), shared by pipeline.c and branch.c only. */
#ifndef EGG_PIPE_H
#define EGG_PIPE_H

#include <pthread.h>

#include <jansson.h>

#include "pipeline.h"

/* Enough for the largest run the flags allow: 16 seeds with their repairs,
 * their 16 refinements and 8 candidates in each of 3 tuning stages. */
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
	struct cand *pool[8];
	int npool;
	json_t *decisions;	/* the decisions so far (decisions.h), carried between stages */
	int stop;		/* 1: stop now (budget or infrastructure) */
	int store_stop;		/* stopped because the run store refused a write */
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
 * candidates, after p's own), and frees b. The first branch joined that
 * stopped gives the reason. */
void pipe_join(struct pipe *p, struct pipe *b);
/* Drops what branch b did (it recorded nothing that must stay and made no
 * candidate) and frees it. */
void pipe_discard(struct pipe *b);
/* Runs fn(b, arg) on its own thread (here, in order, when no thread can be
 * had); branch_wait waits for it. */
void branch_start(struct pipe *b, void (*fn)(struct pipe *b, void *arg), void *arg);
void branch_wait(struct pipe *b);

#endif
