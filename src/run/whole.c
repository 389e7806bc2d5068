/* whole.c: egg optimize --split: a whole program split, its subgraphs optimized as one run, composed, verified end to end. */
#include "whole.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../program/program.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fault.h"
#include "../util/fs.h"
#include "../util/jsonnum.h"
#include "effort.h"
#include "shapes.h"

/* At most this many compositions are tried when the whole fails. */
#define MAX_TRIES 8

/* What became of a subgraph: its row's "status" is the name (whole.h). */
static const struct outcome_row {
	const char *name;
	int tried;		/* a kernel was sought: the Amdahl bound counts it at its roofline */
} outcomes[] = {
	[SG_GLUE] = { "glue", 0 },
	[SG_SKIPPED] = { "skipped", 0 },
	[SG_TASK] = { "task", 0 },
	[SG_WAITING] = { "waiting", 0 },
	[SG_STOPPED] = { "stopped", 0 },
	[SG_AT_SOL] = { "at_sol", 0 },
	[SG_NO_KERNEL] = { "no_kernel", 1 },
	[SG_SLOWER] = { "slower", 1 },
	[SG_OPTIMIZED] = { "optimized", 1 },
	[SG_FAILS_IN_PROGRAM] = { "fails_in_program", 1 },
	[SG_NOT_TRIED] = { "not_tried", 1 },
	[SG_IN_BLOCK] = { "in_block", 0 },
};
#define NOUTCOMES ((int)(sizeof(outcomes) / sizeof(outcomes[0])))

const char *subgraph_outcome_name(enum subgraph_outcome oc)
{
	return (unsigned)oc < (unsigned)NOUTCOMES ? outcomes[oc].name : "?";
}

enum subgraph_outcome subgraph_outcome_of(const char *name)
{
	for (int i = 0; name && i < NOUTCOMES; i++)
		if (!strcmp(name, outcomes[i].name))
			return (enum subgraph_outcome)i;
	return SG_UNKNOWN;
}

/* A row's outcome, and why (owned, or NULL: none to say). */
static void set_outcome(json_t *row, enum subgraph_outcome oc, json_t *why)
{
	json_object_set_new(row, "status", json_string(subgraph_outcome_name(oc)));
	json_object_set_new(row, "why", why ? why : json_null());
}

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

/* Evaluates the composition with kernels `use` against the program. */
static json_t *evaluate_whole(struct run_shared *rs, struct eval_opts *eo, const char *src, const json_t *plan,
			      const char *dir, const json_t *use, const char *out, const json_t *baseline,
			      json_t **composed)
{
	struct buf text = BUF_INIT;
	json_t *res;
	json_decref(*composed);
	if (!(*composed = program_compose(src, plan, dir, use, &(struct compose_opts){ .keep_torch = 1 }, out)) || fs_read(out, &text) < 0)
		return NULL;
	eo->allow_torch = json_integer_value(json_object_get(*composed, "torch_parts")) > 0;
	for (size_t i = 0; i < json_array_size(json_object_get(*composed, "parts")); i++)
		eo->allow_torch |= !strcmp(json_string_value(json_object_get(json_array_get(json_object_get(*composed,
			"parts"), i), "kind")) ?: "", "glue");
	res = eval_candidate_pooled(rs->pool, 0, eo, src, buf_str(&text), baseline);
	buf_release(&text);
	return res;
}

/* What composing the program needs, and the last composition (owned). */
struct whole {
	struct run_shared *rs;
	struct eval_opts eo;
	const char *src;		/* the program's source */
	const json_t *plan, *baseline;
	const char *dir, *program_py;	/* the split folder; the composed file */
	json_t *composed;
	json_t *cuts;			/* the blocks' decisions (blocks_choose), owned */
};

static json_t *compose_and_evaluate(struct whole *w, const json_t *use)
{
	return evaluate_whole(w->rs, &w->eo, w->src, w->plan, w->dir, use, w->program_py, w->baseline, &w->composed);
}

/* The share of the program a subgraph's task covers: its occurrences'
 * shares summed (a repeat's is its first occurrence's task's). */
static double task_share(const json_t *plan, const char *task)
{
	const json_t *sg;
	size_t i;
	double sum = 0;
	json_array_foreach(json_object_get(plan, "subgraphs"), i, sg) {
		if (strcmp(program_task_of(sg) ?: "", task))
			continue;
		if (isnan(json_num(sg, "share")))
			return NAN;
		sum += json_num(sg, "share");
	}
	return sum;
}

/* Puts `row` into `order` (a reference), largest `key` (a share) first;
 * rows without one go last, in the order they come. */
static void insert_by_share(json_t *order, json_t *row, const char *key)
{
	double share = json_num(row, key);
	size_t at = json_array_size(order);
	if (!isnan(share))
		for (size_t k = 0; k < json_array_size(order); k++) {
			double other = json_num(json_array_get(order, k), key);
			if (isnan(other) || share > other) {
				at = k;
				break;
			}
		}
	json_array_insert(order, at, row);
}

/* Whether a row is the first occurrence of a task that will run: it is a
 * task, or a block runs it but another occurrence of its task is one (a
 * fine task inside a chosen block and outside another). */
