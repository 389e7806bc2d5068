/* effort.h: a whole program's budget of model calls, spread over its distinct tasks by the time each can still win. */
#ifndef EGG_EFFORT_H
#define EGG_EFFORT_H

#include <jansson.h>

#include "../pipeline/pipeline.h"
#include "../util/strvec.h"
#include "run.h"

/*
 * What a task can still win, and the effort it gets. The time at stake is
 * its occurrences times the gap between what the user runs today (the
 * faster of eager and torch.compile, in its own task) and its roofline
 * bound: the time a perfect kernel would save. A task whose bar is already
 * within --stop-at-sol of its bound is "at its bound".
 */
struct effort_task {
	/* in */
	double bar_ms;		/* the faster of eager and torch.compile, one occurrence; NAN: not measured */
	double roofline_ms;	/* its roofline bound; NAN: none */
	int occurrences;
	/* out (effort_allocate) */
	double stake_ms;	/* occurrences x (bar - bound), bar alone without a bound; NAN: unknown */
	int at_bound;
	int seeds, refine_rounds, fresh_seeds, tuning;	/* refine_rounds 0: no refinement */
	int planned_calls;
};

/* The model calls a task of that effort plans (seeds, refinement rounds of
 * every seed's line, fresh seeds with their rounds, the tuning stages' plan
 * and kernel each; repairs come on top). `stages`: the tuning stages on. */
int effort_calls(int seeds, int refine_rounds, int fresh_seeds, int tuning, int stages);

/*
 * Spreads `budget` calls over the n tasks. `base` is what the flags give
 * a task (its seeds, refinement on or off, its tuning stages); each task's
 * effort is a level of it: its seeds only (a task at its bound gets no
 * more), with refinement, with tuning (the base), then extra refinement
 * rounds and fresh seeds (when refinement is on), each step given to the
 * task with the most time at stake per planned call after it, while the
 * budget holds. Every task gets its seeds. A task whose stake is unknown
 * gets the base. Deterministic: the same figures give the same effort.
 */
void effort_allocate(struct effort_task *t, int n, int budget, const struct pipeline_opts *base);

/* The effort of task `t` as a record ({"stake_ms", "at_bound", "seeds",
 * "refine_rounds", "fresh_seeds", "tuning", "planned_calls", "why"}),
 * `total_ms` the stake of all tasks, `budget` the calls spread. Owned. */
json_t *effort_json(const struct effort_task *t, double total_ms, int budget);

/* The pipeline options of a task with effort `t`: `base` with its seeds,
 * rounds, fresh seeds and tuning, and `why` (borrowed: it must outlive the
 * options) for the decisions of its extra rounds. */
void effort_opts(const struct effort_task *t, const struct pipeline_opts *base, const char *why,
		 struct pipeline_opts *out);

/*
 * The effort of each task of a whole program's run (`paths`, the tasks to
 * run, each the first occurrence of its row in `rows`, whose measured
 * figures it reads: "task_eager_ms", "task_compile_ms",
 * "task_roofline_ms", "occurrences"), spread over `budget` calls from
 * `base` (the run's options): each task's options set in the run
 * (run_set_task_opts) and its row's "effort" (effort_json). Returns
 * {"budget_calls", "planned_calls", "stake_ms", "tasks": [{"task",
 * "effort"}]} (owned).
 */
json_t *effort_apply(struct run *r, json_t *rows, const struct strvec *paths, int budget,
		     const struct pipeline_opts *base);

#endif
