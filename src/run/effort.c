/* effort.c: a whole program's budget of model calls spread over its distinct tasks by the time each can still win (effort.h). */
#include "effort.h"

#include <math.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/jsonnum.h"

/* Extra refinement rounds and fresh seeds a task may be given, at most. */
#define MAX_ROUNDS 4
#define MAX_FRESH 2

int effort_calls(int seeds, int refine_rounds, int fresh_seeds, int tuning, int nstages)
{
	return seeds + 2 * seeds * refine_rounds + fresh_seeds * (1 + 2 * refine_rounds) + (tuning ? 2 * nstages : 0);
}

static int stages_on(const struct pipeline_opts *base)
{
	int n = 0;
	for (int s = 0; s < STAGE_COUNT; s++)
		n += stages[s].tuning && base->stage_on[s];
	return n;
}

static int planned(const struct effort_task *t, int nstages)
{
	return effort_calls(t->seeds, t->refine_rounds, t->fresh_seeds, t->tuning, nstages);
}

/* Task `t` one step up from where it is, into `next`: its seeds with
 * refinement, then with tuning (the base), then alternately one more
 * refinement round and one fresh seed. 0 when it is at its last step. */
static int next_step(const struct effort_task *t, const struct pipeline_opts *base, struct effort_task *next)
{
	int base_rounds = base->refine ? base->refine_rounds : 0, tuning = stages_on(base) > 0;
	*next = *t;
	if (!base->refine && !t->tuning && tuning) {
		next->tuning = 1;
		return 1;
	}
	if (!base->refine)
		return 0;
	if (!t->refine_rounds) {
		next->refine_rounds = 1;
		return 1;
	}
	if (t->tuning < tuning || t->refine_rounds < base_rounds || t->fresh_seeds < base->fresh_seeds) {
		next->tuning = tuning;
		next->refine_rounds = base_rounds > t->refine_rounds ? base_rounds : t->refine_rounds;
		next->fresh_seeds = base->fresh_seeds > t->fresh_seeds ? base->fresh_seeds : t->fresh_seeds;
		return 1;
	}
	if (t->refine_rounds <= t->fresh_seeds + base_rounds && t->refine_rounds < MAX_ROUNDS) {
		next->refine_rounds++;
		return 1;
	}
	if (t->fresh_seeds < MAX_FRESH) {
		next->fresh_seeds++;
		return 1;
	}
	if (t->refine_rounds < MAX_ROUNDS) {
		next->refine_rounds++;
		return 1;
	}
	return 0;
}

void effort_allocate(struct effort_task *t, int n, int budget, const struct pipeline_opts *base)
{
	int nstages = stages_on(base), left = budget;
	for (int i = 0; i < n; i++) {
		double bar = t[i].bar_ms, bound = t[i].roofline_ms;
		int occ = t[i].occurrences > 0 ? t[i].occurrences : 1;
		t[i].stake_ms = isnan(bar) ? NAN : occ * (bound > 0 ? fmax(0, bar - bound) : bar);
		t[i].at_bound = bar > 0 && bound > 0 && base->stop_at_sol > 0 && 100 * bound / bar >= base->stop_at_sol;
		t[i].seeds = base->seeds;
		t[i].refine_rounds = t[i].fresh_seeds = t[i].tuning = 0;
		if (isnan(t[i].stake_ms)) {
			/* Nothing measured: what the flags give every task. */
			t[i].refine_rounds = base->refine ? base->refine_rounds : 0;
			t[i].fresh_seeds = base->refine ? base->fresh_seeds : 0;
			t[i].tuning = nstages > 0;
		}
		left -= planned(&t[i], nstages);
	}
	for (;;) {
		int best = -1;
		double best_rate = 0;
		struct effort_task up, chosen;
		for (int i = 0; i < n; i++) {
			double rate;
			if (t[i].at_bound || !(t[i].stake_ms > 0) || !next_step(&t[i], base, &up) ||
			    planned(&up, nstages) - planned(&t[i], nstages) > left)
				continue;
			/* Time at stake per planned call once the step is taken. */
			rate = t[i].stake_ms / planned(&up, nstages);
			if (best < 0 || rate > best_rate) {
				best = i;
				best_rate = rate;
				chosen = up;
			}
		}
		if (best < 0)
			break;
		left -= planned(&chosen, nstages) - planned(&t[best], nstages);
		t[best] = chosen;
	}
	for (int i = 0; i < n; i++)
		t[i].planned_calls = planned(&t[i], nstages);
}

