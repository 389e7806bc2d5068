/* report.c: metrics over a run's tasks, and the text/CSV/HTML renderings. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../pipeline/stages.h"
#include "../store/store.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/jsonnum.h"

/* A task's status as the reports show it: a finished task that found no
 * kernel is "no kernel" (its reason follows), not "done". */
static const char *shown_status(const json_t *t)
{
	const char *st = json_string_value(json_object_get(t, "status")) ?: "?";
	return !json_is_true(json_object_get(t, "found")) && !strcmp(st, "done") ? "no kernel" : st;
}

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

/* "12.3%", or "-" for a missing figure. */
static const char *pct_text(double v, char *out, size_t len)
{
	if (isnan(v))
		snprintf(out, len, "-");
	else
		snprintf(out, len, "%.1f%%", v);
	return out;
}

/* "1.23x" for a speedup, or "-" when there is none. `out` holds 16 bytes. */
static const char *ratio_text(double v, char *out)
{
	if (isnan(v))
		snprintf(out, 16, "-");
	else
		snprintf(out, 16, "%.2fx", v);
	return out;
}

/* One figure in `fmt`, or "-" when there is none. `out` holds 16 bytes. */
static const char *figure_text(const char *fmt, double v, char *out)
{
	if (isnan(v))
		snprintf(out, 16, "-");
	else
		snprintf(out, 16, fmt, v);
	return out;
}

/* "42%" for a rate, or "-" when there is none (no finished task). `out`
 * holds 16 bytes. */
