/* tune.c: the tuning stages side by side on the same kernels, and the combination of what each gained. */
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

/* The id of pool member i's candidate in stage `name`: the stage's name,
 * with ".kN" when the pool holds several (--top-k). */
static void line_id(char *out, size_t n, const char *name, int i, int npool)
{
	if (npool > 1)
		snprintf(out, n, "%s.k%d", name, i + 1);
	else
		snprintf(out, n, "%s", name);
}

/* One pool member's improvement in a tuning stage, on a branch of its own. */
struct tune_line {
	const struct stage *st;
	struct cand *parent;
	char id[128];
	struct cand *accepted;
	struct pipe *b;
};

static void tune_line_run(struct pipe *b, void *arg)
{
	struct tune_line *l = arg;
	l->accepted = pipe_improve(b, l->st, l->parent, l->id);
}

/* A tuning stage: each kernel in the pool gets one improvement (beside one
 * another when the pool holds several: --top-k); the K fastest of the pool
 * and the accepted ones stay. */
void pipe_run_tuning(struct pipe *p, const struct stage *st)
{
	struct cand *next[2 * PIPELINE_MAX_TOP_K];	/* the pool and what each line accepted */
	struct tune_line lines[PIPELINE_MAX_TOP_K];
	int n = 0, npool = p->npool;

	memset(lines, 0, sizeof(lines));
	for (int i = 0; i < npool; i++) {
		next[n++] = p->pool[i];
		lines[i].st = st;
		lines[i].parent = p->pool[i];
		line_id(lines[i].id, sizeof(lines[i].id), st->name, i, npool);
	}
	if (npool == 1) {
		lines[0].accepted = pipe_improve(p, st, lines[0].parent, lines[0].id);
	} else {
		for (int i = 0; i < npool; i++) {
			lines[i].b = pipe_fork(p);
			branch_start(lines[i].b, tune_line_run, &lines[i]);
		}
		for (int i = 0; i < npool; i++)
			branch_wait(lines[i].b);
		for (int i = 0; i < npool; i++)
			pipe_join(p, lines[i].b);
	}
	for (int i = 0; i < npool; i++)
		if (lines[i].accepted)
			next[n++] = lines[i].accepted;
	pipe_set_pool(p, next, n);
	pipe_stage_row(p, st);
}

/*
 * Brings the changes of `others` (each accepted on its own against the same
 * parent as `best`, in another tuning stage) into `best`, the fastest of
 * them: one code call, validated, and kept only when faster than `best` by
 * the acceptance rule. Returns the kept candidate, or NULL.
 */
static struct cand *combine(struct pipe *p, struct cand *best, struct cand *const *others, int nothers,
			    const char *id)
{
	const struct stage *st = &stages[STAGE_COMBINE];
	struct prompt_vars v = { 0 };
	struct buf changes = BUF_INIT;
	enum agent_outcome oc;
	char *timing = agents_timing_text(p->env->baseline, p->env->eval.device, best->ms),
	     *decisions = decisions_prompt_text(p->decisions), *src;
	struct cand *kept = NULL;
	double sol = json_num(best->eval, "sol_pct");

	if (p->o->stop_at_sol > 0 && !isnan(sol) && sol >= p->o->stop_at_sol) {
		pipe_decide(p, st->name, DEC_NOT_REFINED_AT_SOL, json_pack("{s:s, s:f, s:f}", "candidate", best->id, "sol_pct",
									sol, "threshold_pct", p->o->stop_at_sol));
		goto out;
	}
	for (int i = 0; i < nothers; i++) {
		const struct stage *from = stage_by_name(others[i]->stage);
		buf_addf(&changes, "%d. %s (its kernel ran %.4f ms). The plan it applied (JSON):\n%s\nIts kernel:\n"
				   "```python\n%s\n```\n\n", i + 1, from ? from->title : others[i]->stage, others[i]->ms,
			 others[i]->plan ?: "(none recorded)", others[i]->source);
	}
	prompt_set(&v, "objective", st->objective);
	prompt_set(&v, "rules", st->rules);
	prompt_set(&v, "decisions", decisions);
	prompt_set(&v, "timing", timing);
	prompt_set(&v, "changes", buf_str(&changes));
	prompt_set(&v, "kernel", best->source);
	pipe_progress(p, st->name, "combining %s with %d other change(s)", best->id, nothers);
	src = pipe_code_call(p, st->code_prompt, &v, st->name, id, &oc);
	if (!src) {
		if (!pipe_stop_for(p, oc, st->name, best->id))
			pipe_decide(p, st->name, DEC_NO_KERNEL, pipe_about(best->id));
		goto out;
	}
	kept = pipe_judge(p, st, best, id, src, NULL);
out:
	buf_release(&changes);
	free(decisions);
	free(timing);
	return kept;
}