static int runs_own_task(const json_t *rows, const json_t *row)
{
	enum subgraph_outcome oc = subgraph_outcome_of(json_string_value(json_object_get(row, "status")));
	const char *task = json_string_value(json_object_get(row, "task")) ?: "";
	const json_t *o;
	size_t i;
	if (strcmp(task, json_string_value(json_object_get(row, "file")) ?: ""))
		return 0;
	if (oc == SG_TASK)
		return 1;
	if (oc != SG_IN_BLOCK)
		return 0;
	json_array_foreach(rows, i, o)
		if (!strcmp(json_string_value(json_object_get(o, "task")) ?: "", task) &&
		    subgraph_outcome_of(json_string_value(json_object_get(o, "status"))) == SG_TASK)
			return 1;
	return 0;
}

/*
 * The program budget: the distinct tasks in order of the time they leave
 * after torch.compile (their share of the program's eager time, times
 * what torch.compile makes of them in their task when that was measured,
 * measure_bars), largest first, each task's file onto `paths` in that
 * order (so that the run's token and cost budgets, when they end it early,
 * have spent themselves on the largest); beyond --max-subgraphs N the rest
 * stay PyTorch, each occurrence saying so.
 */
static void by_share_within(json_t *rows, const struct whole_opts *wo, const char *dir, struct strvec *paths)
{
	json_t *order = json_array(), *row, *sg;
	size_t i, k;
	int by_bar = 0;
	json_array_foreach(rows, i, row) {
		if (!runs_own_task(rows, row))
			continue;
		double share = json_num(row, "task_share"), ratio = json_num(row, "task_compile_ratio");
		by_bar |= !isnan(ratio);
		json_object_set_new(row, "share_after_compile",
				    num_or_null(isnan(ratio) ? share : share * fmin(1.0, ratio)));
		insert_by_share(order, row, "share_after_compile");
	}
	json_array_foreach(order, k, row) {
		const char *task = json_string_value(json_object_get(row, "task"));
		if (wo->max_tasks <= 0 || k < (size_t)wo->max_tasks) {
			char *p = fs_join(dir, task);
			strvec_push(paths, p);
			free(p);
			continue;
		}
		json_array_foreach(rows, i, sg)
			if (!strcmp(json_string_value(json_object_get(sg, "task")) ?: "", task) &&
			    subgraph_outcome_of(json_string_value(json_object_get(sg, "status"))) != SG_IN_BLOCK)
				set_outcome(sg, SG_SKIPPED, json_sprintf("beyond --max-subgraphs %d: the %d distinct task(s) %s "
									 "are optimized first", wo->max_tasks, wo->max_tasks,
									 by_bar ? "with the most time left after torch.compile"
										: "of largest share"));
	}
	json_decref(order);
}

/* Whether a subgraph row is the first occurrence of a task some block
 * spans: the block's cut is decided by that task's baseline, however
 * small its share (a residual add under --min-share) or wherever it first
 * occurs (a repeat inside the block). */
static int in_a_block(const json_t *rows, const json_t *row)
{
	const char *task = json_string_value(json_object_get(row, "task")) ?: "";
	const json_t *b, *x;
	size_t i, k;
	if (json_is_true(json_object_get(row, "block")) ||
	    strcmp(task, json_string_value(json_object_get(row, "file")) ?: "") ||
	    !strcmp(json_string_value(json_object_get(row, "status")) ?: "", "glue"))
		return 0;
	json_array_foreach(rows, i, b) {
		if (!json_is_true(json_object_get(b, "block")))
			continue;
		json_array_foreach(json_object_get(b, "replaces"), k, x) {
			const json_t *sg = json_array_get(rows, (size_t)json_integer_value(x));
			if (!strcmp(json_string_value(json_object_get(sg, "task")) ?: "", task))
				return 1;
		}
	}
	return 0;
}

/*
 * Each distinct task's baseline in its own task (eager and torch.compile,
 * its inputs laid out as in the program, its roofline bound), before the
 * tasks run, for every task that runs and every task a block spans: what the user runs decides which go first when
 * --max-subgraphs leaves some out, which cut each block takes, and how
 * the calls are spread (effort.h). Each first occurrence gets
 * "task_eager_ms", "task_compile_ms", "task_roofline_ms" and
 * "task_compile_ratio". The baselines are cached, so the tasks' own runs
 * do not measure them again. Nothing is measured when nothing needs it
 * (all tasks run, no blocks, no budget). 0, or -1 on an infrastructure
 * failure.
 */