static const char *rate_text(double v, char *out)
{
	if (isnan(v))
		snprintf(out, 16, "-");
	else
		snprintf(out, 16, "%.0f%%", 100 * v);
	return out;
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

/* Metrics over the task rows in `rows`. */
static json_t *metrics(const json_t *rows)
{
	struct acc eager = { 0 }, compile = { 0 }, existing = { 0 }, gains[STAGE_COUNT];
	double fast[4] = { 0 }, tokens_in = 0, tokens_out = 0, cost = 0, wall = 0;
	static const double ps[4] = { 0, 1, 1.5, 2 };
	int n = (int)json_array_size(rows), finished = 0, failed = 0, waiting = 0, stopped = 0, success = 0;
	json_t *pending = json_array(), *not_finished = json_array();
	size_t i;
	const json_t *r;
	json_t *stages_out = json_array(), *out;
	double cumulative = 1;

	memset(gains, 0, sizeof(gains));
	json_array_foreach(rows, i, r) {
		const char *status = json_string_value(json_object_get(r, "status"));
		double se = json_num(r, "speedup_eager");
		int found = json_is_true(json_object_get(r, "found"));
		const json_t *st = json_object_get(r, "stages"), *row;
		size_t j;
		double prev = NAN;
		enum task_status ts = task_status_of(status);
		if (!task_status_judged(ts)) {
			/* Not finished (waiting, stopped, interrupted): in no rate. */
			json_array_append_new(not_finished, json_pack("{s:O, s:s, s:s}", "task_id",
								      json_object_get(r, "task_id"), "status",
								      task_status_name(ts), "because", not_finished_why(r, ts)));
			waiting += ts == TASK_WAITING;
			stopped += ts == TASK_STOPPED;
			if (ts == TASK_WAITING && json_is_string(json_object_get(r, "pending_key")))
				json_array_append(pending, json_object_get(r, "pending_key"));
			continue;
		}
		finished++;
		failed += ts == TASK_FAILED;
		if (found) {
			success++;
			acc_add(&eager, se);
			acc_add(&compile, json_num(r, "speedup_compile"));
			acc_add(&existing, json_num(r, "speedup_existing"));
			for (int k = 0; k < 4; k++)
				if (!isnan(se) && se > ps[k])
					fast[k]++;
		}
		tokens_in += json_num(r, "prompt_tokens") > 0 ? json_num(r, "prompt_tokens") : 0;
		tokens_out += json_num(r, "completion_tokens") > 0 ? json_num(r, "completion_tokens") : 0;
		cost += json_num(r, "cost_usd") > 0 ? json_num(r, "cost_usd") : 0;
		wall += json_num(r, "wall_s") > 0 ? json_num(r, "wall_s") : 0;
		/* Per-stage gain: the best time before the stage over the best after it. */
		json_array_foreach(st, j, row) {
			const struct stage *sg = stage_by_name(json_string_value(json_object_get(row, "stage")) ?: "");
			double ms = json_num(row, "kernel_ms");
			if (sg && sg->id != STAGE_SEED && !isnan(prev) && !isnan(ms) && ms > 0)
				acc_add(&gains[sg->id], prev / ms);
			if (!isnan(ms))
				prev = ms;
		}
	}
	for (int s = STAGE_REFINE; s < STAGE_COUNT; s++) {
		if (!gains[s].n)
			continue;
		cumulative *= exp(gains[s].logsum / gains[s].n);
		json_array_append_new(stages_out, json_pack("{s:s, s:s, s:f, s:f, s:f, s:i}", "stage", stages[s].name,
							    "title", stages[s].title, "gain_mean", gains[s].sum / gains[s].n,
							    "gain_geomean", exp(gains[s].logsum / gains[s].n),
							    "cumulative", cumulative, "n", gains[s].n));
	}
	out = json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:o, s:o}", "tasks", n, "finished", finished, "failed", failed,
			"success", success, "waiting", waiting, "stopped", stopped, "pending_keys", pending, "not_finished",
			not_finished);
	/* Rates over the finished tasks only (a task that has not finished has no verdict yet). */
	json_object_set_new(out, "success_rate", finished ? json_real((double)success / finished) : json_null());
	json_object_set_new(out, "fast_0", finished ? json_real(fast[0] / finished) : json_null());
	json_object_set_new(out, "fast_1", finished ? json_real(fast[1] / finished) : json_null());
	json_object_set_new(out, "fast_1_5", finished ? json_real(fast[2] / finished) : json_null());
	json_object_set_new(out, "fast_2", finished ? json_real(fast[3] / finished) : json_null());
	json_object_set_new(out, "speedup_eager", acc_json(&eager));
	json_object_set_new(out, "speedup_compile", acc_json(&compile));
	json_object_set_new(out, "speedup_existing", acc_json(&existing));
	json_object_set_new(out, "prompt_tokens_per_task", finished ? json_real(tokens_in / finished) : json_null());
	json_object_set_new(out, "completion_tokens_per_task", finished ? json_real(tokens_out / finished) : json_null());
	json_object_set_new(out, "cost_per_task", finished ? json_real(cost / finished) : json_null());
	json_object_set_new(out, "wall_s_per_task", finished ? json_real(wall / finished) : json_null());
	json_object_set_new(out, "stages", stages_out);
	json_object_set_new(out, "sol", json_pack("{s:o, s:o, s:o}", "kernel", sol_stats(rows, "sol_pct", 1), "eager",
						  sol_stats(rows, "eager_sol_pct", 0), "compile",
						  sol_stats(rows, "compile_sol_pct", 0)));
	{
		/* Tokens the speed-of-light stop saved (estimates, see pipeline.c). */
		double saved = 0;
		int stops = 0;
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

/* The setup as one line of text ("model M; devices D...; timing"), for both
 * report forms. */
static char *setup_line(const json_t *rep)
{
	const json_t *su = json_object_get(rep, "setup"), *d;
	struct buf b = BUF_INIT;
	size_t i;
	if (json_is_true(json_object_get(su, "judged_only")))
		buf_adds(&b, "kernels made elsewhere, judged by egg's evaluator (no model); devices");
	else
		buf_addf(&b, "model %s; devices", json_string_value(json_object_get(su, "model")) ?: "(unknown)");
	json_array_foreach(json_object_get(su, "devices"), i, d)
		buf_addf(&b, " %s", json_string_value(d));
	buf_addf(&b, "; %s", json_string_value(json_object_get(su, "timing")));
	return buf_detach(&b);
}

json_t *report_compute(struct store *s, const char *run_id)
{
	json_t *run = store_run_get(s, run_id), *tasks, *rows, *groups, *t, *out;
	size_t i;
	if (!run) {
		err_set(ERR_INPUT, "no run '%s' in the store", run_id);
		return NULL;
	}
	tasks = store_tasks(s, run_id);
	rows = json_array();
	groups = json_object();
	json_array_foreach(tasks, i, t) {
		const json_t *r = json_object_get(t, "result"), *u = json_object_get(r, "usage");
		json_t *row = json_pack("{s:O, s:O, s:O, s:O}", "task_id", json_object_get(t, "task_id"), "path",
					json_object_get(t, "path"), "group", json_object_get(t, "group"), "status",
					json_object_get(t, "status"));
		const char *keys[] = { "found", "kernel_ms", "eager_ms", "compile_ms", "speedup_eager", "speedup_compile",
				       "final_kernel", "stop_reason", "error_kind", "wall_s", "device", "stages", "run_dir",
				       "pending_key", "roofline_ms", "roofline", "sol_pct", "eager_sol_pct",
				       "compile_sol_pct", "sol_stop", "existing_ms", "speedup_existing", "existing_error",
				       "time", NULL };
		for (int k = 0; keys[k]; k++)
			json_object_set(row, keys[k], json_object_get(r, keys[k]) ?: json_null());
		if (!strcmp(json_string_value(json_object_get(r, "device")) ?: "", "cpu")) {
			/* Interpreted kernels against the CPU's peaks: no speed of
			 * light worth showing (docs/method.md). */
			const char *sol_keys[] = { "roofline_ms", "roofline", "sol_pct", "eager_sol_pct", "compile_sol_pct" };
			for (size_t k = 0; k < sizeof(sol_keys) / sizeof(sol_keys[0]); k++)
				json_object_set_new(row, sol_keys[k], json_null());
		}
		if (!json_is_true(json_object_get(row, "found")))
			json_object_set_new(row, "found", json_false());
		json_object_set_new(row, "prompt_tokens", json_integer(json_integer_value(json_object_get(u, "prompt_tokens"))));
		json_object_set_new(row, "completion_tokens",
				    json_integer(json_integer_value(json_object_get(u, "completion_tokens"))));
		json_object_set_new(row, "cost_usd", json_real(json_number_value(json_object_get(u, "cost_usd"))));
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
		rate_text(json_num(m, "success_rate"), r[0]), rate_text(json_num(m, "fast_0"), r[1]),
		rate_text(json_num(m, "fast_1"), r[2]), rate_text(json_num(m, "fast_1_5"), r[3]), rate_text(json_num(m, "fast_2"), r[4]),
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
				pct_text(json_num(k, "median"), km, sizeof(km)), json_integer_value(json_object_get(k, "n")),
				pct_text(json_num(e, "median"), em, sizeof(em)), pct_text(json_num(c, "median"), cm, sizeof(cm)));
			if (json_integer_value(json_object_get(m, "sol_stops")))
				fprintf(f, "; %lld task(s) stopped at the speed of light, ~%.0f tokens saved",
					json_integer_value(json_object_get(m, "sol_stops")), json_num(m, "sol_tokens_saved_est"));
			fprintf(f, "\n");
		}
	}
	{
		const json_t *sx = json_object_get(m, "speedup_existing");
		if (json_integer_value(json_object_get(sx, "n")))
			fprintf(f, "  speedup vs the existing kernels: mean %.2fx, geomean %.2fx (n=%lld)\n", json_num(sx, "mean"),
				json_num(sx, "geomean"), json_integer_value(json_object_get(sx, "n")));
	}
	if (json_integer_value(json_object_get(m, "finished")))
		fprintf(f, "  per finished task: %.0f prompt + %.0f completion tokens, $%.4f, %.1f s\n",
			json_num(m, "prompt_tokens_per_task"), json_num(m, "completion_tokens_per_task"), json_num(m, "cost_per_task"),
			json_num(m, "wall_s_per_task"));
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
	{
		char *setup = setup_line(rep);
		fprintf(f, "%s\n", setup);
		free(setup);
	}
	print_metrics(f, "all", json_object_get(rep, "all"));
	json_object_foreach(json_object_get(rep, "groups"), g, m)
		if (json_object_size(json_object_get(rep, "groups")) > 1)
			print_metrics(f, g, m);
	fprintf(f, "%-40s %-9s %7s %7s %7s %6s %5s %12s %10s %10s %6s\n", "task", "status", "wall s", "LLM s", "eval s",
		"wait s", "chain", "kernel ms", "vs eager", "vs compile", "%SOL");
	json_array_foreach(json_object_get(rep, "tasks"), i, t) {
		const json_t *tm = json_object_get(t, "time");
		char w[16], l[16], e[16], d[16], c[16];
		fprintf(f, "%-40.40s %-9s %7s %7s %7s %6s %5s ", json_string_value(json_object_get(t, "task_id")),
			shown_status(t), figure_text("%.1f", json_num(t, "wall_s"), w), figure_text("%.1f", json_num(tm, "llm_s"), l),
			figure_text("%.1f", json_num(tm, "eval_s"), e), figure_text("%.1f", json_num(tm, "device_wait_s"), d),
			figure_text("%.0f", json_num(tm, "llm_chain"), c));
		if (json_is_true(json_object_get(t, "found"))) {
			char sc[32] = "-", sol[32] = "-";
			if (!isnan(json_num(t, "speedup_compile")))
				snprintf(sc, sizeof(sc), "%.2fx", json_num(t, "speedup_compile"));
			if (!isnan(json_num(t, "sol_pct")))
				snprintf(sol, sizeof(sol), "%.1f%%", json_num(t, "sol_pct"));
			fprintf(f, "%12.4f %9.2fx %10s %6s%s%s", json_num(t, "kernel_ms"), json_num(t, "speedup_eager"), sc, sol,
				json_num(t, "speedup_eager") < 1 ? "  slower than eager: keep PyTorch" : "",
				json_is_object(json_object_get(t, "sol_stop")) ? "  stopped at the speed of light" : "");
			if (!isnan(json_num(t, "speedup_existing")))
				fprintf(f, "  %.2fx vs the existing kernel%s", json_num(t, "speedup_existing"),
					json_num(t, "speedup_existing") < 1 ? " (slower: keep it)" : "");
			if (json_string_value(json_object_get(t, "existing_error")))
				fprintf(f, "  existing kernel not used: %s", json_string_value(json_object_get(t, "existing_error")));
			fprintf(f, "\n");
		}
		else
			fprintf(f, "%12s %10s %10s %6s  %s\n", "-", "-", "-", "-",
				json_string_value(json_object_get(t, "stop_reason")) ?: "");
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
					    "compile_sol_pct", "prompt_tokens", "completion_tokens", "cost_usd", "wall_s",
					    "device", "final_kernel", "stop_reason", "llm_s", "eval_s", "device_wait_s",
					    "llm_chain", NULL };
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

