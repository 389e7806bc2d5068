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
	struct cand *refined;	/* the accepted refinement (the last round's that gained), or NULL */
	int valid;
	int at_sol;		/* valid and itself at the speed of light: not refined */
	int stalled;		/* its last refinement round gained nothing (or it was not refined) */
};

/* Whether candidate `c` is at --stop-at-sol of the roofline bound. */
static int at_speed_of_light(const struct pipe *b, const struct cand *c)
{
	double sol = json_num(c->eval, "sol_pct");
	return b->o->stop_at_sol > 0 && !isnan(sol) && sol >= b->o->stop_at_sol;
}

/*
 * The refinement rounds of one line after the first: each refines the
 * last round's result while rounds gained (--refine-rounds, or the
 * effort a whole program gave the task), each said with why it was given.
 */
static void more_rounds(struct seed_line *l, const struct pipe *b)
{
	const char *why = b->o->effort_why ?: "--refine-rounds";
	char id[128];
	for (int r = 2; r <= b->o->refine_rounds && l->refined && !l->refine->stop; r++) {
		struct cand *next;
		if (at_speed_of_light(b, l->refined)) {
			l->stalled = 0;
			return;
		}
		pipe_decide(l->refine, "refine", DEC_EXTRA_ROUND, json_pack("{s:s, s:i, s:i, s:s}", "candidate",
									    l->refined->id, "round", r, "rounds",
									    b->o->refine_rounds, "why", why));
		pipe_progress(l->refine, "refine", "round %d of %d on %s: %s", r, b->o->refine_rounds, l->refined->id, why);
		snprintf(id, sizeof(id), "%.100s.refine%d", l->seed->id, r);
		if (!(next = pipe_improve(l->refine, &stages[STAGE_REFINE], l->refined, id)))
			return;
		l->refined = next;
	}
	l->stalled = !l->refined;
}

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
	l->stalled = 1;
	if (!b->o->refine || b->stop)
		return;
	sol = json_num(l->seed->eval, "sol_pct");
	l->refine = pipe_fork(b);
	if (at_speed_of_light(b, l->seed)) {
		pipe_decide(l->refine, "refine", DEC_NOT_REFINED_AT_SOL,
		       json_pack("{s:s, s:f, s:f}", "candidate", l->seed->id, "sol_pct", sol, "threshold_pct",
				 b->o->stop_at_sol));
		l->at_sol = 1;
		l->stalled = 0;
		return;
	}
	snprintf(id, sizeof(id), "%.100s.refine", l->seed->id);
	l->refined = pipe_improve(l->refine, &stages[STAGE_REFINE], l->seed, id);
	more_rounds(l, b);
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

/* The refinements the seed lines from `from` on made, joined in seed order
 * into `valid` (which holds the valid seeds); the new count. */
static int join_refinements(struct pipe *p, struct seed_line *lines, int from, int nlines, struct cand **valid,
			    int nvalid)
{
	for (int i = from; i < nlines; i++) {
		if (!lines[i].refine)
			continue;
		pipe_join(p, lines[i].refine);
		if (lines[i].refined)
			valid[nvalid++] = lines[i].refined;
	}
	return nvalid;
}

/* The refinement stage's selection among `valid`, once the stage has run. */
static void select_refined(struct pipe *p, struct cand **valid, int nvalid)
{
	const struct stage *rs = &stages[STAGE_REFINE];
	pipe_set_pool(p, valid, nvalid);
	/* A refinement that waits for a reply (or stopped) has not been
	 * decided: the selection is written once, when the stage has run. */
	if (p->npool && !p->stop)
		pipe_decide(p, rs->name, DEC_SELECTED,
			    json_pack("{s:s, s:f}", "candidate", p->pool[0]->id, "kernel_ms", p->pool[0]->ms));
	pipe_stage_row(p, rs);
}

/*
 * Seed `s` of `count` written by the code agent, told the approaches
 * before it (and `note`, when given), its approach added to them; NULL
 * when no usable reply came (said, unless the task stops).
 */