static int measure_bars(struct whole *w, json_t *rows, const struct whole_opts *wo, int blocks)
{
	json_t *row;
	size_t i, n = 0;
	json_array_foreach(rows, i, row)
		n += runs_own_task(rows, row);
	if (!blocks && wo->program_calls <= 0 && (wo->max_tasks <= 0 || n <= (size_t)wo->max_tasks))
		return 0;
	json_array_foreach(rows, i, row) {
		struct buf src = BUF_INIT;
		struct pool_slot *slot;
		json_t *b;
		char *path;
		if (!runs_own_task(rows, row) && !in_a_block(rows, row))
			continue;
		path = fs_join(w->dir, json_string_value(json_object_get(row, "task")));
		if (fs_read(path, &src) < 0) {
			free(path);
			return -1;
		}
		free(path);
		slot = pool_acquire(w->rs->pool, 0);
		b = eval_baseline(slot->worker, &w->eo, buf_str(&src));
		pool_release(w->rs->pool, slot);
		buf_release(&src);
		if (!b)
			return -1;
		json_object_set_new(row, "task_eager_ms", num_or_null(json_num(b, "eager_ms")));
		json_object_set_new(row, "task_compile_ms", num_or_null(json_num(b, "compile_ms")));
		json_object_set_new(row, "task_roofline_ms", num_or_null(json_num(b, "roofline_ms")));
		if (json_num(b, "eager_ms") > 0 && json_num(b, "compile_ms") > 0)
			json_object_set_new(row, "task_compile_ratio",
					    json_real(json_num(b, "compile_ms") / json_num(b, "eager_ms")));
		json_decref(b);
	}
	return 0;
}

/* A subgraph row that a chosen block runs. */
static void set_in_block(json_t *row, const char *block)
{
	set_outcome(row, SG_IN_BLOCK, json_sprintf("runs in the block %s, chosen for the coarser cut", block));
}

/* One row per subgraph of the plan, saying what becomes of it (glue, under
 * --min-share, or a task: a subgraph that repeats an earlier one is that
 * one's task), the tasks to run onto `paths` (by_share_within, after
 * measure_bars); NULL on an infrastructure failure. */
static json_t *plan_rows(struct whole *w, const struct whole_opts *wo, struct strvec *paths)
{
	const json_t *plan = w->plan;
	const char *dir = w->dir;
	json_t *rows = json_array(), *sg;
	size_t i;
	json_array_foreach(json_object_get(plan, "subgraphs"), i, sg) {
		const char *file = json_string_value(json_object_get(sg, "file")), *task = program_task_of(sg);
		double share = task_share(plan, task);
		json_t *row = json_pack("{s:O, s:s, s:s, s:o, s:o}", "name", json_object_get(sg, "name"), "file", file,
					"task", task, "share", num_or_null(json_num(sg, "share")), "eager_ms",
					num_or_null(json_num(sg, "eager_ms")));
		json_object_set_new(row, "task_share", num_or_null(share));
		json_object_set(row, "occurrences", json_object_get(sg, "occurrences") ?: json_null());
		if (json_is_string(json_object_get(sg, "noise")))	/* the split's time was noisy */
			json_object_set(row, "noise", json_object_get(sg, "noise"));
		if (json_is_true(json_object_get(sg, "glue"))) {
			set_outcome(row, SG_GLUE, json_string("views only: stays PyTorch"));
		} else if (!isnan(share) && share < wo->min_share) {
			set_outcome(row, SG_SKIPPED, json_sprintf("%.1f%% of the eager time%s, under --min-share %.1f%%",
								  100 * share, strcmp(task, file) ? " with its repeats" : "",
								  100 * wo->min_share));
		} else {
			set_outcome(row, SG_TASK, NULL);
		}
		json_array_append_new(rows, row);
	}
	{
		/* The blocks, measured beside the subgraphs, then the cut of each. */
		json_t *brows = blocks_rows(plan), *all = json_copy(rows);
		json_array_extend(all, brows);
		if (measure_bars(w, all, wo, json_array_size(brows) > 0) < 0) {
			json_decref(all);
			json_decref(brows);
			json_decref(rows);
			return NULL;
		}
		json_decref(all);
		w->cuts = blocks_choose(rows, brows, wo->cut, !strcmp(w->eo.device, "cpu"), set_in_block);
		json_decref(brows);
	}
	by_share_within(rows, wo, dir, paths);
	return rows;
}

/* A subgraph task's outcome onto its row; returns 1 when its kernel goes
 * into the program (it passed and beat the subgraph's eager time; on the
 * CPU every kernel found: interpreter times say nothing about speed). */