static void html_text(struct buf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': buf_adds(b, "&lt;"); break;
		case '>': buf_adds(b, "&gt;"); break;
		case '&': buf_adds(b, "&amp;"); break;
		case '"': buf_adds(b, "&quot;"); break;
		default: buf_addc(b, *s);
		}
	}
}

/* A bar chart as inline SVG. */
static void svg_bars(struct buf *b, const char *id, const char *title, const char *const *labels,
		     const double *values, int n, const char *unit)
{
	double max = 0;
	int w = 640, h = 260, left = 50, bottom = 40, bw;
	for (int i = 0; i < n; i++)
		if (values[i] > max)
			max = values[i];
	if (max <= 0)
		max = 1;
	bw = n ? (w - left - 20) / n : 0;
	buf_addf(b, "<figure><figcaption>%s</figcaption><svg id=\"%s\" class=\"chart\" width=\"%d\" height=\"%d\" "
		    "viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\">", title, id, w, h, w, h);
	buf_addf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>", left, h - bottom, w - 10, h - bottom);
	buf_addf(b, "<line x1=\"%d\" y1=\"10\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>", left, left, h - bottom);
	for (int i = 0; i < n; i++) {
		double bh = (h - bottom - 20) * values[i] / max;
		int x = left + i * bw + 6;
		buf_addf(b, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"#2f6db5\"><title>%s: %.3g%s</title></rect>",
			 x, h - bottom - bh, bw - 12, bh, labels[i], values[i], unit);
		/* Speedups with two decimals and their unit; counts (no unit) as whole numbers. */
		buf_addf(b, *unit ? "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">%.2f%s</text>" :
				  "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">%.0f%s</text>",
			 x + (bw - 12) / 2, h - bottom - bh - 4, values[i], unit);
		buf_addf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">", x + (bw - 12) / 2, h - bottom + 16);
		html_text(b, labels[i]);
		buf_adds(b, "</text>");
	}
	buf_adds(b, "</svg></figure>\n");
}

