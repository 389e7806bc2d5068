/* seed.c: the seed stage: several structurally different kernels, each repaired and refined on its own line. */
#include "pipe.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../agents/decisions.h"
#include "ask.h"
#include "../agents/facts.h"
#include "../profile/profile.h"
#include "../util/beat.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/hash.h"
#include "../util/timeutil.h"
#include "../util/jsonnum.h"

/*
 * One seed's line of work, on a branch of its own that starts as soon as
 * the seed's reply is in (the next seed's request only needs its approach
 * line): its validation with repairs and the second witness, then, with
 * refinement on, its refinement on a second branch. A seed that is itself at
 * the speed of light (--stop-at-sol) is not refined.
 */
struct seed_line {
	struct cand *seed;
	int index;
	struct pipe *check;	/* validation and witness */
	struct pipe *refine;	/* its refinement, or NULL */
	struct cand *refined;	/* the accepted refinement, or NULL */
	int valid;
	int at_sol;		/* valid and itself at the speed of light: not refined */
};

static void seed_line_run(struct pipe *b, void *arg)
{
	struct seed_line *l = arg;
	char id[128];
	double sol;
	if (!l->seed->valid) {
		pipe_validate(b, l->seed, b->o->seed_repairs, "seed");
		if (!l->seed->valid) {
			if (!b->stop)
				pipe_decide(b, "seed", DEC_SEED_DROPPED,
				       json_pack("{s:i, s:i}", "seed", l->index, "repairs", b->o->seed_repairs));
			return;
		}
	}
	if (!pipe_timing_confirmed(b, l->seed))
		return;
	l->valid = 1;
	if (!b->o->refine || b->stop)
		return;
	sol = json_num(l->seed->eval, "sol_pct");
	l->refine = pipe_fork(b);
	if (b->o->stop_at_sol > 0 && !isnan(sol) && sol >= b->o->stop_at_sol) {
		pipe_decide(l->refine, "refine", DEC_NOT_REFINED_AT_SOL,
		       json_pack("{s:s, s:f, s:f}", "candidate", l->seed->id, "sol_pct", sol, "threshold_pct",
				 b->o->stop_at_sol));
		l->at_sol = 1;
		return;
	}
	snprintf(id, sizeof(id), "%.100s.refine", l->seed->id);
	l->refined = pipe_improve(l->refine, &stages[STAGE_REFINE], l->seed, id);
}

/*
 * Seeds, and with refinement on, each valid seed's refinement (the method's
 * two steps of algorithm design): the code agent writes seed after seed in
 * order (each told the approaches before it), each seed's line runs beside
 * the next request, and the lines are joined in seed order: first every
 * validation (the seed stage's selection), then every refinement (the
 * refinement stage's selection among the seeds and their refinements).
 * Over 100 lines: writing the seeds in order and joining their lines in
 * order are one piece of logic; split, that order would be hidden.
 */
/* Starts seed `c` (number `index`) on a line of its own: its validation,
 * repairs and refinement run beside the next seeds. */
static void start_line(struct pipe *p, struct seed_line *lines, int *nlines, struct cand *c, int index)
{
	struct seed_line *l = &lines[(*nlines)++];
	l->seed = c;
	l->index = index;
	l->check = pipe_fork(p);
	branch_start(l->check, seed_line_run, l);
}

/* The task's existing kernel (it passed its evaluation) as seed 1, its
 * approach told to the seeds the model writes; 1 when it is. */
static int existing_seed(struct pipe *p, const struct stage *st, struct seed_line *lines, int *nlines,
			 struct buf *approaches)
{
	char approach[200];
	const json_t *t;
	struct cand *c;
	if (!p->o->seed_from_existing || !p->env->existing_source || !p->env->existing_eval)
		return 0;
	if (!(c = pipe_new_cand(p, "existing", NULL, st->name, xstrdup(p->env->existing_source))))
		return 0;
	t = json_object_get(p->env->existing_eval, "timing");
	c->eval = json_incref((json_t *)p->env->existing_eval);
	c->valid = 1;
	c->ms = json_num(c->eval, "kernel_ms");
	c->cv = t && !isnan(json_num(t, "cv")) ? json_num(t, "cv") : 0;
	pipe_step(p, c, "seed", 0, 0, "the existing kernel");
	reply_approach(c->source, approach, sizeof(approach));
	buf_addf(approaches, "(1) the existing kernel: %s", approach);
	pipe_decide(p, st->name, DEC_SEED_EXISTING, json_pack("{s:f}", "kernel_ms", c->ms));
	start_line(p, lines, nlines, c, 1);
	return 1;
}