static int take_result(json_t *sg, const struct task_state *ts, int cpu, int *unfinished)
{
	const json_t *res = ts->result;
	double se = json_num(res, "speedup_eager"), sc = json_num(res, "speedup_compile");
	/* The bar is the user's: the faster of eager and torch.compile for the
	 * part; for a block, also its subgraphs run their best way (a block can
	 * never make the program slower than the fine cut would). */
	double best = isnan(sc) ? se : isnan(se) ? sc : fmin(se, sc), fine = json_num(sg, "fine_bar_ms");
	if (fine > 0 && json_num(res, "kernel_ms") > 0)
		best = fmin(isnan(best) ? INFINITY : best, fine / json_num(res, "kernel_ms"));
	static const char *const copied[] = { "kernel_ms", "speedup_eager", "speedup_compile", "sol_pct", "eager_sol_pct",
					      "roofline_ms" };
	json_object_set_new(sg, "task_id", json_string(ts->task_id));
	json_object_set_new(sg, "speedup_best", num_or_null(best));
	json_object_set(sg, "usage", json_object_get(res, "usage") ?: json_null());
	if (json_object_get(res, "extras"))
		json_object_set(sg, "extras", json_object_get(res, "extras"));
	if (json_num(res, "eager_ms") > 0 && json_num(res, "compile_ms") > 0)
		json_object_set_new(sg, "task_compile_ratio", json_real(json_num(res, "compile_ms") / json_num(res, "eager_ms")));
	for (size_t k = 0; k < sizeof(copied) / sizeof(copied[0]); k++)
		json_object_set(sg, copied[k], json_object_get(res, copied[k]) ?: json_null());
	if (!json_is_number(json_object_get(sg, "task_eager_ms")))	/* the task alone, as its kernel was timed */
		json_object_set(sg, "task_eager_ms", json_object_get(res, "eager_ms") ?: json_null());
	if (cpu) {
		/* Interpreted kernels against the CPU's peaks: no speed of light. */
		json_object_set_new(sg, "sol_pct", json_null());
		json_object_set_new(sg, "eager_sol_pct", json_null());
		json_object_set_new(sg, "roofline_ms", json_null());
	}
	/* Why, in words: the task's stop, else what its result says of no
	 * kernel (an older record kept that in its stop_reason). */
	json_t *why = ts->stop.cause != STOP_NONE ? json_string(ts->stop.reason)
						   : json_incref(json_object_get(res, "no_kernel") ?: json_object_get(res, "stop_reason"));
	if (ts->status == TASK_WAITING || ts->status == TASK_STOPPED) {
		(*unfinished)++;
		set_outcome(sg, ts->status == TASK_WAITING ? SG_WAITING : SG_STOPPED, why);
	} else if (json_is_true(json_object_get(res, "skipped_at_sol"))) {
		set_outcome(sg, SG_AT_SOL, why);
	} else if (!json_is_true(json_object_get(res, "found"))) {
		set_outcome(sg, SG_NO_KERNEL, why);
	} else if (!cpu && !(best > 1)) {
		json_decref(why);
		set_outcome(sg, SG_SLOWER, json_sprintf("%.2fx of the faster of eager and torch.compile (%s): the "
							"subgraph stays PyTorch", best,
							fine > 0 && fine / json_num(res, "kernel_ms") <= fmin(se, sc)
								? "its subgraphs run their best way"
								: isnan(sc) || se <= sc ? "eager" : "torch.compile"));
	} else {
		json_decref(why);
		set_outcome(sg, SG_OPTIMIZED, NULL);
		return 1;
	}
	return 0;
}

/* The kernels of the subgraph tasks that go into the program, by file. */
static json_t *collect_kernels(struct run *r, json_t *rows, int cpu, int *unfinished)
{
	json_t *kernels = json_object(), *sg;
	size_t i;
	for (int t = 0; t < run_task_count(r); t++) {
		const struct task_state *ts = run_task(r, t);
		const char *base = strrchr(ts->path, '/') ? strrchr(ts->path, '/') + 1 : ts->path;
		/* Every occurrence of the task: each takes its outcome and kernel. */
		json_array_foreach(rows, i, sg) {
			int repeat = strcmp(json_string_value(json_object_get(sg, "file")) ?: "", base), ignored = 0;
			if (subgraph_outcome_of(json_string_value(json_object_get(sg, "status"))) == SG_IN_BLOCK)
				continue;	/* its block runs it */
			if (!strcmp(json_string_value(json_object_get(sg, "task")) ?: "", base) &&
			    take_result(sg, ts, cpu, repeat ? &ignored : unfinished))
				json_object_set(kernels, json_string_value(json_object_get(sg, "file")),
						json_object_get(ts->result, "final_kernel"));
		}
	}
	return kernels;
}

/*
 * The parts passed alone but not together (a subgraph's inputs in the
 * program differ from the ones its task drew): kernels one by one, in order
 * of share, each kept when the whole still passes. Returns the evaluation
 * of the program as written at the end, with the kernels kept (composed
 * again when the last one tried failed: the file must be what was judged),
 * and replaces *kernels by the ones kept; NULL on an infrastructure failure.
 */
static json_t *keep_what_composes(struct whole *w, json_t *rows, json_t **kernels, json_t *out, json_t *first)
{
	json_t *use = json_object(), *order = json_array(), *e2e = NULL, *sg;
	int written_is_kept = 0;	/* whether program_py holds `use` */
	size_t i;
	json_array_foreach(rows, i, sg)
		if (json_object_get(*kernels, json_string_value(json_object_get(sg, "file"))))
			insert_by_share(order, sg, "share");
	for (size_t k = MAX_TRIES; k < json_array_size(order); k++) {
		set_outcome(json_array_get(order, k), SG_NOT_TRIED,
			    json_sprintf("the first composition failed, and only the %d kernels of largest share are "
					 "tried one by one in the program", MAX_TRIES));
	}
	for (size_t k = 0; k < json_array_size(order) && k < MAX_TRIES; k++) {
		json_t *row = json_array_get(order, k), *res;
		const char *file = json_string_value(json_object_get(row, "file"));
		json_object_set(use, file, json_object_get(*kernels, file));
		if (!(res = compose_and_evaluate(w, use)))
			goto fail;
		written_is_kept = eval_passed(res);
		if (written_is_kept) {
			json_decref(e2e);
			e2e = res;
			continue;
		}
		json_object_del(use, file);
		set_outcome(row, SG_FAILS_IN_PROGRAM, json_sprintf("the whole failed with it: %s",
								   json_string_value(json_object_get(res, "reason")) ?: "?"));
		json_decref(res);
	}
	if (!written_is_kept) {
		json_decref(e2e);
		if (!(e2e = compose_and_evaluate(w, use)))
			goto fail;
	}
	json_object_set_new(out, "first_composition", json_pack("{s:O, s:O}", "verdict", json_object_get(first, "verdict"),
								  "reason", json_object_get(first, "reason")));
	json_decref(*kernels);
	*kernels = use;
	json_decref(order);
	return e2e;
fail:
	json_decref(use);
	json_decref(order);
	json_decref(e2e);
	return NULL;
}