/* A roofline chart as inline SVG (log-log): arithmetic intensity (FLOP per
 * byte of the least traffic) against attained FLOP/s, the roof of the first
 * task's measured peaks, and per task its kernel, eager and torch.compile
 * at %SOL times the roof at their intensity. A task whose FLOPs were not
 * counted (elementwise work) sits at the left edge, on the memory roof. */
static void svg_roofline(struct buf *b, const json_t *tasks)
{
	const int w = 640, h = 320, left = 60, right = 20, top = 14, bottom = 44;
	const double xmin = -2, xmax = 4; /* log10 FLOP/byte */
	double peak = 0, bw = 0, ymin, ymax;
	const json_t *t;
	size_t i;
	json_array_foreach(tasks, i, t) {
		const json_t *rl = json_object_get(t, "roofline");
		if (rl && json_num(rl, "peak_flops_s") > 0 && json_num(rl, "bandwidth_bytes_s") > 0) {
			peak = json_num(rl, "peak_flops_s");
			bw = json_num(rl, "bandwidth_bytes_s");
			break;
		}
	}
	if (peak <= 0)
		return;
	ymax = ceil(log10(peak)) + 0.3;
	ymin = floor(log10(bw * 1e-2)) - 1;
#define RX(lx) (left + ((lx) - xmin) / (xmax - xmin) * (w - left - right))
#define RY(ly) (top + (ymax - (ly)) / (ymax - ymin) * (h - top - bottom))
	buf_addf(b, "<figure><figcaption>Roofline: each task's kernel (filled), eager (circle) and torch.compile "
		    "(square) against the measured peaks</figcaption><svg id=\"roofline-chart\" class=\"chart\" "
		    "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\">", w, h, w, h);
	buf_addf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>", left, top,
		 w - left - right, h - top - bottom);
	for (int d = (int)xmin; d <= (int)xmax; d++)
		buf_addf(b, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">1e%d</text>", RX(d),
			 h - bottom + 14, d);
	for (int d = (int)ymin; d <= (int)ymax; d++)
		buf_addf(b, "<text x=\"%d\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">1e%d</text>", left - 4,
			 RY(d) + 3, d);
	buf_addf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">arithmetic intensity "
		    "(FLOP per byte)</text>", (left + w - right) / 2, h - 8);
	buf_addf(b, "<text x=\"12\" y=\"%d\" font-size=\"11\" transform=\"rotate(-90 12 %d)\" "
		    "text-anchor=\"middle\">FLOP/s</text>", (top + h - bottom) / 2, (top + h - bottom) / 2);
	{
		/* The roof: bandwidth up to the ridge, then the peak. */
		double ridge = log10(peak / bw);
		buf_addf(b, "<polyline fill=\"none\" stroke=\"#a22\" stroke-width=\"2\" points=\"%.1f,%.1f %.1f,%.1f "
			    "%.1f,%.1f\"><title>roof: %.2f TB/s, %.1f TFLOP/s</title></polyline>", RX(xmin),
			 RY(xmin + log10(bw)), RX(ridge), RY(log10(peak)), RX(xmax), RY(log10(peak)), bw / 1e12, peak / 1e12);
	}
	json_array_foreach(tasks, i, t) {
		const json_t *rl = json_object_get(t, "roofline");
		double flops = json_num(rl, "flops"), bytes = json_num(rl, "bytes"), li, roof;
		const char *keys[3] = { "sol_pct", "eager_sol_pct", "compile_sol_pct" };
		const char *what[3] = { "kernel", "eager", "torch.compile" };
		if (!rl || isnan(bytes) || bytes <= 0)
			continue;
		li = flops > 0 ? fmax(xmin, fmin(xmax, log10(flops / bytes))) : xmin;
		roof = fmin(json_num(rl, "peak_flops_s"), pow(10, li) * json_num(rl, "bandwidth_bytes_s"));
		for (int k = 2; k >= 0; k--) {
			double sol = json_num(t, keys[k]), ly;
			if (isnan(sol) || sol <= 0 || (k == 0 && !json_is_true(json_object_get(t, "found"))))
				continue;
			ly = fmax(ymin, fmin(ymax, log10(roof * sol / 100)));
			if (k == 2)
				buf_addf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" fill=\"none\" "
					    "stroke=\"#d80\">", RX(li) - 3.5, RY(ly) - 3.5);
			else
				buf_addf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" stroke=\"%s\">", RX(li),
					 RY(ly), k ? "none" : "#2f6db5", k ? "#777" : "#2f6db5");
			buf_adds(b, "<title>");
			html_text(b, json_string_value(json_object_get(t, "task_id")));
			buf_addf(b, ": %s at %.1f%% of the roofline bound</title>%s", what[k], sol, k == 2 ? "</rect>" : "</circle>");
		}
	}
