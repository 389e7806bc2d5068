/* report.c: metrics over a run's tasks, and their text and CSV renderings (HTML: report_html.c). */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../eval/eval.h"
#include "../pipeline/stages.h"
#include "../store/store.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/jsonnum.h"
#include "format.h"

struct acc {
	int n;
	double sum, logsum;
};

static void acc_add(struct acc *a, double v)
{
	if (isnan(v) || v <= 0)
		return;
	a->n++;
	a->sum += v;
	a->logsum += log(v);
}

static json_t *acc_json(const struct acc *a)
{
	return json_pack("{s:o, s:o, s:i}", "mean", a->n ? json_real(a->sum / a->n) : json_null(), "geomean",
			 a->n ? json_real(exp(a->logsum / a->n)) : json_null(), "n", a->n);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The distribution of a %SOL field over the rows that have it (and, for the
 * kernel's, found one): median, mean, n, and counts in bins of 25%. */
static json_t *sol_stats(const json_t *rows, const char *key, int found_only)
{
	size_t n = 0, i;
	const json_t *r;
	double *v = xcalloc(json_array_size(rows) + 1, sizeof(double)), sum = 0, bins[5] = { 0 };
	json_t *out;
	json_array_foreach(rows, i, r) {
		double x = json_num(r, key);
		if (isnan(x) || (found_only && !json_is_true(json_object_get(r, "found"))))
			continue;
		v[n++] = x;
		sum += x;
		bins[x < 25 ? 0 : x < 50 ? 1 : x < 75 ? 2 : x < 90 ? 3 : 4]++;
	}
	qsort(v, n, sizeof(double), by_value);
	out = json_pack("{s:o, s:o, s:i, s:[f, f, f, f, f]}", "median",
			n ? json_real(n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : json_null(), "mean",
			n ? json_real(sum / n) : json_null(), "n", (int)n, "bins", bins[0], bins[1], bins[2], bins[3], bins[4]);
	free(v);
	return out;
}

/* Why a task has not finished, in words. */
static const char *not_finished_why(const json_t *r, enum task_status ts)
{
	const char *why = json_string_value(json_object_get(r, "stop_reason"));
	if (ts == TASK_STOPPED)
		return why ? why : "an infrastructure failure";
	if (ts == TASK_WAITING)
		return "it waits for a reply in the --llm-spool folder";
	return ts == TASK_RUNNING ? "egg stopped while it ran (resume the run)" : "it has not started";
}

/* What each rule on the profile saved (pipeline/ask.h), over every task,
 * finished or not: [{rule, stage, decided, calls_saved}] in the order met. */
static json_t *rules_saved(const json_t *rows)
{
	json_t *out = json_array();
	const json_t *r, *skip;
	size_t i, j, k;
	json_array_foreach(rows, i, r)
		json_array_foreach(json_object_get(r, "rule_skips"), j, skip) {
			const char *rule = json_string_value(json_object_get(skip, "rule")) ?: "?";
			json_t *agg = NULL, *a;
			json_array_foreach(out, k, a)
				if (!strcmp(json_string_value(json_object_get(a, "rule")), rule))
					agg = a;
			if (!agg) {
				agg = json_pack("{s:s, s:O, s:i, s:i}", "rule", rule, "stage", json_object_get(skip, "stage"),
						"decided", 0, "calls_saved", 0);
				json_array_append_new(out, agg);
			}
			json_object_set_new(agg, "decided", json_integer(json_integer_value(json_object_get(agg, "decided")) + 1));
			json_object_set_new(agg, "calls_saved",
					    json_integer(json_integer_value(json_object_get(agg, "calls_saved")) +
							 json_integer_value(json_object_get(skip, "calls_saved"))));
		}
	return out;
}

/* The sums over a group's task rows that its metrics are made of (metrics). */
struct tally {
	struct acc eager, compile, existing, gains[STAGE_COUNT];
	double fast[4];		/* correct and faster than eager by more than 0, 1, 1.5, 2 times */
	double tokens_in, tokens_out, tokens_cached, tokens_written, tokens_reasoning, cost, cache_saved, wall;
	double calls, cached_calls;	/* over every task, finished or not */
	int finished, failed, waiting, stopped, success;
	json_t *pending, *not_finished;
};

/* A figure of a row that counts only when positive (a missing one is NaN). */
static double positive(const json_t *r, const char *key)
{
	double v = json_num(r, key);
	return v > 0 ? v : 0;
}

/* A task that has not finished (waiting, stopped, interrupted): in no rate. */
static void tally_unfinished(struct tally *t, const json_t *r, enum task_status ts)
{
	json_array_append_new(t->not_finished, json_pack("{s:O, s:s, s:s}", "task_id", json_object_get(r, "task_id"),
							 "status", task_status_name(ts), "because",
							 not_finished_why(r, ts)));
	t->waiting += ts == TASK_WAITING;
	t->stopped += ts == TASK_STOPPED;
	if (ts == TASK_WAITING && json_is_string(json_object_get(r, "pending_key")))
		json_array_append(t->pending, json_object_get(r, "pending_key"));
}

/* A finished task: its verdict, speedups, usage, and each stage's gain (the
 * best time before the stage over the best after it). */
static void tally_finished(struct tally *t, const json_t *r, enum task_status ts)
{
	static const double ps[4] = { 0, 1, 1.5, 2 };
	double se = json_num(r, "speedup_eager"), prev = NAN, saved = json_num(r, "cache_saved_usd");
	const json_t *row;
	size_t j;
	t->finished++;
	t->failed += ts == TASK_FAILED;
	if (json_is_true(json_object_get(r, "found"))) {
		t->success++;
		acc_add(&t->eager, se);
		acc_add(&t->compile, json_num(r, "speedup_compile"));
		acc_add(&t->existing, json_num(r, "speedup_existing"));
		for (int k = 0; k < 4; k++)
			if (!isnan(se) && se > ps[k])
				t->fast[k]++;
	}
	t->tokens_in += positive(r, "prompt_tokens");
	t->tokens_out += positive(r, "completion_tokens");
	t->tokens_cached += positive(r, "cached_prompt_tokens");
	t->tokens_written += positive(r, "cache_write_tokens");
	t->tokens_reasoning += positive(r, "reasoning_tokens");
	t->cost += positive(r, "cost_usd");
	t->cache_saved += isnan(saved) ? 0 : saved;	/* negative when the cache cost more than it saved */
	t->wall += positive(r, "wall_s");
	json_array_foreach(json_object_get(r, "stages"), j, row) {
		const struct stage *sg = stage_by_name(json_string_value(json_object_get(row, "stage")) ?: "");
		double ms = json_num(row, "kernel_ms");
		if (sg && sg->id != STAGE_SEED && !isnan(prev) && !isnan(ms) && ms > 0)
			acc_add(&t->gains[sg->id], prev / ms);
		if (!isnan(ms))
			prev = ms;
	}
}

/* Each tuning stage's gain, with the product of the geomeans so far. */
static json_t *stage_gains(const struct tally *t)
{
	json_t *out = json_array();
	double cumulative = 1;
	for (int s = STAGE_REFINE; s < STAGE_COUNT; s++) {
		const struct acc *g = &t->gains[s];
		if (!g->n)
			continue;
		cumulative *= exp(g->logsum / g->n);
		json_array_append_new(out, json_pack("{s:s, s:s, s:f, s:f, s:f, s:i}", "stage", stages[s].name, "title",
						     stages[s].title, "gain_mean", g->sum / g->n, "gain_geomean",
						     exp(g->logsum / g->n), "cumulative", cumulative, "n", g->n));
	}
	return out;
}

/* A sum over the finished tasks as a figure per finished task; null when none finished. */
static json_t *per_task(const struct tally *t, double sum)
{
	return t->finished ? json_real(sum / t->finished) : json_null();
}

/* Tokens the speed-of-light stop saved (estimates, see pipeline.c). */
static void sol_stops(json_t *out, const json_t *rows)
{
	double saved = 0;
	int stops = 0;
	size_t i;
	const json_t *r;
	json_array_foreach(rows, i, r) {
		const json_t *st = json_object_get(r, "sol_stop");
		if (json_is_object(st)) {
			stops++;
			saved += json_num(st, "tokens_saved_est");
		}
	}
	json_object_set_new(out, "sol_stops", json_integer(stops));
	json_object_set_new(out, "sol_tokens_saved_est", json_real(saved));
}

/* Metrics over the task rows in `rows` (report.h). */
static json_t *metrics(const json_t *rows)
{
	struct tally t;
	size_t i;
	const json_t *r;
	json_t *out;

	memset(&t, 0, sizeof(t));
	t.pending = json_array();
	t.not_finished = json_array();
	json_array_foreach(rows, i, r) {
		enum task_status ts = task_status_of(json_string_value(json_object_get(r, "status")));
		t.calls += positive(r, "llm_calls");
		t.cached_calls += positive(r, "cached_calls");
		if (task_status_judged(ts))
			tally_finished(&t, r, ts);
		else
			tally_unfinished(&t, r, ts);
	}
	out = json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:o, s:o}", "tasks", (int)json_array_size(rows), "finished",
			t.finished, "failed", t.failed, "success", t.success, "waiting", t.waiting, "stopped", t.stopped,
			"pending_keys", t.pending, "not_finished", t.not_finished);
	/* Rates over the finished tasks only (a task that has not finished has no verdict yet). */
	/* Every task's model calls, and how many the reply cache answered (nothing sent, nothing paid). */
	json_object_set_new(out, "llm_calls", json_integer((json_int_t)t.calls));
	json_object_set_new(out, "cached_calls", json_integer((json_int_t)t.cached_calls));
	json_object_set_new(out, "success_rate", per_task(&t, t.success));
	json_object_set_new(out, "fast_0", per_task(&t, t.fast[0]));
	json_object_set_new(out, "fast_1", per_task(&t, t.fast[1]));
	json_object_set_new(out, "fast_1_5", per_task(&t, t.fast[2]));
	json_object_set_new(out, "fast_2", per_task(&t, t.fast[3]));
	json_object_set_new(out, "speedup_eager", acc_json(&t.eager));
	json_object_set_new(out, "speedup_compile", acc_json(&t.compile));
	json_object_set_new(out, "speedup_existing", acc_json(&t.existing));
	json_object_set_new(out, "prompt_tokens_per_task", per_task(&t, t.tokens_in));
	json_object_set_new(out, "completion_tokens_per_task", per_task(&t, t.tokens_out));
	json_object_set_new(out, "cached_prompt_tokens_per_task", per_task(&t, t.tokens_cached));
	json_object_set_new(out, "cache_write_tokens_per_task", per_task(&t, t.tokens_written));
	json_object_set_new(out, "reasoning_tokens_per_task", per_task(&t, t.tokens_reasoning));
	json_object_set_new(out, "cost_per_task", per_task(&t, t.cost));
	json_object_set_new(out, "cache_saved_usd_per_task", per_task(&t, t.cache_saved));
	json_object_set_new(out, "wall_s_per_task", per_task(&t, t.wall));
	json_object_set_new(out, "stages", stage_gains(&t));
	json_object_set_new(out, "sol", json_pack("{s:o, s:o, s:o}", "kernel", sol_stats(rows, "sol_pct", 1), "eager",
						  sol_stats(rows, "eager_sol_pct", 0), "compile",
						  sol_stats(rows, "compile_sol_pct", 0)));
	sol_stops(out, rows);
	json_object_set_new(out, "rules", rules_saved(rows));
	return out;
}

/*
 * What the figures were measured with: the model, the devices the tasks ran
 * on, and the kind of timing (CPU timings come from Triton's interpreter and
 * say nothing about a GPU).
 */
static json_t *setup_of(const json_t *run, const json_t *rows)
{
	const json_t *stored = json_object_get(run, "config");
	json_t *cfg = json_is_object(stored) ? json_incref((json_t *)stored) :
		      json_loads(json_string_value(stored) ?: "{}", 0, NULL);
	json_t *devices = json_array(), *t, *out;
	size_t i;
	int cpu = 0, gpu = 0;
	json_array_foreach(rows, i, t) {
		const char *d = json_string_value(json_object_get(t, "device"));
		int seen = 0;
		size_t j;
		json_t *x;
		if (!d)
			continue;
		json_array_foreach(devices, j, x)
			seen |= !strcmp(json_string_value(x), d);
		if (!seen)
			json_array_append_new(devices, json_string(d));
		cpu |= !strcmp(d, "cpu");
		gpu |= !!strcmp(d, "cpu");
	}
	out = json_pack("{s:s?, s:o, s:s}", "model",
			json_string_value(json_object_get(cfg, "model")), "devices", devices, "timing",
			cpu && gpu ? "mixed: CPU timings (Triton interpreter) and GPU timings (CUDA events)" :
			cpu ? "CPU timings (Triton interpreter): they say nothing about a GPU" :
			gpu ? "GPU timings (CUDA events, median per call)" : "none measured");
	if (json_object_get(cfg, "judge"))
		json_object_set_new(out, "judged_only", json_true());
	json_decref(cfg);
	return out;
}

json_t *report_compute(struct store *s, const char *run_id)
{
	json_t *run = store_run_get(s, run_id), *tasks, *rows, *groups, *t, *out;
	size_t i;
	if (!run)
		return NULL;
	run_id = json_string_value(json_object_get(run, "id"));	/* the whole id, when given its beginning */
	if (!(tasks = store_tasks(s, run_id))) {
		json_decref(run);
		return NULL;
	}
	rows = json_array();
	groups = json_object();
	json_array_foreach(tasks, i, t) {
		const json_t *r = json_object_get(t, "result"), *u = json_object_get(r, "usage");
		json_t *row = json_pack("{s:O, s:O, s:O, s:O}", "task_id", json_object_get(t, "task_id"), "path",
					json_object_get(t, "path"), "group", json_object_get(t, "group"), "status",
					json_object_get(t, "status"));
		const char *keys[] = { "found", "kernel_ms", "eager_ms", "compile_ms", "speedup_eager", "speedup_compile",
				       "final_kernel", "stop_reason", "no_kernel", "error_kind", "wall_s", "device", "stages", "run_dir",
				       "pending_key", "roofline_ms", "roofline", "sol_pct", "eager_sol_pct",
				       "compile_sol_pct", "practical_pct", "sol_stop", "rule_skips", "existing_ms", "speedup_existing", "existing_error",
				       "time", NULL };
		for (int k = 0; keys[k]; k++)
			json_object_set(row, keys[k], json_object_get(r, keys[k]) ?: json_null());
		if (!strcmp(json_string_value(json_object_get(r, "device")) ?: "", "cpu")) {
			/* Interpreted kernels against the CPU's peaks: no speed of
			 * light worth showing (docs/method.md). */
			const char *sol_keys[] = { "roofline_ms", "roofline", "sol_pct", "eager_sol_pct", "compile_sol_pct",
						   "practical_pct" };
			for (size_t k = 0; k < sizeof(sol_keys) / sizeof(sol_keys[0]); k++)
				json_object_set_new(row, sol_keys[k], json_null());
		}
		if (!json_is_true(json_object_get(row, "found")))
			json_object_set_new(row, "found", json_false());
		json_object_set_new(row, "prompt_tokens", json_integer(json_integer_value(json_object_get(u, "prompt_tokens"))));
		json_object_set_new(row, "completion_tokens",
				    json_integer(json_integer_value(json_object_get(u, "completion_tokens"))));
		json_object_set_new(row, "cached_prompt_tokens",
				    json_integer(json_integer_value(json_object_get(u, "cached_prompt_tokens"))));
		json_object_set_new(row, "cache_write_tokens",
				    json_integer(json_integer_value(json_object_get(u, "cache_write_tokens"))));
		json_object_set_new(row, "reasoning_tokens",
				    json_integer(json_integer_value(json_object_get(u, "reasoning_tokens"))));
		json_object_set_new(row, "cost_usd", json_real(json_number_value(json_object_get(u, "cost_usd"))));
		json_object_set_new(row, "llm_calls", json_integer(json_integer_value(json_object_get(u, "calls"))));
		json_object_set_new(row, "cached_calls", json_integer(json_integer_value(json_object_get(u, "cached_calls"))));
		json_object_set_new(row, "cache_saved_usd", json_real(json_number_value(json_object_get(u, "cache_saved_usd"))));
		json_array_append_new(rows, row);
	}
	json_array_foreach(rows, i, t) {
		const char *g = json_string_value(json_object_get(t, "group"));
		json_t *list = json_object_get(groups, g);
		if (!list) {
			list = json_array();
			json_object_set_new(groups, g, list);
		}
		json_array_append(list, t);
	}
	out = json_pack("{s:o, s:o, s:o, s:o}", "run", run, "all", metrics(rows), "groups", json_object(), "tasks", rows);
	json_object_set_new(out, "setup", setup_of(run, rows));
	{
		const char *g;
		json_t *list;
		json_object_foreach(groups, g, list)
			json_object_set_new(json_object_get(out, "groups"), g, metrics(list));
	}
	json_decref(groups);
	json_decref(tasks);
	return out;
}

static void print_metrics(FILE *f, const char *name, const json_t *m)
{
	const json_t *se = json_object_get(m, "speedup_eager"), *sc = json_object_get(m, "speedup_compile"), *st;
	size_t i;
	char r[5][16];
	fprintf(f, "%s: %lld tasks, %lld finished, %lld failed, %lld waiting, %lld stopped; success %s; fast_0 %s, "
		   "fast_1 %s, fast_1.5 %s, fast_2 %s%s\n", name, json_integer_value(json_object_get(m, "tasks")),
		json_integer_value(json_object_get(m, "finished")), json_integer_value(json_object_get(m, "failed")),
		json_integer_value(json_object_get(m, "waiting")), json_integer_value(json_object_get(m, "stopped")),
		fmt_rate(json_num(m, "success_rate"), r[0]), fmt_rate(json_num(m, "fast_0"), r[1]),
		fmt_rate(json_num(m, "fast_1"), r[2]), fmt_rate(json_num(m, "fast_1_5"), r[3]), fmt_rate(json_num(m, "fast_2"), r[4]),
		json_integer_value(json_object_get(m, "finished")) ? "" : " (no task has finished: no rate yet)");
	if (json_integer_value(json_object_get(se, "n")))
		fprintf(f, "  speedup vs eager: mean %.2fx, geomean %.2fx (n=%lld)\n", json_num(se, "mean"), json_num(se, "geomean"),
			json_integer_value(json_object_get(se, "n")));
	if (json_integer_value(json_object_get(sc, "n")))
		fprintf(f, "  speedup vs torch.compile: mean %.2fx, geomean %.2fx (n=%lld)\n", json_num(sc, "mean"),
			json_num(sc, "geomean"), json_integer_value(json_object_get(sc, "n")));
	{
		const json_t *sol = json_object_get(m, "sol"), *k = json_object_get(sol, "kernel"),
			     *e = json_object_get(sol, "eager"), *c = json_object_get(sol, "compile");
		if (json_integer_value(json_object_get(e, "n")) || json_integer_value(json_object_get(k, "n"))) {
			char km[32], em[32], cm[32];
			fprintf(f, "  %%SOL (roofline bound / time): kernel median %s (n=%lld), eager %s, torch.compile %s",
				fmt_pct(json_num(k, "median"), km, sizeof(km)), json_integer_value(json_object_get(k, "n")),
				fmt_pct(json_num(e, "median"), em, sizeof(em)), fmt_pct(json_num(c, "median"), cm, sizeof(cm)));
			if (json_integer_value(json_object_get(m, "sol_stops")))
				fprintf(f, "; %lld task(s) stopped at the speed of light, ~%.0f tokens saved",
					json_integer_value(json_object_get(m, "sol_stops")), json_num(m, "sol_tokens_saved_est"));
			fprintf(f, "\n");
		}
	}
	{
		const json_t *rule;
		size_t ri;
		json_array_foreach(json_object_get(m, "rules"), ri, rule)
			fprintf(f, "  %s stage decided by the %s rule without the model: %lld time(s), %lld call(s) saved\n",
				json_string_value(json_object_get(rule, "stage")), json_string_value(json_object_get(rule, "rule")),
				json_integer_value(json_object_get(rule, "decided")),
				json_integer_value(json_object_get(rule, "calls_saved")));
	}
	{
		const json_t *sx = json_object_get(m, "speedup_existing");
		if (json_integer_value(json_object_get(sx, "n")))
			fprintf(f, "  speedup vs the existing kernels: mean %.2fx, geomean %.2fx (n=%lld)\n", json_num(sx, "mean"),
				json_num(sx, "geomean"), json_integer_value(json_object_get(sx, "n")));
	}
	if (json_integer_value(json_object_get(m, "finished"))) {
		char saved[80] = "", written[64] = "";
		double save = json_num(m, "cache_saved_usd_per_task"), wrote = json_num(m, "cache_write_tokens_per_task");
		if (wrote > 0)
			snprintf(written, sizeof(written), ", %.0f written to the cache", wrote);
		/* A cache that cost more than it saved says so, never "saving $-0.0033". */
		if (json_num(m, "cached_prompt_tokens_per_task") > 0 || wrote > 0)
			snprintf(saved, sizeof(saved), save < 0 ? ", the prompt cache costing $%.4f more" :
				 ", the prompt cache saving $%.4f", fabs(save));
		fprintf(f, "  per finished task: %.0f prompt (%.0f cached%s) + %.0f completion tokens (%.0f reasoning), "
			"$%.4f%s, %.1f s\n", json_num(m, "prompt_tokens_per_task"), json_num(m, "cached_prompt_tokens_per_task"),
			written, json_num(m, "completion_tokens_per_task"), json_num(m, "reasoning_tokens_per_task"),
			json_num(m, "cost_per_task"), saved, json_num(m, "wall_s_per_task"));
	}
	{
		/* Replies replayed from the reply cache were never sent: say so, as egg optimize does. */
		long long calls = json_integer_value(json_object_get(m, "llm_calls")),
			  cached = json_integer_value(json_object_get(m, "cached_calls"));
		if (calls && cached == calls)
			fprintf(f, "  model calls: all %lld replies from the reply cache; no request sent, nothing paid\n", calls);
		else if (cached)
			fprintf(f, "  model calls: %lld, %lld of them from the reply cache (not sent, not paid)\n", calls, cached);
	}
	json_array_foreach(json_object_get(m, "not_finished"), i, st)
		fprintf(f, "  not finished: %s (%s), because %s\n", json_string_value(json_object_get(st, "task_id")),
			json_string_value(json_object_get(st, "status")), json_string_value(json_object_get(st, "because")));
	json_array_foreach(json_object_get(m, "pending_keys"), i, st)
		fprintf(f, "  waiting for a reply to %s\n", json_string_value(st));
	json_array_foreach(json_object_get(m, "stages"), i, st)
		fprintf(f, "  stage %-24s gain mean %.2fx, geomean %.2fx, cumulative %.2fx (n=%lld)\n",
			json_string_value(json_object_get(st, "title")), json_num(st, "gain_mean"), json_num(st, "gain_geomean"),
			json_num(st, "cumulative"), json_integer_value(json_object_get(st, "n")));
}

void report_print_text(FILE *f, const json_t *rep)
{
	const json_t *run = json_object_get(rep, "run"), *m, *t;
	const char *g;
	size_t i;
	fprintf(f, "run %s (%s, %s)\n", json_string_value(json_object_get(run, "id")),
		json_string_value(json_object_get(run, "command")), json_string_value(json_object_get(run, "status")));
	if (json_string_value(json_object_get(run, "stop_reason")) &&
	    !strcmp(json_string_value(json_object_get(run, "status")) ?: "", "refused"))
		fprintf(f, "run refused: %s (the input is at fault: fix it and run the command again; there is nothing to "
			"resume)\n", json_string_value(json_object_get(run, "stop_reason")));
	else if (json_string_value(json_object_get(run, "stop_reason")))
		fprintf(f, "run stopped: %s\n", json_string_value(json_object_get(run, "stop_reason")));
	{
		char *setup = fmt_setup_line(rep);
		fprintf(f, "%s\n", setup);
		free(setup);
	}
	/* A whole program's tasks are its parts, each timed alone: their rates
	 * say nothing of the program, whose end to end comes below. */
	print_metrics(f, json_is_object(json_object_get(rep, "program")) ? "the parts, each timed alone (the whole "
		      "program end to end is below)" : "all", json_object_get(rep, "all"));
	json_object_foreach(json_object_get(rep, "groups"), g, m)
		if (json_object_size(json_object_get(rep, "groups")) > 1)
			print_metrics(f, g, m);
	fprintf(f, "%-40s %-9s %7s %7s %7s %6s %5s %12s %10s %10s %6s\n", "task", "status", "wall s", "LLM s", "eval s",
		"wait s", "chain", "kernel ms", "vs eager", "vs compile", "%SOL");
	json_array_foreach(json_object_get(rep, "tasks"), i, t) {
		const json_t *tm = json_object_get(t, "time");
		char w[16], l[16], e[16], d[16], c[16];
		fprintf(f, "%-40.40s %-9s %7s %7s %7s %6s %5s ", json_string_value(json_object_get(t, "task_id")),
			fmt_status(t), fmt_figure("%.1f", json_num(t, "wall_s"), w), fmt_figure("%.1f", json_num(tm, "llm_s"), l),
			fmt_figure("%.1f", json_num(tm, "eval_s"), e), fmt_figure("%.1f", json_num(tm, "device_wait_s"), d),
			fmt_figure("%.0f", json_num(tm, "llm_chain"), c));
		if (json_is_true(json_object_get(t, "found"))) {
			char ms[16], se[16], sc[16], sol[16];
			/* A kernel judged without timing (--no-timing) has no time: "-". */
			fprintf(f, "%12s %10s %10s %6s%s%s", fmt_figure("%.4f", json_num(t, "kernel_ms"), ms),
				fmt_ratio(json_num(t, "speedup_eager"), se), fmt_ratio(json_num(t, "speedup_compile"), sc),
				fmt_figure("%.1f%%", json_num(t, "sol_pct"), sol),
				fmt_slower(t),
				json_is_object(json_object_get(t, "sol_stop")) ? "  stopped at the speed of light" : "");
			if (!isnan(json_num(t, "practical_pct")))
				fprintf(f, "  %.0f%% of the practical bound", json_num(t, "practical_pct"));
			if (!isnan(json_num(t, "speedup_existing")))
				fprintf(f, "  %.2fx vs the existing kernel%s", json_num(t, "speedup_existing"),
					json_num(t, "speedup_existing") < 1 ? " (slower: keep it)" : "");
			if (json_string_value(json_object_get(t, "existing_error")))
				fprintf(f, "  existing kernel not used: %s", json_string_value(json_object_get(t, "existing_error")));
			fprintf(f, "\n");
		}
		else
			fprintf(f, "%12s %10s %10s %6s  %s\n", "-", "-", "-", "-", fmt_why(t) ?: "");
	}
	if (json_is_object(json_object_get(rep, "program")))
		report_print_program(f, json_object_get(rep, "program"));
}

static void csv_field(struct buf *b, const char *s)
{
	buf_addc(b, '"');
	for (; s && *s; s++) {
		if (*s == '"')
			buf_addc(b, '"');
		buf_addc(b, *s);
	}
	buf_addc(b, '"');
}

char *report_csv(const json_t *rep)
{
	static const char *const cols[] = { "task_id", "group", "status", "found", "kernel_ms", "eager_ms", "compile_ms",
					    "speedup_eager", "speedup_compile", "existing_ms", "speedup_existing", "existing_error",
					    "roofline_ms", "sol_pct", "eager_sol_pct",
					    "compile_sol_pct", "prompt_tokens", "completion_tokens", "cached_prompt_tokens",
					    "cache_write_tokens", "reasoning_tokens", "cost_usd", "cache_saved_usd", "wall_s",
					    "device", "final_kernel", "stop_reason", "llm_s", "eval_s", "device_wait_s",
					    "llm_chain", "no_kernel", NULL };
	struct buf b = BUF_INIT;
	const json_t *t;
	size_t i;
	for (int c = 0; cols[c]; c++)
		buf_addf(&b, "%s%s", c ? "," : "", cols[c]);
	buf_addc(&b, '\n');
	json_array_foreach(json_object_get(rep, "tasks"), i, t) {
		for (int c = 0; cols[c]; c++) {
			const json_t *v = json_object_get(t, cols[c]) ?: json_object_get(json_object_get(t, "time"), cols[c]);
			if (c)
				buf_addc(&b, ',');
			if (json_is_string(v))
				csv_field(&b, json_string_value(v));
			else if (json_is_boolean(v))
				buf_adds(&b, json_is_true(v) ? "true" : "false");
			else if (json_is_integer(v))
				buf_addf(&b, "%lld", json_integer_value(v));
			else if (json_is_number(v))
				buf_addf(&b, "%.6g", json_number_value(v));
		}
		buf_addc(&b, '\n');
	}
	return buf_detach(&b);
}

void report_attach_program(json_t *rep, const char *run_dir)
{
	char *path = fs_join(run_dir, "program.json");
	json_t *prog = fs_exists(path) ? json_load_file(path, 0, NULL) : NULL;
	if (prog)
		json_object_set_new(rep, "program", prog);
	free(path);
}

/* The composed program at shapes it was not split at (src/run/shapes.c). */
static void print_other_shapes(FILE *f, const json_t *os)
{
	const json_t *row;
	size_t i;
	if (!json_is_object(os))
		return;
	if (json_string_value(json_object_get(os, "skipped"))) {
		fprintf(f, "  other shapes: not checked: %s\n", json_string_value(json_object_get(os, "skipped")));
		return;
	}
	fprintf(f, "  other shapes (the composed program runs its kernels where it passed, elsewhere the program's "
		   "PyTorch):\n");
	json_array_foreach(json_object_get(os, "shapes"), i, row) {
		const char *verdict = json_string_value(json_object_get(row, "verdict")) ?: "?";
		const char *reason = json_string_value(json_object_get(row, "reason"));
		fprintf(f, "    %-22s %s%s%s\n", json_string_value(json_object_get(row, "label")) ?: "?",
			!strcmp(verdict, "pass") ? "pass: its kernels run there" :
			!strcmp(verdict, "not_checked") ? "not checked" : "fail: the program's PyTorch runs there",
			reason ? ": " : "", reason ? reason : "");
	}
	json_array_foreach(json_object_get(os, "kernels"), i, row) {
		const char *why = json_string_value(json_object_get(row, "why"));
		fprintf(f, "    kernel %-40.40s %s%s%s\n", json_string_value(json_object_get(row, "name")) ?: "?",
			json_string_value(json_object_get(row, "verdict")) ?: "?", why ? ": " : "", why ? why : "");
	}
}

/* One side's ways on the user's clock: "NAME WALL ms (DEVICE)" each. */
static void print_ways(FILE *f, const char *side, const json_t *ways, int dropin)
{
	char b[2][16];
	fprintf(f, "    %-9s", side);
	if (json_string_value(json_object_get(ways, "error"))) {
		fprintf(f, " could not run: %s\n", json_string_value(json_object_get(ways, "error")));
		return;
	}
	for (int k = 0; k < EVAL_USER_WAYS; k++) {
		const char *words = eval_user_ways[k].words;
		const json_t *w = json_object_get(ways, dropin ? eval_user_ways[k].dropin : eval_user_ways[k].original);
		if (!w)
			continue;
		if (json_string_value(json_object_get(w, "error")))
			fprintf(f, "  %s: failed (%.60s)", words, json_string_value(json_object_get(w, "error")));
		else
			fprintf(f, "  %s %s ms (%s)", words, fmt_figure("%.3f", json_num(w, "wall_ms"), b[0]),
				fmt_figure("%.3f", json_num(w, "device_ms"), b[1]));
	}
	fputc('\n', f);
}

/* The user's clock (whole.c user_clock): the original and the drop-in each
 * run every way a user runs a model, and which is faster run its best way. */
static void print_user_clock(FILE *f, const json_t *uc)
{
	const json_t *o = json_object_get(uc, "best_original"), *d = json_object_get(uc, "best_dropin");
	char b[3][16];
	if (!json_is_object(uc))
		return;
	fprintf(f, "  the user's clock (wall clock per forward over %lld calls, launch included; device time in "
		   "brackets):\n", (long long)json_integer_value(json_object_get(uc, "calls")));
	print_ways(f, "original", json_object_get(uc, "original"), 0);
	print_ways(f, "drop-in", json_object_get(uc, "dropin"), 1);
	fprintf(f, "    best: the drop-in %s, %s ms, against the original %s, %s ms: %s%s\n",
		json_string_value(json_object_get(d, "way")) ?: "(none ran)", fmt_figure("%.3f", json_num(d, "wall_ms"), b[0]),
		json_string_value(json_object_get(o, "way")) ?: "(none ran)", fmt_figure("%.3f", json_num(o, "wall_ms"), b[1]),
		fmt_figure("%.2fx", json_num(uc, "speedup"), b[2]),
		!json_is_true(json_object_get(uc, "judged")) ? " (not judged: interpreted kernels on the CPU say nothing of speed)"
		: json_is_true(json_object_get(uc, "faster")) ? "; run the drop-in that way"
		: json_is_true(json_object_get(uc, "within_noise"))
			? "; within the noise (its slowest round is not faster than the original's fastest): "
			  "the drop-in is not a result"
			: "; not faster: the drop-in is not a result");
}

/* The cut of each block (whole.c, blocks.c): the block or its subgraphs, and why. */
static void print_cuts(FILE *f, const json_t *prog)
{
	const json_t *c;
	size_t i;
	if (!json_array_size(json_object_get(prog, "cuts")))
		return;
	fprintf(f, "  blocks (a coarser cut: several subgraphs as one task):\n");
	json_array_foreach(json_object_get(prog, "cuts"), i, c)
		fprintf(f, "    %s (%s, %lld occurrence(s)): %s: %s\n", json_string_value(json_object_get(c, "block")) ?: "?",
			json_string_value(json_object_get(c, "task")) ?: "?",
			(long long)json_integer_value(json_object_get(c, "occurrences")),
			json_string_value(json_object_get(c, "chosen")) ?: "?", json_string_value(json_object_get(c, "why")) ?: "");
}

/* The row that ran task `task` (its usage and extra rounds are there). */
static const json_t *ran_task(const json_t *prog, const char *task)
{
	const json_t *sg;
	size_t i;
	json_array_foreach(json_object_get(prog, "subgraphs"), i, sg)
		if (!strcmp(json_string_value(json_object_get(sg, "task")) ?: "", task) && json_object_get(sg, "usage"))
			return sg;
	return NULL;
}

/* The effort by time at stake (effort.c): each task's calls planned and
 * used, and what each extra round and fresh seed gained. */
static void print_effort(FILE *f, const json_t *prog)
{
	const json_t *ef = json_object_get(prog, "effort"), *t, *x;
	size_t i, k;
	char b[2][16];
	if (!json_is_object(ef))
		return;
	fprintf(f, "  effort by time at stake: %lld model calls spread over %s ms at stake, %lld planned:\n",
		(long long)json_integer_value(json_object_get(ef, "budget_calls")),
		fmt_figure("%.4f", json_num(ef, "stake_ms"), b[0]), (long long)json_integer_value(json_object_get(ef,
		"planned_calls")));
	json_array_foreach(json_object_get(ef, "tasks"), i, t) {
		const json_t *e = json_object_get(t, "effort");
		const json_t *row = ran_task(prog, json_string_value(json_object_get(t, "task")) ?: "");
		fprintf(f, "    %-40.40s %lld calls planned (%lld seeds, %lld refinement round(s), %lld fresh seed(s), "
			   "tuning %s), %s used: %s\n", json_string_value(json_object_get(t, "task")) ?: "?",
			(long long)json_integer_value(json_object_get(e, "planned_calls")),
			(long long)json_integer_value(json_object_get(e, "seeds")),
			(long long)json_integer_value(json_object_get(e, "refine_rounds")),
			(long long)json_integer_value(json_object_get(e, "fresh_seeds")),
			json_is_true(json_object_get(e, "tuning")) ? "on" : "off",
			fmt_figure("%.0f", row ? (double)json_integer_value(json_object_get(json_object_get(row, "usage"), "calls"))
					       : NAN, b[1]),
			json_string_value(json_object_get(e, "why")) ?: "");
		json_array_foreach(json_object_get(row, "extras"), k, x) {
			int round = !strcmp(json_string_value(json_object_get(x, "kind")) ?: "", "round");
			fprintf(f, "      %s %lld (%s): %s\n", round ? "refinement round" : "fresh seed",
				(long long)json_integer_value(json_object_get(x, round ? "round" : "seed")),
				json_string_value(json_object_get(x, "candidate")) ?: "?",
				json_is_number(json_object_get(x, "gained"))
					? fmt_figure("gained %.2fx", json_num(x, "gained"), b[0]) : "gained nothing");
		}
	}
}

/* Whether two rows of a program's subgraphs read as one: the same task
 * with the same outcome, use and reason (a task's occurrences, where its
 * kernel went in everywhere, or everywhere waits on the same reply). */
static int same_row(const json_t *a, const json_t *b)
{
	static const char *const keys[] = { "task", "status", "why" };
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (strcmp(json_string_value(json_object_get(a, keys[k])) ?: "",
			   json_string_value(json_object_get(b, keys[k])) ?: ""))
			return 0;
	return json_is_true(json_object_get(a, "used")) == json_is_true(json_object_get(b, "used"));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/*
 * The subgraphs of a program, one row per distinct task and outcome (a
 * GPT-2 of twelve layers is not 63 rows): how many subgraphs it stands for,
 * their share of the program's eager time together, one occurrence's time
 * inside the program (the median of theirs), the task's own eager time
 * alone, its kernel's, the speedup over it alone, %SOL and the outcome.
 * Names are cut in the middle, so that a layer's q, k, v and o read apart.
 * Glue (views only) is counted after the table.
 */
static void print_subgraph_rows(FILE *f, const json_t *sgs)
{
	const json_t *sg, *other;
	size_t i, j, n = json_array_size(sgs), glue = 0;
	double *ms = xcalloc(n ? n : 1, sizeof(double));
	char b[7][16], name[45], times[16];
	int noisy = 0;
	fprintf(f, "  %-44s %5s %6s %10s %10s %10s %9s %6s  %s\n", "subgraph", "times", "share", "eager ms", "alone ms",
		"kernel ms", "vs alone", "%SOL", "outcome");
	json_array_foreach(sgs, i, sg) {
		const char *why = json_string_value(json_object_get(sg, "why"));
		char status[40];
		double share = 0;
		size_t count = 0, seen = 0, timed = 0;
		if (!strcmp(json_string_value(json_object_get(sg, "status")) ?: "", "glue")) {
			glue++;
			continue;
		}
		json_array_foreach(sgs, j, other) {
			if (!same_row(sg, other))
				continue;
			if (j < i)
				seen = 1;
			count++;
			share += json_num(other, "share");
			if (json_num(other, "eager_ms") >= 0)
				ms[timed++] = json_num(other, "eager_ms");
		}
		if (seen)
			continue;
		qsort(ms, timed, sizeof(double), cmp_double);
		noisy |= json_is_string(json_object_get(sg, "noise"));
		fmt_words(json_string_value(json_object_get(sg, "status")) ?: "?", status, sizeof(status));
		snprintf(times, sizeof(times), "x%zu", count);
		fprintf(f, "  %-44s %5s %6s %10s %10s %10s %9s %6s  %s%s%s%s%s\n",
			fmt_middle(json_string_value(json_object_get(sg, "name")) ?: "?", 44, name, sizeof(name)), times,
			fmt_figure("%.1f%%", 100 * share, b[0]), fmt_figure("%.4f", timed ? ms[timed / 2] : NAN, b[1]),
			fmt_figure("%.4f", json_num(sg, "task_eager_ms"), b[6]), fmt_figure("%.4f", json_num(sg, "kernel_ms"), b[2]),
			fmt_figure("%.2fx", json_num(sg, "speedup_eager"), b[3]), fmt_figure("%.1f%%", json_num(sg, "sol_pct"), b[4]),
			status, json_is_true(json_object_get(sg, "used")) ? " (in the program)" : "",
			json_is_string(json_object_get(sg, "noise")) ? " (noisy share)" : "", why ? ": " : "", why ? why : "");
	}
	free(ms);
	if (glue)
		fprintf(f, "  and %zu glue subgraph(s): views only, they stay PyTorch\n", glue);
	fprintf(f, "  share and eager ms: inside the program's eager forward (egg split's measurement); alone ms: the "
		   "task's own eager time (fresh inputs, a flushed cache), which its kernel ms and vs alone compare with\n");
	if (noisy)
		fprintf(f, "  noisy share: its time varied more than 2x between rounds or repeats when split (a busy or "
			   "shared machine): the shares, and the parts chosen by them, are rough\n");
}

void report_print_program(FILE *f, const json_t *prog)
{
	const json_t *sg, *e = json_object_get(prog, "end_to_end"), *a = json_object_get(prog, "amdahl");
	size_t i;
	char b[6][16];
	if (!json_is_object(prog))
		return;
	{
		size_t distinct = 0;
		json_array_foreach(json_object_get(prog, "subgraphs"), i, sg)
			distinct += json_integer_value(json_object_get(sg, "occurrences")) > 0;
		fprintf(f, "program %s: %zu subgraph(s), %zu distinct task(s) (split in %s)\n",
			json_string_value(json_object_get(prog, "task")) ?: "?", json_array_size(json_object_get(prog, "subgraphs")),
			distinct, json_string_value(json_object_get(prog, "split_dir")) ?: "?");
	}
	print_subgraph_rows(f, json_object_get(prog, "subgraphs"));
	print_cuts(f, prog);
	print_effort(f, prog);
	{
		const json_t *u = json_object_get(prog, "llm");
		if (json_is_object(u))
			fprintf(f, "  model calls: %lld (%lld prompt + %lld completion tokens); one task per subgraph, without "
				   "merging repeats, would have taken about %lld\n",
				(long long)json_integer_value(json_object_get(u, "calls")),
				(long long)json_integer_value(json_object_get(u, "prompt_tokens")),
				(long long)json_integer_value(json_object_get(u, "completion_tokens")),
				(long long)json_integer_value(json_object_get(u, "calls_without_merging")));
	}
	if (!json_is_true(json_object_get(prog, "finished"))) {
		fprintf(f, "  not finished: %s\n", json_string_value(json_object_get(prog, "why_unfinished")) ?: "?");
		return;
	}
	/* No kernel in it: the program measured against itself, no speedup. */
	if (json_is_true(json_object_get(prog, "unchanged")))
		fprintf(f, "  end to end: %s; %s (PyTorch eager %s ms)\n", json_string_value(json_object_get(e, "verdict")) ?: "?",
			json_string_value(json_object_get(prog, "why_unchanged")) ?: "the program is unchanged",
			fmt_figure("%.4f", json_num(e, "eager_ms"), b[1]));
	else
		fprintf(f, "  end to end: %s%s%s; %s ms against eager %s ms (%s) and torch.compile %s ms (%s)%s\n",
			json_string_value(json_object_get(e, "verdict")) ?: "?",
			json_string_value(json_object_get(e, "reason")) ? ", " : "",
			json_string_value(json_object_get(e, "reason")) ?: "", fmt_figure("%.4f", json_num(e, "kernel_ms"), b[0]),
			fmt_figure("%.4f", json_num(e, "eager_ms"), b[1]), fmt_figure("%.2fx", json_num(e, "speedup_eager"), b[2]),
			fmt_figure("%.4f", json_num(e, "compile_ms"), b[3]),
			fmt_figure("%.2fx", json_num(e, "speedup_compile"), b[4]),
			json_is_true(json_object_get(e, "allow_torch")) ? "; parts stay PyTorch (--allow-torch)" : "");
	fprintf(f, "  Amdahl: the subgraphs' own times give %s over eager and %s over the faster of eager and "
		   "torch.compile (each part compiled at its task's ratio); every optimized subgraph at its roofline "
		   "bound would give %s over eager\n", fmt_figure("%.2fx", json_num(a, "parts_speedup"), b[0]),
		fmt_figure("%.2fx", json_num(a, "best_speedup"), b[2]), fmt_figure("%.2fx", json_num(a, "bound_speedup"), b[1]));
	if (json_num(a, "skipped_ms") > 0)
		fprintf(f, "  left in PyTorch by the budget: %.1f%% of the eager time; with it at no time at all the parts "
			   "would give %s\n", 100 * json_num(a, "skipped_share"),
			fmt_figure("%.2fx", json_num(a, "without_skipped_speedup"), b[2]));
	print_other_shapes(f, json_object_get(prog, "other_shapes"));
	print_user_clock(f, json_object_get(prog, "user_clock"));
	if (json_string_value(json_object_get(prog, "composed")))
		fprintf(f, "  composed program: %s\n", json_string_value(json_object_get(prog, "composed")));
}