/*
 * The composed program at shapes it was not split at (shapes.c); where it
 * passed, the program is composed again to run its kernels there too
 * (plan "checked_shapes"; the parts are those judged at the traced shapes).
 * -1 on an infrastructure failure.
 */
static int other_shapes(struct whole *w, const json_t *rows, const json_t *kernels, json_t *out,
			const struct whole_opts *wo)
{
	char *scratch = fs_join(w->rs->runs_dir, "shapes_check.py");
	json_t *found = shapes_check(w->rs, &w->eo, w->src, w->plan, w->dir, rows, kernels, scratch,
				     wo->progress == RUN_QUIET), *plan, *summary;
	int rc = -1;
	unlink(scratch);
	free(scratch);
	if (!found)
		return -1;
	json_object_set_new(out, "other_shapes", found);
	if (!json_array_size(json_object_get(found, "checked")))
		return 0;
	plan = json_deep_copy(w->plan);
	json_object_set(plan, "checked_shapes", json_object_get(found, "checked"));
	summary = program_compose(w->src, plan, w->dir, kernels, &(struct compose_opts){ .keep_torch = 1 }, w->program_py);
	rc = summary ? 0 : -1;
	json_decref(summary);
	json_decref(plan);
	return rc;
}

/* The fastest way that ran of one side's ways ({WAY: {"wall_ms", ...}}):
 * {"way", "wall_ms", "device_ms"} (owned), or null when none ran. */
static json_t *best_way(const json_t *ways)
{
	const char *way, *best = NULL;
	const json_t *w, *b = NULL;
	json_object_foreach((json_t *)ways, way, w)
		if (!isnan(json_num(w, "wall_ms")) && (!b || json_num(w, "wall_ms") < json_num(b, "wall_ms"))) {
			best = way;
			b = w;
		}
	return b ? json_pack("{s:s, s:o, s:o, s:O}", "way", best, "wall_ms", num_or_null(json_num(b, "wall_ms")),
			     "device_ms", num_or_null(json_num(b, "device_ms")), "wall_rounds_ms",
			     json_object_get(b, "wall_rounds_ms") ?: json_null())
		 : json_null();
}

/* The fastest and slowest of a way's rounds ("wall_rounds_ms"); a record
 * without rounds (an older worker) has its one figure as both. */
static void round_range(const json_t *way, double *lo, double *hi)
{
	const json_t *r = json_object_get(way, "wall_rounds_ms"), *v;
	size_t i;
	*lo = *hi = json_num(way, "wall_ms");
	json_array_foreach(r, i, v) {
		double x = json_number_value(v);
		if (!json_is_number(v) || isnan(x))
			continue;
		if (i == 0 || x < *lo)
			*lo = x;
		if (i == 0 || x > *hi)
			*hi = x;
	}
}

int whole_clearly_faster(const json_t *original, const json_t *dropin)
{
	double olo, ohi, dlo, dhi;
	round_range(original, &olo, &ohi);
	round_range(dropin, &dlo, &dhi);
	return !isnan(ohi) && !isnan(dhi) && dhi > 0 && dhi < olo;
}

/*
 * The user's clock (eval_usertime): the original and the drop-in each run
 * every way a user runs a model, and the best of each compared by wall
 * clock per forward, launch included (the median of USER_CLOCK_ROUNDS
 * rounds). On a GPU that comparison decides ("judged"): a drop-in whose
 * best way is not faster than the original's, every round of it against
 * every round of the original's (whole_clearly_faster), is not a result
 * (the verdict's judged and faster: outcome.c gives exit 1, no -o);
 * "within_noise" says when the medians alone
 * would have called it faster. On the CPU interpreted kernels are always
 * slower and the figures are recorded unjudged, from one round, unless
 * EGG_JUDGE_CPU_SPEED=1 (the tests of the rule). -1 on an infrastructure
 * failure.
 */
#define USER_CLOCK_CALLS 100
#define USER_CLOCK_ROUNDS 3

/* The name of a best way ("compiled", ...), owned, or NULL. */
static char *way_of(const json_t *way)
{
	const char *name = json_string_value(json_object_get(way, "way"));
	return name ? xstrdup(name) : NULL;
}