#undef RX
#undef RY
	buf_adds(b, "</svg></figure>\n");
}

/* The whole program of an egg optimize --split run: its subgraphs by what
 * they compute, the end-to-end result, the Amdahl line. */
static void html_program(struct buf *b, const json_t *prog)
{
	const json_t *sg, *e = json_object_get(prog, "end_to_end"), *a = json_object_get(prog, "amdahl");
	size_t i;
	char t[6][16];
	buf_adds(b, "<h2>Whole program</h2><p>");
	html_text(b, json_string_value(json_object_get(prog, "task")));
	buf_addf(b, ": %zu subgraph(s)</p><table><tr><th>subgraph</th><th>share</th><th>eager ms</th><th>kernel ms</th>"
		    "<th>vs eager</th><th>%%SOL</th><th>outcome</th></tr>", json_array_size(json_object_get(prog, "subgraphs")));
	json_array_foreach(json_object_get(prog, "subgraphs"), i, sg) {
		int used = json_is_true(json_object_get(sg, "used"));
		buf_adds(b, "<tr><td>");
		html_text(b, json_string_value(json_object_get(sg, "name")));
		buf_addf(b, "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class=\"%s\">",
			 figure_text("%.1f%%", 100 * json_num(sg, "share"), t[0]), figure_text("%.4f", json_num(sg, "eager_ms"), t[1]),
			 figure_text("%.4f", json_num(sg, "kernel_ms"), t[2]), figure_text("%.2fx", json_num(sg, "speedup_eager"), t[3]),
			 figure_text("%.1f%%", json_num(sg, "sol_pct"), t[4]), used ? "ok" : "fail");
		html_text(b, json_string_value(json_object_get(sg, "status")));
		if (used)
			buf_adds(b, " (in the program)");
		if (json_string_value(json_object_get(sg, "why"))) {
			buf_adds(b, ": ");
			html_text(b, json_string_value(json_object_get(sg, "why")));
		}
		buf_adds(b, "</td></tr>");
	}
	buf_adds(b, "</table>");
	if (!json_is_true(json_object_get(prog, "finished"))) {
		buf_adds(b, "<p class=\"fail\">Not finished: ");
		html_text(b, json_string_value(json_object_get(prog, "why_unfinished")));
		buf_adds(b, "</p>");
		return;
	}
	buf_adds(b, "<p class=\"e2e\">End to end: ");
	html_text(b, json_string_value(json_object_get(e, "verdict")));
	buf_addf(b, "; %s ms against eager %s ms (%s) and torch.compile %s ms (%s). ",
		 figure_text("%.4f", json_num(e, "kernel_ms"), t[0]), figure_text("%.4f", json_num(e, "eager_ms"), t[1]),
		 figure_text("%.2fx", json_num(e, "speedup_eager"), t[2]), figure_text("%.4f", json_num(e, "compile_ms"), t[3]),
		 figure_text("%.2fx", json_num(e, "speedup_compile"), t[4]));
	buf_addf(b, "Amdahl: the subgraphs' own times give %s over eager; every optimized subgraph at its roofline "
		    "bound would give %s.</p>", figure_text("%.2fx", json_num(a, "parts_speedup"), t[0]),
		 figure_text("%.2fx", json_num(a, "bound_speedup"), t[1]));
}