json_t *effort_json(const struct effort_task *t, double total_ms, int budget)
{
	struct buf why = BUF_INIT;
	json_t *o;
	if (t->at_bound)
		buf_addf(&why, "what the user runs is within --stop-at-sol of its roofline bound: its seeds only");
	else if (isnan(t->stake_ms))
		buf_addf(&why, "its time at stake is not measured: what the flags give every task");
	else
		buf_addf(&why, "%.4f ms at stake (%.0f%% of the program's %.4f ms): %d of the %d calls", t->stake_ms,
			 total_ms > 0 ? 100 * t->stake_ms / total_ms : 0, total_ms, t->planned_calls, budget);
	o = json_pack("{s:o, s:b, s:i, s:i, s:i, s:b, s:i, s:s}", "stake_ms",
		      isnan(t->stake_ms) ? json_null() : json_real(t->stake_ms), "at_bound", t->at_bound, "seeds",
		      t->seeds, "refine_rounds", t->refine_rounds, "fresh_seeds", t->fresh_seeds, "tuning", t->tuning,
		      "planned_calls", t->planned_calls, "why", buf_str(&why));
	buf_release(&why);
	return o;
}

void effort_opts(const struct effort_task *t, const struct pipeline_opts *base, const char *why,
		 struct pipeline_opts *out)
{
	*out = *base;
	out->seeds = t->seeds;
	out->refine = t->refine_rounds > 0;
	out->refine_rounds = t->refine_rounds > 0 ? t->refine_rounds : 1;
	out->fresh_seeds = t->fresh_seeds;
	if (!t->tuning)
		memset(out->stage_on, 0, sizeof(out->stage_on));
	out->effort_why = why;
}

/* The row of the program's subgraphs (or blocks) that is task `path`'s
 * first occurrence, or NULL. */
static json_t *row_of(json_t *rows, const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	json_t *row;
	size_t i;
	json_array_foreach(rows, i, row)
		if (!strcmp(json_string_value(json_object_get(row, "file")) ?: "", base) &&
		    !strcmp(json_string_value(json_object_get(row, "task")) ?: "", base))
			return row;
	return NULL;
}

json_t *effort_apply(struct run *r, json_t *rows, const struct strvec *paths, int budget,
		     const struct pipeline_opts *base)
{
	size_t n = paths->n;
	struct effort_task *t = xcalloc(n ? n : 1, sizeof(*t));
	json_t *tasks = json_array(), *out;
	double total = 0;
	int planned = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *row = row_of(rows, paths->v[i]);
		double e = json_num(row, "task_eager_ms"), c = json_num(row, "task_compile_ms");
		t[i].bar_ms = isnan(c) ? e : isnan(e) ? c : fmin(e, c);
		t[i].roofline_ms = json_num(row, "task_roofline_ms");
		t[i].occurrences = (int)json_integer_value(json_object_get(row, "occurrences"));
	}
	effort_allocate(t, (int)n, budget, base);
	for (size_t i = 0; i < n; i++)
		total += isnan(t[i].stake_ms) ? 0 : t[i].stake_ms;
	for (size_t i = 0; i < n; i++) {
		json_t *row = row_of(rows, paths->v[i]), *e = effort_json(&t[i], total, budget);
		struct pipeline_opts po;
		effort_opts(&t[i], base, json_string_value(json_object_get(e, "why")), &po);
		run_set_task_opts(r, paths->v[i], &po, json_string_value(json_object_get(e, "why")));
		planned += t[i].planned_calls;
		json_array_append_new(tasks, json_pack("{s:s, s:O}", "task", strrchr(paths->v[i], '/') ?
						       strrchr(paths->v[i], '/') + 1 : paths->v[i], "effort", e));
		if (row)
			json_object_set(row, "effort", e);
		json_decref(e);
	}
	out = json_pack("{s:i, s:i, s:f, s:o}", "budget_calls", budget, "planned_calls", planned, "stake_ms", total,
			"tasks", tasks);
	free(t);
	return out;
}