static int user_clock(struct whole *w, json_t *out, int cpu, struct program_verdict *v)
{
	struct buf text = BUF_INIT;
	struct pool_slot *slot;
	json_t *res, *orig, *drop;
	const char *judge_cpu = getenv("EGG_JUDGE_CPU_SPEED");
	int judged = !cpu || (judge_cpu && !strcmp(judge_cpu, "1")), faster;
	double a, b;
	if (fs_read(w->program_py, &text) < 0)
		return -1;
	slot = pool_acquire(w->rs->pool, 0);
	res = eval_usertime(slot->worker, &w->eo, w->src, buf_str(&text), USER_CLOCK_CALLS,
			    judged ? USER_CLOCK_ROUNDS : 1);
	pool_release(w->rs->pool, slot);
	buf_release(&text);
	if (!res)
		return -1;
	orig = best_way(json_object_get(res, "original"));
	drop = best_way(json_object_get(res, "dropin"));
	a = json_num(orig, "wall_ms");
	b = json_num(drop, "wall_ms");
	faster = json_is_object(orig) && json_is_object(drop) && whole_clearly_faster(orig, drop);
	v->judged = judged;
	v->faster = faster;
	v->within_noise = !faster && !isnan(a) && !isnan(b) && b < a;
	v->original_ms = a;
	v->dropin_ms = b;
	v->original_way = way_of(orig);
	v->dropin_way = way_of(drop);
	json_object_set_new(res, "calls", json_integer(USER_CLOCK_CALLS));
	json_object_set_new(res, "best_original", orig);
	json_object_set_new(res, "best_dropin", drop);
	json_object_set_new(res, "speedup", !isnan(a) && !isnan(b) && b > 0 ? json_real(a / b) : json_null());
	json_object_set_new(res, "faster", json_boolean(faster));
	json_object_set_new(res, "within_noise", json_boolean(v->within_noise));
	json_object_set_new(res, "judged", json_boolean(judged));
	json_object_set_new(out, "user_clock", res);
	return 0;
}

/* The model calls and tokens of the program's tasks, and the calls one
 * task per subgraph would have taken (each occurrence of a repeated
 * subgraph at the calls its task took): what merging repeats saved. */
static json_t *program_usage(const json_t *rows)
{
	const json_t *sg;
	size_t i;
	long long calls = 0, unmerged = 0, prompt = 0, completion = 0;
	json_array_foreach(rows, i, sg) {
		const json_t *u = json_object_get(sg, "usage");
		long long n = json_integer_value(json_object_get(u, "calls"));
		if (!u || strcmp(json_string_value(json_object_get(sg, "task")) ?: "",
				 json_string_value(json_object_get(sg, "file")) ?: ""))
			continue;	/* a repeat: its task's calls are counted once */
		calls += n;
		unmerged += n * (json_integer_value(json_object_get(sg, "occurrences")) ?: 1);
		prompt += json_integer_value(json_object_get(u, "prompt_tokens"));
		completion += json_integer_value(json_object_get(u, "completion_tokens"));
	}
	return json_pack("{s:I, s:I, s:I, s:I}", "calls", (json_int_t)calls, "prompt_tokens", (json_int_t)prompt,
			 "completion_tokens", (json_int_t)completion, "calls_without_merging", (json_int_t)unmerged);
}

/* The whole's end-to-end figures. */
static json_t *end_to_end(const json_t *e2e, const json_t *baseline, int allow_torch)
{
	json_t *o = json_pack("{s:O, s:b}", "verdict", json_object_get(e2e, "verdict"), "allow_torch", allow_torch);
	static const char *const from_eval[] = { "stage", "reason", "kernel_ms", "speedup_eager", "speedup_compile" };
	for (size_t k = 0; k < sizeof(from_eval) / sizeof(from_eval[0]); k++)
		json_object_set(o, from_eval[k], json_object_get(e2e, from_eval[k]) ?: json_null());
	json_object_set(o, "eager_ms", json_object_get(baseline, "eager_ms") ?: json_null());
	json_object_set(o, "compile_ms", json_object_get(baseline, "compile_ms") ?: json_null());
	json_object_set(o, "flags", json_object_get(e2e, "flags"));
	return o;
}

/* Amdahl: the whole's time from its parts, over the sum of their eager
 * times in the program (the split's measurement). One measurement: a used
 * kernel's part counts at its time in the program over its speedup in its
 * own task (the two eager times of a subgraph, in the program and in its
 * task, differ); an optimized one at its roofline bound (bound); the rest
 * at their eager time. `skipped_*`: the subgraphs left in PyTorch by the
 * budget (--min-share, --max-subgraphs), their time, and what the parts
 * would give with them at no time at all (what they could still add).
 *
 * Against the user's bar (best_speedup): each part under torch.compile at
 * its time in the program times torch.compile's ratio in its own task
 * (task_compile_ratio), or the whole program's ratio (`compile_ratio`)
 * for a part whose task did not measure one; the original run its better
 * way (eager or compiled) over the drop-in run its better way (plain, or
 * compiled: its kernels as they are, the rest under torch.compile). NaN
 * compile_ratio and a part without its own: no such figure. */