int report_html(const json_t *rep, const char *path)
{
	struct buf b = BUF_INIT;
	const json_t *run = json_object_get(rep, "run"), *all = json_object_get(rep, "all"), *t, *st;
	const char *labels[8];
	double values[8];
	int n = 0, rc;
	size_t i;
	static const char *const bins[] = { "<0.5x", "0.5-1x", "1-1.5x", "1.5-2x", "2-4x", ">4x", "failed" };
	double counts[7] = { 0 };

	buf_adds(&b, "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>egg report</title><style>"
		     "body{font-family:sans-serif;margin:2em;color:#222;background:#fff}"
		     "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:4px 8px;text-align:right}"
		     "td:first-child,th:first-child{text-align:left}.fail{color:#a22}.ok{color:#262}"
		     "figure{display:inline-block;margin:1em}figcaption{font-weight:bold}</style></head><body>");
	buf_adds(&b, "<h1>egg run ");
	html_text(&b, json_string_value(json_object_get(run, "id")));
	buf_adds(&b, "</h1><p>");
	html_text(&b, json_string_value(json_object_get(run, "command")));
	buf_adds(&b, ", ");
	html_text(&b, json_string_value(json_object_get(run, "status")));
	buf_addf(&b, ", created %s</p>", json_string_value(json_object_get(run, "created")) ?: "");
	{
		char *setup = setup_line(rep);
		buf_adds(&b, "<p class=\"setup\">");
		html_text(&b, setup);
		buf_adds(&b, "</p>");
		free(setup);
	}
	{
		char r[5][16], x[5][16];
		buf_addf(&b, "<h2>Summary</h2><table><tr><th>tasks</th><th>finished</th><th>success</th><th>fast_0</th>"
			     "<th>fast_1</th><th>fast_1.5</th><th>fast_2</th><th>mean speedup vs eager</th>"
			     "<th>geomean vs eager</th><th>geomean vs torch.compile</th><th>cost/task</th><th>wall/task</th></tr>"
			     "<tr><td>%lld</td><td>%lld</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
			     "<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr></table>",
			 json_integer_value(json_object_get(all, "tasks")), json_integer_value(json_object_get(all, "finished")),
			 rate_text(json_num(all, "success_rate"), r[0]), rate_text(json_num(all, "fast_0"), r[1]),
			 rate_text(json_num(all, "fast_1"), r[2]), rate_text(json_num(all, "fast_1_5"), r[3]),
			 rate_text(json_num(all, "fast_2"), r[4]), ratio_text(json_num(json_object_get(all, "speedup_eager"), "mean"), x[0]),
			 ratio_text(json_num(json_object_get(all, "speedup_eager"), "geomean"), x[1]),
			 ratio_text(json_num(json_object_get(all, "speedup_compile"), "geomean"), x[2]),
			 figure_text("$%.4f", json_num(all, "cost_per_task"), x[3]), figure_text("%.1f s", json_num(all, "wall_s_per_task"), x[4]));
		if (!json_integer_value(json_object_get(all, "finished")))
			buf_adds(&b, "<p>No task has finished: no rate yet.</p>");
		else if (!json_integer_value(json_object_get(json_object_get(all, "speedup_eager"), "n")))
			buf_adds(&b, "<p>No task found a kernel: no speedup to average (-).</p>");
		json_array_foreach(json_object_get(all, "not_finished"), i, st) {
			buf_adds(&b, "<p class=\"fail\">Not finished: ");
			html_text(&b, json_string_value(json_object_get(st, "task_id")));
			buf_adds(&b, " (");
			html_text(&b, json_string_value(json_object_get(st, "status")));
			buf_adds(&b, "), because ");
			html_text(&b, json_string_value(json_object_get(st, "because")));
			buf_adds(&b, "</p>");
		}
	}
	{
		const json_t *sol = json_object_get(all, "sol");
		char km[32], em[32], cm[32];
		if (json_integer_value(json_object_get(json_object_get(sol, "eager"), "n")))
			buf_addf(&b, "<p class=\"sol\">%%SOL (roofline bound over time, median): kernel %s, eager %s, "
				     "torch.compile %s; %lld task(s) stopped at the speed of light (~%.0f tokens saved)</p>",
				 pct_text(json_num(json_object_get(sol, "kernel"), "median"), km, sizeof(km)),
				 pct_text(json_num(json_object_get(sol, "eager"), "median"), em, sizeof(em)),
				 pct_text(json_num(json_object_get(sol, "compile"), "median"), cm, sizeof(cm)),
				 json_integer_value(json_object_get(all, "sol_stops")), json_num(all, "sol_tokens_saved_est"));
	}
	labels[n] = "seed";
	values[n++] = 1.0;
	json_array_foreach(json_object_get(all, "stages"), i, st) {
		if (n >= 8)
			break;
		labels[n] = json_string_value(json_object_get(st, "stage"));
		values[n++] = json_num(st, "cumulative");
	}
	buf_adds(&b, "<h2>Charts</h2>");
	svg_bars(&b, "stage-chart", "Cumulative speedup over the seed, per stage (geometric mean)", labels, values, n, "x");
	json_array_foreach(json_object_get(rep, "tasks"), i, t) {
		double s = json_num(t, "speedup_eager");
		int k = !json_is_true(json_object_get(t, "found")) || isnan(s) ? 6 : s < 0.5 ? 0 : s < 1 ? 1 : s < 1.5 ? 2
			: s < 2 ? 3 : s < 4 ? 4 : 5;
		counts[k]++;
	}
	svg_bars(&b, "speedup-chart", "Distribution of speedups vs PyTorch eager (tasks)", (const char *const *)bins,
		 counts, 7, "");
	svg_roofline(&b, json_object_get(rep, "tasks"));
	if (json_is_object(json_object_get(rep, "program")))
		html_program(&b, json_object_get(rep, "program"));
	buf_adds(&b, "<h2>Tasks</h2><table><tr><th>task</th><th>group</th><th>status</th><th>kernel ms</th>"
		     "<th>eager ms</th><th>vs eager</th><th>vs torch.compile</th><th>vs existing</th><th>%SOL</th><th>verdict</th>"
		     "<th>tokens</th><th>wall s</th><th>LLM s</th><th>eval s</th><th>wait s</th><th>chain</th>"
		     "<th>kernel</th></tr>");
	json_array_foreach(json_object_get(rep, "tasks"), i, t) {
		int found = json_is_true(json_object_get(t, "found"));
		const char *fk = json_string_value(json_object_get(t, "final_kernel"));
		buf_adds(&b, "<tr><td>");
		html_text(&b, json_string_value(json_object_get(t, "task_id")));
		buf_adds(&b, "</td><td>");
		html_text(&b, json_string_value(json_object_get(t, "group")));
		buf_addf(&b, "</td><td class=\"%s\">", found ? "ok" : "fail");
		html_text(&b, shown_status(t));
		if (!found && json_string_value(json_object_get(t, "stop_reason"))) {
			buf_adds(&b, ": ");
			html_text(&b, json_string_value(json_object_get(t, "stop_reason")));
		}
		if (found && !isnan(json_num(t, "speedup_compile")))
			buf_addf(&b, "</td><td>%.4f</td><td>%.4f</td><td>%.2fx</td><td>%.2fx</td>", json_num(t, "kernel_ms"),
				 json_num(t, "eager_ms"), json_num(t, "speedup_eager"), json_num(t, "speedup_compile"));
		else if (found)
			buf_addf(&b, "</td><td>%.4f</td><td>%.4f</td><td>%.2fx</td><td>-</td>", json_num(t, "kernel_ms"),
				 json_num(t, "eager_ms"), json_num(t, "speedup_eager"));
		else
			buf_adds(&b, "</td><td>-</td><td>-</td><td>-</td><td>-</td>");
		if (found && !isnan(json_num(t, "speedup_existing")))
			buf_addf(&b, "<td>%.2fx</td>", json_num(t, "speedup_existing"));
		else if (json_string_value(json_object_get(t, "existing_error"))) {
			buf_adds(&b, "<td class=\"fail\">not used: ");
			html_text(&b, json_string_value(json_object_get(t, "existing_error")));
			buf_adds(&b, "</td>");
		} else
			buf_adds(&b, "<td>-</td>");
		if (found && !isnan(json_num(t, "sol_pct")))
			buf_addf(&b, "<td>%.1f%%</td>", json_num(t, "sol_pct"));
		else
			buf_adds(&b, "<td>-</td>");
		if (found && json_num(t, "speedup_eager") < 1)
			buf_adds(&b, "<td class=\"fail\">slower than eager: keep PyTorch</td>");
		else if (json_is_object(json_object_get(t, "sol_stop")))
			buf_adds(&b, "<td class=\"ok\">stopped at the speed of light</td>");
		else
			buf_adds(&b, "<td></td>");
		{
			const json_t *tm = json_object_get(t, "time");
			char w[16], l[16], e[16], d[16], c[16];
			buf_addf(&b, "<td>%.0f</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>",
				 json_num(t, "prompt_tokens") + json_num(t, "completion_tokens"), figure_text("%.1f", json_num(t, "wall_s"), w),
				 figure_text("%.1f", json_num(tm, "llm_s"), l), figure_text("%.1f", json_num(tm, "eval_s"), e),
				 figure_text("%.1f", json_num(tm, "device_wait_s"), d), figure_text("%.0f", json_num(tm, "llm_chain"), c));
		}
		if (fk) {
			/* Relative to the report's folder: a report shared with its
			 * store (or beside it) keeps working links. */
			char *dir = xstrdup(path), *slash = strrchr(dir, '/'), *rel;
			if (slash)
				*slash = 0;
			rel = fs_relative(slash ? (*dir ? dir : "/") : ".", fk);
			buf_adds(&b, "<a href=\"");
			html_text(&b, rel);
			buf_adds(&b, "\">final kernel</a>");
			free(rel);
			free(dir);
		}
		buf_adds(&b, "</td></tr>");
	}
	buf_adds(&b, "</table></body></html>\n");
	rc = fs_write_atomic(path, b.data, b.len);
	buf_release(&b);
	return rc;
}