/* The refinements the seed lines made, joined in seed order into the pool
 * (`valid` holds the valid seeds), and the stage's selection. */
static void join_refinements(struct pipe *p, struct seed_line *lines, int nlines, struct cand **valid, int nvalid)
{
	const struct stage *rs = &stages[STAGE_REFINE];
	for (int i = 0; i < nlines; i++) {
		if (!lines[i].refine)
			continue;
		pipe_join(p, lines[i].refine);
		if (lines[i].refined)
			valid[nvalid++] = lines[i].refined;
	}
	pipe_set_pool(p, valid, nvalid);
	/* A refinement that waits for a reply (or stopped) has not been
	 * decided: the selection is written once, when the stage has run. */
	if (p->npool && !p->stop)
		pipe_decide(p, rs->name, DEC_SELECTED,
			    json_pack("{s:s, s:f}", "candidate", p->pool[0]->id, "kernel_ms", p->pool[0]->ms));
	pipe_stage_row(p, rs);
}

void pipe_run_seeds(struct pipe *p, int *seeds_at_sol)
{
	const struct stage *st = &stages[STAGE_SEED];
	struct buf approaches = BUF_INIT;
	struct seed_line lines[PIPELINE_MAX_SEEDS + 1];	/* the existing kernel, then the seeds */
	struct cand *valid[MAX_CANDS];
	int nvalid = 0, nlines = 0, first;
	char idx[16], count[16];

	memset(lines, 0, sizeof(lines));
	snprintf(count, sizeof(count), "%d", p->o->seeds);
	first = 1 + existing_seed(p, st, lines, &nlines, &approaches);
	for (int s = first; s <= p->o->seeds && !p->stop; s++) {
		struct prompt_vars v = { 0 };
		enum agent_outcome oc;
		char *src, id[32], *diversity;
		struct cand *c;
		snprintf(idx, sizeof(idx), "%d", s);
		snprintf(id, sizeof(id), "seed%d", s);
		diversity = agents_seed_diversity(p->o->seeds, approaches.len ? buf_str(&approaches) : NULL);
		prompt_set(&v, "seed_index", idx);
		prompt_set(&v, "seed_count", count);
		prompt_set(&v, "diversity", diversity);
		pipe_progress(p, "seed", "writing seed %d of %d", s, p->o->seeds);
		src = pipe_code_call(p, P_CODE_SEED, &v, st->name, id, &oc);
		free(diversity);
		if (!src) {
			if (!pipe_stop_for(p, oc, st->name, id))
				pipe_decide(p, st->name, DEC_SEED_NO_REPLY, json_pack("{s:i}", "seed", s));
			continue;
		}
		{
			/* Remember the approach (a line, never code) for the next seed. */
			char approach[200];
			reply_approach(src, approach, sizeof(approach));
			buf_addf(&approaches, "%s(%d) %s", approaches.len ? "; " : "", s, approach);
		}
		c = pipe_new_cand(p, id, NULL, st->name, src);
		if (!c)
			break;
		start_line(p, lines, &nlines, c, s);
	}
	buf_release(&approaches);
	for (int i = 0; i < nlines; i++)
		branch_wait(lines[i].check);
	for (int i = 0; i < nlines; i++) {
		pipe_join(p, lines[i].check);
		if (lines[i].valid)
			valid[nvalid++] = lines[i].seed;
	}
	pipe_set_pool(p, valid, nvalid);
	if (nvalid && !p->stop)
		pipe_decide(p, st->name, DEC_SEEDS_VALID, json_pack("{s:i, s:s, s:f}", "valid", nvalid, "candidate",
							       p->pool[0]->id, "kernel_ms", p->pool[0]->ms));
	pipe_stage_row(p, st);
	{
		/* Every valid seed at the speed of light: the refinement stage did
		 * not run at all (the stop after the seeds says so, pipeline_run). */
		int at_sol = 0;
		for (int i = 0; i < nlines; i++)
			at_sol += lines[i].valid && lines[i].at_sol;
		*seeds_at_sol = nvalid && at_sol == nvalid;
	}
	if (!p->o->refine || !nvalid || *seeds_at_sol) {
		for (int i = 0; i < nlines; i++)
			if (lines[i].refine)
				pipe_discard(lines[i].refine);
		return;
	}
	join_refinements(p, lines, nlines, valid, nvalid);
}