json_t *whole_amdahl(const json_t *rows, double compile_ratio, int cpu)
{
	double eager = 0, parts = 0, bound = 0, skipped = 0, compiled = 0, parts_compiled = 0;
	int compiled_known = !cpu;
	const json_t *sg;
	size_t i;
	json_array_foreach(rows, i, sg) {
		double e = json_num(sg, "eager_ms"), k = json_num(sg, "kernel_ms"), b = json_num(sg, "roofline_ms");
		double x = json_num(sg, "speedup_eager"), r = json_num(sg, "task_compile_ratio"), mine;
		enum subgraph_outcome oc = subgraph_outcome_of(json_string_value(json_object_get(sg, "status")));
		int used = json_is_true(json_object_get(sg, "used")), tried = oc != SG_UNKNOWN && outcomes[oc].tried;
		if (isnan(e) || oc == SG_IN_BLOCK)
			continue;	/* a block's subgraph: in its block's row */
		if (isnan(r))
			r = compile_ratio;
		eager += e;
		if (used && !isnan(x) && x > 0)
			mine = e / x;
		else
			mine = used && !isnan(k) ? k : e;
		parts += mine;
		compiled += e * r;
		parts_compiled += used ? mine : e * r;
		compiled_known &= !isnan(r);
		bound += tried && !isnan(b) && b > 0 ? fmin(b, e) : e;
		if (oc == SG_SKIPPED)
			skipped += e;
	}
	return json_pack("{s:o, s:o, s:o, s:f, s:f, s:o, s:s}", "parts_speedup",
			 eager > 0 && parts > 0 ? json_real(eager / parts) : json_null(), "best_speedup",
			 compiled_known && eager > 0 && parts > 0 && parts_compiled > 0
				 ? json_real(fmin(eager, compiled) / fmin(parts, parts_compiled)) : json_null(),
			 "bound_speedup",
			 eager > 0 && bound > 0 && !cpu ? json_real(eager / bound) : json_null(), "skipped_ms", skipped,
			 "skipped_share", eager > 0 ? skipped / eager : 0.0,
			 "without_skipped_speedup", skipped > 0 && parts > skipped ? json_real(eager / (parts - skipped))
										  : json_null(),
			 "basis", "the sum of the subgraphs' eager times in the program, with each used kernel's part at "
			 "that time over its speedup in its own task (parts) or every optimized subgraph at its roofline "
			 "bound (bound); against the faster of eager and torch.compile, each part compiled at its task's "
			 "torch.compile ratio (best)");
}

/*
 * RUN_DIR/program.json, which the reports read. When it cannot be written
 * an earlier pass's record is removed (a report must not show it as this
 * pass's), the run is stopped and why is said: -1 with ERR_INFRA.
 */
static int write_record(struct run *r, const json_t *prog)
{
	char *path = fs_join(run_dir(r), "program.json"), *text = json_dumps(prog, JSON_INDENT(1)), *why;
	int rc = 0;
	if (fault_hit("program_json"))
		err_set(ERR_INFRA, "cannot write '%s': no space left on device (fault point EGG_FAULT=program_json)", path);
	else if (text && fs_write_atomic(path, text, strlen(text)) == 0)
		goto out;
	else if (!text)
		err_set(ERR_INFRA, "cannot write '%s': out of memory", path);
	why = xasprintf("the program's record could not be written: %s", err_msg());
	unlink(path);
	run_mark_stopped(r, why);
	err_set(ERR_INFRA, "%s", why);
	free(why);
	rc = -1;
out:
	free(text);
	free(path);
	return rc;
}

/* No kernel went into the finished program: what was verified is the
 * program itself, and its time against eager is noise, no speedup. The
 * record says so ("unchanged", why) in place of the speedups; 1 when it
 * is unchanged. */
static int say_if_unchanged(json_t *out)
{
	json_t *e = json_object_get(out, "end_to_end"), *sg;
	int found = 0;
	size_t i;
	if (!json_is_true(json_object_get(out, "finished")))
		return 0;
	json_array_foreach(json_object_get(out, "subgraphs"), i, sg) {
		const char *status = json_string_value(json_object_get(sg, "status"));
		enum subgraph_outcome oc = subgraph_outcome_of(status);
		if (json_is_true(json_object_get(sg, "used")))
			return 0;
		found |= oc == SG_SLOWER || oc == SG_FAILS_IN_PROGRAM || oc == SG_NOT_TRIED;
	}
	json_object_set_new(e, "speedup_eager", json_null());
	json_object_set_new(e, "speedup_compile", json_null());
	json_object_set_new(out, "unchanged", json_true());
	json_object_set_new(out, "why_unchanged", json_string(found ? "no kernel went into the program: it is unchanged"
								    : "no kernel found: the program is unchanged"));
	return 1;
}

/*
 * The finished tasks' kernels composed into the program (fewer when the
 * whole fails with them: keep_what_composes), checked end to end, and,
 * when it passed with kernels in it, checked at the program's other shapes
 * and timed by the user's clock. The record gets each figure and the
 * verdict what it decides. -1 on an infrastructure failure.
 */