void report_attach_program(json_t *rep, const char *run_dir)
{
	char *path = fs_join(run_dir, "program.json");
	json_t *prog = fs_exists(path) ? json_load_file(path, 0, NULL) : NULL;
	if (prog)
		json_object_set_new(rep, "program", prog);
	free(path);
}

void report_print_program(FILE *f, const json_t *prog)
{
	const json_t *sg, *e = json_object_get(prog, "end_to_end"), *a = json_object_get(prog, "amdahl");
	size_t i;
	char b[6][16];
	if (!json_is_object(prog))
		return;
	fprintf(f, "program %s: %zu subgraph(s) (split in %s)\n", json_string_value(json_object_get(prog, "task")) ?: "?",
		json_array_size(json_object_get(prog, "subgraphs")), json_string_value(json_object_get(prog, "split_dir")) ?: "?");
	fprintf(f, "  %-40s %6s %10s %10s %9s %6s  %s\n", "subgraph", "share", "eager ms", "kernel ms", "vs eager", "%SOL",
		"outcome");
	json_array_foreach(json_object_get(prog, "subgraphs"), i, sg) {
		const char *status = json_string_value(json_object_get(sg, "status")) ?: "?";
		const char *why = json_string_value(json_object_get(sg, "why"));
		fprintf(f, "  %-40.40s %6s %10s %10s %9s %6s  %s%s%s%s\n", json_string_value(json_object_get(sg, "name")) ?: "?",
			figure_text("%.1f%%", 100 * json_num(sg, "share"), b[0]), figure_text("%.4f", json_num(sg, "eager_ms"), b[1]),
			figure_text("%.4f", json_num(sg, "kernel_ms"), b[2]), figure_text("%.2fx", json_num(sg, "speedup_eager"), b[3]),
			figure_text("%.1f%%", json_num(sg, "sol_pct"), b[4]), status,
			json_is_true(json_object_get(sg, "used")) ? " (in the program)" : "", why ? ": " : "", why ? why : "");
	}
	if (!json_is_true(json_object_get(prog, "finished"))) {
		fprintf(f, "  not finished: %s\n", json_string_value(json_object_get(prog, "why_unfinished")) ?: "?");
		return;
	}
	fprintf(f, "  end to end: %s%s%s; %s ms against eager %s ms (%s) and torch.compile %s ms (%s)%s\n",
		json_string_value(json_object_get(e, "verdict")) ?: "?", json_string_value(json_object_get(e, "reason")) ? ", " : "",
		json_string_value(json_object_get(e, "reason")) ?: "", figure_text("%.4f", json_num(e, "kernel_ms"), b[0]),
		figure_text("%.4f", json_num(e, "eager_ms"), b[1]), figure_text("%.2fx", json_num(e, "speedup_eager"), b[2]),
		figure_text("%.4f", json_num(e, "compile_ms"), b[3]), figure_text("%.2fx", json_num(e, "speedup_compile"), b[4]),
		json_is_true(json_object_get(e, "allow_torch")) ? "; parts stay PyTorch (--allow-torch)" : "");
	fprintf(f, "  Amdahl: the subgraphs' own times give %s over eager; every optimized subgraph at its roofline bound "
		   "would give %s\n", figure_text("%.2fx", json_num(a, "parts_speedup"), b[0]),
		figure_text("%.2fx", json_num(a, "bound_speedup"), b[1]));
	if (json_string_value(json_object_get(prog, "composed")))
		fprintf(f, "  composed program: %s\n", json_string_value(json_object_get(prog, "composed")));
}