/* The combination of one pool member's winning tuning changes, on a branch. */
struct combine_line {
	struct cand *best;
	struct cand *others[STAGE_COUNT];
	int nothers;
	char id[128];
	struct cand *kept;
	struct pipe *b;
};

static void combine_line_run(struct pipe *b, void *arg)
{
	struct combine_line *l = arg;
	l->kept = combine(b, l->best, l->others, l->nothers, l->id);
}

/*
 * The tuning stages side by side (the default): each stage's profile agent
 * reads the same kernel, so their plans do not wait for one another; each
 * plan's kernel is written, validated and judged against that kernel beside
 * the others, on branches joined in stage order (the records and the
 * outcome do not depend on which finished first). Each stage's row is the
 * best kernel once its candidates are counted. When more than one stage's
 * change wins for a kernel, one more code call brings them together
 * (combine), kept only when faster again. With --top-k, every pool member
 * gets all of this.
 */
void pipe_run_tuning_together(struct pipe *p)
{
	const struct stage *on[STAGE_COUNT];
	struct tune_line lines[PIPELINE_MAX_TOP_K * STAGE_COUNT];
	struct combine_line combos[PIPELINE_MAX_TOP_K];
	struct cand *next[PIPELINE_MAX_TOP_K * (STAGE_COUNT + 2)];	/* the pool, each line's, each combination's */
	int nst = 0, n = 0, nnext = 0, ncombos = 0, npool = p->npool;

	memset(lines, 0, sizeof(lines));
	memset(combos, 0, sizeof(combos));
	for (int s = 0; s < STAGE_COUNT; s++)
		if (stages[s].tuning && p->o->stage_on[s])
			on[nst++] = &stages[s];
	if (!nst)
		return;
	/* Every line reads its parent's pipe_profile (and a rule may decide on it):
	 * taken once here, before the lines share the parent. */
	for (int i = 0; i < npool; i++) {
		next[nnext++] = p->pool[i];
		pipe_profile(p, p->pool[i]);
	}
	for (int j = 0; j < nst; j++)
		for (int i = 0; i < npool; i++, n++) {
			lines[n].st = on[j];
			lines[n].parent = p->pool[i];
			line_id(lines[n].id, sizeof(lines[n].id), on[j]->name, i, npool);
			lines[n].b = pipe_fork(p);
			branch_start(lines[n].b, tune_line_run, &lines[n]);
		}
	for (int k = 0; k < n; k++)
		branch_wait(lines[k].b);
	for (int k = 0; k < n; k++) {
		pipe_join(p, lines[k].b);
		if (lines[k].accepted)
			next[nnext++] = lines[k].accepted;
		if ((k + 1) % npool == 0) {
			/* The stage's row: the best once its candidates count. */
			struct cand *upto[8 + 8 * STAGE_COUNT];
			memcpy(upto, next, (size_t)nnext * sizeof(*upto));
			pipe_set_pool(p, upto, nnext);
			pipe_stage_row(p, lines[k].st);
		}
	}
	/* More than one stage won for a kernel: bring the changes together. */
	for (int i = 0; i < npool && !p->stop; i++) {
		struct combine_line *c = &combos[ncombos];
		for (int k = i; k < n; k += npool) {
			struct cand *a = lines[k].accepted;
			if (!a)
				continue;
			if (!c->best || a->ms < c->best->ms) {
				if (c->best)
					c->others[c->nothers++] = c->best;
				c->best = a;
			} else
				c->others[c->nothers++] = a;
		}
		if (!c->nothers) {
			memset(c, 0, sizeof(*c));
			continue;
		}
		line_id(c->id, sizeof(c->id), stages[STAGE_COMBINE].name, i, npool);
		c->b = pipe_fork(p);
		branch_start(c->b, combine_line_run, c);
		ncombos++;
	}
	for (int k = 0; k < ncombos; k++)
		branch_wait(combos[k].b);
	for (int k = 0; k < ncombos; k++) {
		pipe_join(p, combos[k].b);
		if (combos[k].kept)
			next[nnext++] = combos[k].kept;
	}
	pipe_set_pool(p, next, nnext);
	if (ncombos)
		pipe_stage_row(p, &stages[STAGE_COMBINE]);
}