static struct cand *write_seed(struct pipe *p, int s, int count, struct buf *approaches, const char *note)
{
	const struct stage *st = &stages[STAGE_SEED];
	struct prompt_vars v = { 0 };
	enum agent_outcome oc;
	char *src, id[32], idx[16], total[16], *diversity, approach[200];
	snprintf(idx, sizeof(idx), "%d", s);
	snprintf(total, sizeof(total), "%d", count);
	snprintf(id, sizeof(id), "seed%d", s);
	diversity = agents_seed_diversity(count, approaches->len ? buf_str(approaches) : NULL);
	if (note) {
		char *both = xasprintf("%s %s", diversity, note);
		free(diversity);
		diversity = both;
	}
	prompt_set(&v, "seed_index", idx);
	prompt_set(&v, "seed_count", total);
	prompt_set(&v, "diversity", diversity);
	pipe_progress(p, "seed", "writing seed %d of %d", s, count);
	src = pipe_code_call(p, P_CODE_SEED, &v, st->name, id, &oc);
	free(diversity);
	if (!src) {
		if (!pipe_stop_for(p, oc, st->name, id))
			pipe_decide(p, st->name, DEC_SEED_NO_REPLY, json_pack("{s:i}", "seed", s));
		return NULL;
	}
	/* Remember the approach (a line, never code) for the next seed. */
	reply_approach(src, approach, sizeof(approach));
	buf_addf(approaches, "%s(%d) %s", approaches->len ? "; " : "", s, approach);
	return pipe_new_cand(p, id, NULL, st->name, src);
}

/* Whether every line's refinement stalled (none is at the speed of light
 * or ended on a round that gained). */
static int all_stalled(const struct seed_line *lines, int nlines)
{
	int valid = 0;
	for (int i = 0; i < nlines; i++) {
		valid += lines[i].valid;
		if (lines[i].valid && !lines[i].stalled)
			return 0;
	}
	return valid > 0;
}

/*
 * Fresh seeds (--fresh-seeds, or a whole program's effort): while the
 * refinement of every line so far stalled, a new seed with an algorithm
 * unlike the earlier ones, validated and refined on its own line, joined
 * after them. Returns the new count of `valid`.
 */
static int fresh_seeds(struct pipe *p, struct seed_line *lines, int *nlines, struct buf *approaches,
		       struct cand **valid, int nvalid)
{
	const char *why = p->o->effort_why ?: "--fresh-seeds";
	for (int f = 1; f <= p->o->fresh_seeds && !p->stop && p->npool && all_stalled(lines, *nlines); f++) {
		int s = p->o->seeds + f, count = p->o->seeds + p->o->fresh_seeds, at = *nlines;
		char *note = xasprintf("Refining those approaches stalled at %.4f ms: write another algorithm, not a "
				       "variant of them.", p->pool[0]->ms);
		struct cand *c;
		pipe_decide(p, "seed", DEC_FRESH_SEED, json_pack("{s:i, s:f, s:s}", "seed", s, "best_ms", p->pool[0]->ms,
								 "why", why));
		c = write_seed(p, s, count, approaches, note);
		free(note);
		if (!c)
			continue;
		start_line(p, lines, nlines, c, s);
		branch_wait(lines[at].check);
		pipe_join(p, lines[at].check);
		if (lines[at].valid)
			valid[nvalid++] = lines[at].seed;
		nvalid = join_refinements(p, lines, at, *nlines, valid, nvalid);
		select_refined(p, valid, nvalid);
	}
	return nvalid;
}

void pipe_run_seeds(struct pipe *p, int *seeds_at_sol)
{
	const struct stage *st = &stages[STAGE_SEED];
	struct buf approaches = BUF_INIT;
	/* the existing kernel, the seeds, the fresh seeds */
	struct seed_line lines[PIPELINE_MAX_SEEDS + 1 + PIPELINE_MAX_FRESH_SEEDS];
	struct cand *valid[MAX_CANDS];
	int nvalid = 0, nlines = 0, first;

	memset(lines, 0, sizeof(lines));
	first = 1 + existing_seed(p, st, lines, &nlines, &approaches);
	for (int s = first; s <= p->o->seeds && !p->stop; s++) {
		struct cand *c = write_seed(p, s, p->o->seeds, &approaches, NULL);
		if (c)
			start_line(p, lines, &nlines, c, s);
	}
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
		buf_release(&approaches);
		return;
	}
	nvalid = join_refinements(p, lines, 0, nlines, valid, nvalid);
	select_refined(p, valid, nvalid);
	fresh_seeds(p, lines, &nlines, &approaches, valid, nvalid);
	buf_release(&approaches);
}