static int compose_checked(struct whole *w, json_t *rows, json_t **kernels, json_t *out, const struct whole_opts *wo,
			   int cpu, struct program_verdict *v)
{
	json_t *sg, *e2e = compose_and_evaluate(w, *kernels);
	const json_t *b = w->baseline;
	size_t i;
	int rc = -1;
	if (e2e && !eval_passed(e2e) && json_object_size(*kernels)) {
		json_t *first = e2e;
		e2e = keep_what_composes(w, rows, kernels, out, first);
		json_decref(first);
	}
	if (!e2e)
		return -1;
	json_array_foreach(rows, i, sg)
		json_object_set_new(sg, "used", json_boolean(json_object_get(*kernels, json_string_value(
			json_object_get(sg, "file"))) != NULL));
	json_object_set_new(out, "composed", json_string(w->program_py));
	json_object_set_new(out, "finished", json_true());
	json_object_set_new(out, "end_to_end", end_to_end(e2e, b, w->eo.allow_torch));
	json_object_set_new(out, "amdahl", whole_amdahl(rows, json_num(b, "eager_ms") > 0
					   ? json_num(b, "compile_ms") / json_num(b, "eager_ms") : NAN, cpu));
	v->finished = 1;
	v->passed = eval_passed(e2e);
	v->composed = xstrdup(w->program_py);
	if (json_string_value(json_object_get(e2e, "reason")))
		v->reason = xstrdup(json_string_value(json_object_get(e2e, "reason")));
	if (!v->passed || !json_object_size(*kernels) ||
	    (other_shapes(w, rows, *kernels, out, wo) == 0 && user_clock(w, out, cpu, v) == 0))
		rc = 0;
	json_decref(e2e);
	return rc;
}

json_t *run_whole_program(struct run *r, const char *task_path, const struct whole_opts *wo, struct program_verdict *v)
{
	struct run_shared *rs = run_shared(r);
	struct whole w = { rs, rs->eo, NULL, NULL, NULL, NULL, NULL, NULL, NULL };
	struct strvec paths = STRVEC_INIT;
	struct buf src = BUF_INIT;
	struct pool_slot *slot;
	json_t *plan = NULL, *baseline = NULL, *facts = NULL, *out = NULL, *rows, *kernels = NULL;
	char *dir = fs_join(run_dir(r), "split"), *program_py = fs_join(run_dir(r), "program.py");
	int cpu, unfinished = 0;

	w.eo.device = pool_device_name(rs->pool, 0);
	w.eo.lock = pool_device_lock(rs->pool, 0);
	w.eo.cache = rs->cache;
	w.eo.cache_verdicts = 1;
	cpu = !strcmp(w.eo.device, "cpu");
	if (fs_read(task_path, &src) < 0)
		goto out;
	/* The split (a resumed run keeps its own), then the program's own baseline. */
	if (!fs_exists(dir) || !(plan = program_load_plan(dir))) {
		err_clear();
		slot = pool_acquire(rs->pool, 0);
		plan = program_split(slot->worker, &w.eo, task_path, buf_str(&src), 1, dir);
		pool_release(rs->pool, slot);
		if (!plan)
			goto out;
	} else if (!program_plan_fits(plan, buf_str(&src))) {
		err_set(ERR_INPUT, "'%s' changed since run %s split it: optimize it in a new run (without --resume)",
			task_path, run_id(r));
		goto out;
	}
	/* The composed program runs its kernels on the device type they are checked on here. */
	json_object_set_new(plan, "kernels_checked_on", json_stringn(w.eo.device, strcspn(w.eo.device, ":")));
	slot = pool_acquire(rs->pool, 0);
	facts = eval_device_facts(slot->worker, w.eo.device);
	if (facts)
		pool_set_memory(rs->pool, 0, eval_device_budget(facts, w.eo.device));
	baseline = facts ? eval_baseline(slot->worker, &w.eo, buf_str(&src)) : NULL;
	pool_release(rs->pool, slot);
	if (!baseline)
		goto out;
	w.src = buf_str(&src);
	w.plan = plan;
	w.baseline = baseline;
	w.dir = dir;
	w.program_py = program_py;
	if (!(rows = plan_rows(&w, wo, &paths)))
		goto out;
	out = json_pack("{s:s, s:s, s:o, s:b, s:O}", "task", task_path, "split_dir", dir, "subgraphs", rows, "finished", 0,
			"cuts", w.cuts);
	if (paths.n && (run_add_tasks(r, &paths, NULL) < 0 ||
			(wo->program_calls > 0 && json_object_set_new(out, "effort", effort_apply(r, rows, &paths,
				wo->program_calls, &rs->po)) < 0)))
		goto bad;
	if (paths.n)
		run_execute(r, 0, wo->progress);
	kernels = collect_kernels(r, rows, cpu, &unfinished);
	json_object_set_new(out, "llm", program_usage(rows));
	if (unfinished)
		json_object_set_new(out, "why_unfinished",
				    json_sprintf("%d subgraph task(s) have not finished (they wait for replies or stopped)",
						 unfinished));
	else if (compose_checked(&w, rows, &kernels, out, wo, cpu, v) < 0)
		goto bad;
	v->unchanged = say_if_unchanged(out);
	if (write_record(r, out) == 0)
		goto out;
bad:
	json_decref(out);
	out = NULL;
out:
	json_decref(plan);
	json_decref(baseline);
	json_decref(facts);
	json_decref(kernels);
	json_decref(w.composed);
	json_decref(w.cuts);
	strvec_clear(&paths);
	buf_release(&src);
	free(dir);
	free(program_py);
	return out;
}
