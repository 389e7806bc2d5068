/* report_html.c: a run's report as one self-contained HTML page, with its SVG charts. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../eval/eval.h"
#include "../store/store.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/jsonnum.h"
#include "format.h"

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

/* The user's clock (whole.c): both sides every way a user runs them, and
 * which is faster run its best way. */
static void html_user_clock(struct buf *b, const json_t *uc)
{
	const json_t *o = json_object_get(uc, "best_original"), *d = json_object_get(uc, "best_dropin");
	char t[3][16];
	if (!json_is_object(uc))
		return;
	buf_addf(b, "<h3>The user's clock</h3><table><tr><th>side</th><th>way</th><th>wall ms per forward (%lld calls, "
		    "launch included)</th><th>device ms</th></tr>", (long long)json_integer_value(json_object_get(uc, "calls")));
	for (int k = 0; k < 2 * EVAL_USER_WAYS; k++) {
		int dropin = k >= EVAL_USER_WAYS;
		const struct eval_user_way *way = &eval_user_ways[k % EVAL_USER_WAYS];
		const char *name = dropin ? way->dropin : way->original;
		const json_t *w = json_object_get(json_object_get(uc, dropin ? "dropin" : "original"), name);
		if (!w)
			continue;
		buf_addf(b, "<tr><td>%s</td><td>%s</td>", dropin ? "drop-in" : "original", name);
		if (json_string_value(json_object_get(w, "error"))) {
			buf_adds(b, "<td class=\"fail\" colspan=\"2\">failed: ");
			html_text(b, json_string_value(json_object_get(w, "error")));
			buf_adds(b, "</td></tr>");
		} else {
			buf_addf(b, "<td>%s</td><td>%s</td></tr>", fmt_figure("%.3f", json_num(w, "wall_ms"), t[0]),
				 fmt_figure("%.3f", json_num(w, "device_ms"), t[1]));
		}
	}
	buf_addf(b, "</table><p class=\"%s\">Best: the drop-in ", json_is_true(json_object_get(uc, "faster")) ? "ok" : "fail");
	html_text(b, json_string_value(json_object_get(d, "way")) ?: "(none ran)");
	buf_addf(b, ", %s ms, against the original ", fmt_figure("%.3f", json_num(d, "wall_ms"), t[0]));
	html_text(b, json_string_value(json_object_get(o, "way")) ?: "(none ran)");
	buf_addf(b, ", %s ms: %s%s</p>", fmt_figure("%.3f", json_num(o, "wall_ms"), t[1]),
		 fmt_figure("%.2fx", json_num(uc, "speedup"), t[2]),
		 !json_is_true(json_object_get(uc, "judged")) ? " (not judged: interpreted kernels on the CPU)"
		 : json_is_true(json_object_get(uc, "faster")) ? ""
		 : json_is_true(json_object_get(uc, "within_noise"))
			 ? "; within the noise (its slowest round is not faster than the original's fastest): "
			   "the drop-in is not a result"
			 : "; not faster: the drop-in is not a result");
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
			 fmt_figure("%.1f%%", 100 * json_num(sg, "share"), t[0]), fmt_figure("%.4f", json_num(sg, "eager_ms"), t[1]),
			 fmt_figure("%.4f", json_num(sg, "kernel_ms"), t[2]), fmt_figure("%.2fx", json_num(sg, "speedup_eager"), t[3]),
			 fmt_figure("%.1f%%", json_num(sg, "sol_pct"), t[4]), used ? "ok" : "fail");
		{
			char status[40];
			html_text(b, fmt_words(json_string_value(json_object_get(sg, "status")) ?: "?", status, sizeof(status)));
		}
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
	if (json_is_true(json_object_get(prog, "unchanged"))) {
		/* No kernel in it: the program measured against itself, no speedup. */
		buf_adds(b, "; ");
		html_text(b, json_string_value(json_object_get(prog, "why_unchanged")));
		buf_adds(b, ". ");
	} else {
		buf_addf(b, "; %s ms against eager %s ms (%s) and torch.compile %s ms (%s). ",
			 fmt_figure("%.4f", json_num(e, "kernel_ms"), t[0]), fmt_figure("%.4f", json_num(e, "eager_ms"), t[1]),
			 fmt_figure("%.2fx", json_num(e, "speedup_eager"), t[2]),
			 fmt_figure("%.4f", json_num(e, "compile_ms"), t[3]), fmt_figure("%.2fx", json_num(e, "speedup_compile"), t[4]));
	}
	buf_addf(b, "Amdahl: the subgraphs' own times give %s over eager and %s over the faster of eager and "
		    "torch.compile (each part compiled at its task's ratio); every optimized subgraph at its roofline "
		    "bound would give %s over eager.</p>", fmt_figure("%.2fx", json_num(a, "parts_speedup"), t[0]),
		 fmt_figure("%.2fx", json_num(a, "best_speedup"), t[2]), fmt_figure("%.2fx", json_num(a, "bound_speedup"), t[1]));
	html_user_clock(b, json_object_get(prog, "user_clock"));
}

/* The summary table, the tasks that have not finished, and the speed of light. */
static void html_summary(struct buf *b, const json_t *all, int program)
{
	const json_t *st;
	size_t i;
	{
		char r[5][16], x[5][16];
		/* A whole program's tasks are its parts, each timed alone. */
		buf_addf(b, "<h2>%s</h2><table>", program ? "Summary of the parts, each timed alone (the whole program end "
			 "to end is below)" : "Summary");
		buf_addf(b, "<tr><th>tasks</th><th>finished</th><th>success</th><th>fast_0</th>"
			     "<th>fast_1</th><th>fast_1.5</th><th>fast_2</th><th>mean speedup vs eager</th>"
			     "<th>geomean vs eager</th><th>geomean vs torch.compile</th><th>cost/task</th><th>wall/task</th></tr>"
			     "<tr><td>%lld</td><td>%lld</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
			     "<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr></table>",
			 json_integer_value(json_object_get(all, "tasks")), json_integer_value(json_object_get(all, "finished")),
			 fmt_rate(json_num(all, "success_rate"), r[0]), fmt_rate(json_num(all, "fast_0"), r[1]),
			 fmt_rate(json_num(all, "fast_1"), r[2]), fmt_rate(json_num(all, "fast_1_5"), r[3]),
			 fmt_rate(json_num(all, "fast_2"), r[4]), fmt_ratio(json_num(json_object_get(all, "speedup_eager"), "mean"), x[0]),
			 fmt_ratio(json_num(json_object_get(all, "speedup_eager"), "geomean"), x[1]),
			 fmt_ratio(json_num(json_object_get(all, "speedup_compile"), "geomean"), x[2]),
			 fmt_figure("$%.4f", json_num(all, "cost_per_task"), x[3]), fmt_figure("%.1f s", json_num(all, "wall_s_per_task"), x[4]));
		if (!json_integer_value(json_object_get(all, "finished")))
			buf_adds(b, "<p>No task has finished: no rate yet.</p>");
		else if (!json_integer_value(json_object_get(json_object_get(all, "speedup_eager"), "n")))
			buf_adds(b, "<p>No task found a kernel: no speedup to average (-).</p>");
		json_array_foreach(json_object_get(all, "not_finished"), i, st) {
			buf_adds(b, "<p class=\"fail\">Not finished: ");
			html_text(b, json_string_value(json_object_get(st, "task_id")));
			buf_adds(b, " (");
			html_text(b, json_string_value(json_object_get(st, "status")));
			buf_adds(b, "), because ");
			html_text(b, json_string_value(json_object_get(st, "because")));
			buf_adds(b, "</p>");
		}
	}
	{
		const json_t *sol = json_object_get(all, "sol");
		char km[32], em[32], cm[32];
		if (json_integer_value(json_object_get(json_object_get(sol, "eager"), "n")))
			buf_addf(b, "<p class=\"sol\">%%SOL (roofline bound over time, median): kernel %s, eager %s, "
				     "torch.compile %s; %lld task(s) stopped at the speed of light (~%.0f tokens saved)</p>",
				 fmt_pct(json_num(json_object_get(sol, "kernel"), "median"), km, sizeof(km)),
				 fmt_pct(json_num(json_object_get(sol, "eager"), "median"), em, sizeof(em)),
				 fmt_pct(json_num(json_object_get(sol, "compile"), "median"), cm, sizeof(cm)),
				 json_integer_value(json_object_get(all, "sol_stops")), json_num(all, "sol_tokens_saved_est"));
	}
	{
		const json_t *rule;
		size_t ri;
		json_array_foreach(json_object_get(all, "rules"), ri, rule)
			buf_addf(b, "<p class=\"sol\">the %s stage decided by the %s rule without the model: %lld time(s), "
				     "%lld call(s) saved</p>", json_string_value(json_object_get(rule, "stage")),
				 json_string_value(json_object_get(rule, "rule")),
				 json_integer_value(json_object_get(rule, "decided")),
				 json_integer_value(json_object_get(rule, "calls_saved")));
	}
}

/* The speedup chart's bar of one task: a speedup bin, or what it is when it
 * has none (a kernel judged without timing, no kernel, not finished). */
enum { BIN_NOT_TIMED = 6, BIN_FAILED, BIN_STOPPED, BIN_NOT_FINISHED, BIN_COUNT };
static const char *const bin_labels[BIN_COUNT] = { "<0.5x", "0.5-1x", "1-1.5x", "1.5-2x", "2-4x", ">4x",
						    "not timed", "failed", "stopped", "not finished" };

static int speedup_bin(const json_t *t)
{
	enum task_status ts = task_status_of(json_string_value(json_object_get(t, "status")));
	double s = json_num(t, "speedup_eager");
	if (!task_status_judged(ts))
		return ts == TASK_STOPPED ? BIN_STOPPED : BIN_NOT_FINISHED;
	if (!json_is_true(json_object_get(t, "found")))
		return BIN_FAILED;
	if (isnan(s))
		return BIN_NOT_TIMED;
	return s < 0.5 ? 0 : s < 1 ? 1 : s < 1.5 ? 2 : s < 2 ? 3 : s < 4 ? 4 : 5;
}

/* The charts: cumulative gain per stage, the speedups' distribution, the roofline. */
static void html_charts(struct buf *b, const json_t *rep)
{
	const json_t *all = json_object_get(rep, "all"), *t, *st;
	const char *labels[BIN_COUNT];
	double values[BIN_COUNT], counts[BIN_COUNT] = { 0 };
	int n = 0;
	size_t i;

	labels[n] = "seed";
	values[n++] = 1.0;
	json_array_foreach(json_object_get(all, "stages"), i, st) {
		if (n >= 8)
			break;
		labels[n] = json_string_value(json_object_get(st, "stage"));
		values[n++] = json_num(st, "cumulative");
	}
	buf_adds(b, "<h2>Charts</h2>");
	svg_bars(b, "stage-chart", "Cumulative speedup over the seed, per stage (geometric mean)", labels, values, n, "x");
	json_array_foreach(json_object_get(rep, "tasks"), i, t)
		counts[speedup_bin(t)]++;
	/* The speedup bins, "failed" and "stopped" always; the others when a task is there. */
	n = 0;
	for (int k = 0; k < BIN_COUNT; k++)
		if (counts[k] || (k != BIN_NOT_TIMED && k != BIN_NOT_FINISHED)) {
			labels[n] = bin_labels[k];
			values[n++] = counts[k];
		}
	svg_bars(b, "speedup-chart", "Distribution of speedups vs PyTorch eager (tasks)", labels, values, n, "");
	svg_roofline(b, json_object_get(rep, "tasks"));
}

/* One task's row; its kernel is linked relative to the page at `path`. */
static void html_task_row(struct buf *b, const json_t *t, const char *path)
{
	int found = json_is_true(json_object_get(t, "found"));
	const char *fk = json_string_value(json_object_get(t, "final_kernel"));
	char x[6][16];
	buf_adds(b, "<tr><td>");
	html_text(b, json_string_value(json_object_get(t, "task_id")));
	buf_adds(b, "</td><td>");
	html_text(b, json_string_value(json_object_get(t, "group")));
	buf_addf(b, "</td><td class=\"%s\">", found ? "ok" : !strcmp(fmt_status(t), "stopped") ? "stopped" : "fail");
	html_text(b, fmt_status(t));
	if (!found && fmt_reason(t)) {
		buf_adds(b, ": ");
		html_text(b, fmt_reason(t));
	}
	if (found)
		buf_addf(b, "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>", fmt_figure("%.4f", json_num(t, "kernel_ms"), x[0]),
			 fmt_figure("%.4f", json_num(t, "eager_ms"), x[1]), fmt_ratio(json_num(t, "speedup_eager"), x[2]),
			 fmt_ratio(json_num(t, "speedup_compile"), x[3]));
	else
		buf_adds(b, "</td><td>-</td><td>-</td><td>-</td><td>-</td>");
	if (found && !isnan(json_num(t, "speedup_existing")))
		buf_addf(b, "<td>%s</td>", fmt_ratio(json_num(t, "speedup_existing"), x[4]));
	else if (json_string_value(json_object_get(t, "existing_error"))) {
		buf_adds(b, "<td class=\"fail\">not used: ");
		html_text(b, json_string_value(json_object_get(t, "existing_error")));
		buf_adds(b, "</td>");
	} else
		buf_adds(b, "<td>-</td>");
	buf_addf(b, "<td>%s</td>", found ? fmt_figure("%.1f%%", json_num(t, "sol_pct"), x[5]) : "-");
	if (found && *fmt_slower(t))
		buf_addf(b, "<td class=\"fail\">%s</td>", fmt_slower(t) + 2);
	else if (json_is_object(json_object_get(t, "sol_stop")))
		buf_adds(b, "<td class=\"ok\">stopped at the speed of light</td>");
	else
		buf_adds(b, "<td></td>");
	{
		const json_t *tm = json_object_get(t, "time");
		char w[16], l[16], e[16], d[16], c[16];
		buf_addf(b, "<td>%.0f</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>",
			 json_num(t, "prompt_tokens") + json_num(t, "completion_tokens"), fmt_figure("%.1f", json_num(t, "wall_s"), w),
			 fmt_figure("%.1f", json_num(tm, "llm_s"), l), fmt_figure("%.1f", json_num(tm, "eval_s"), e),
			 fmt_figure("%.1f", json_num(tm, "device_wait_s"), d), fmt_figure("%.0f", json_num(tm, "llm_chain"), c));
	}
	if (fk) {
		/* Relative to the report's folder: a report shared with its
		 * store (or beside it) keeps working links. */
		char *dir = xstrdup(path), *slash = strrchr(dir, '/'), *rel;
		if (slash)
			*slash = 0;
		rel = fs_relative(slash ? (*dir ? dir : "/") : ".", fk);
		buf_adds(b, "<a href=\"");
		html_text(b, rel);
		buf_adds(b, "\">final kernel</a>");
		free(rel);
		free(dir);
	}
	buf_adds(b, "</td></tr>");
}

int report_html(const json_t *rep, const char *path)
{
	struct buf b = BUF_INIT;
	const json_t *run = json_object_get(rep, "run"), *t;
	int rc;
	size_t i;

	buf_adds(&b, "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>egg report</title><style>"
		     "body{font-family:sans-serif;margin:2em;color:#222;background:#fff}"
		     "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:4px 8px;text-align:right}"
		     "td:first-child,th:first-child{text-align:left}.fail{color:#a22}.ok{color:#262}.stopped{color:#a60}"
		     "figure{display:inline-block;margin:1em}figcaption{font-weight:bold}</style></head><body>");
	buf_adds(&b, "<h1>egg run ");
	html_text(&b, json_string_value(json_object_get(run, "id")));
	buf_adds(&b, "</h1><p>");
	html_text(&b, json_string_value(json_object_get(run, "command")));
	buf_adds(&b, ", ");
	html_text(&b, json_string_value(json_object_get(run, "status")));
	buf_addf(&b, ", created %s</p>", json_string_value(json_object_get(run, "created")) ?: "");
	{
		char *setup = fmt_setup_line(rep);
		buf_adds(&b, "<p class=\"setup\">");
		html_text(&b, setup);
		buf_adds(&b, "</p>");
		free(setup);
	}
	html_summary(&b, json_object_get(rep, "all"), json_is_object(json_object_get(rep, "program")));
	html_charts(&b, rep);
	if (json_is_object(json_object_get(rep, "program")))
		html_program(&b, json_object_get(rep, "program"));
	buf_adds(&b, "<h2>Tasks</h2><table><tr><th>task</th><th>group</th><th>status</th><th>kernel ms</th>"
		     "<th>eager ms</th><th>vs eager</th><th>vs torch.compile</th><th>vs existing</th><th>%SOL</th><th>verdict</th>"
		     "<th>tokens</th><th>wall s</th><th>LLM s</th><th>eval s</th><th>wait s</th><th>chain</th>"
		     "<th>kernel</th></tr>");
	json_array_foreach(json_object_get(rep, "tasks"), i, t)
		html_task_row(&b, t, path);
	buf_adds(&b, "</table></body></html>\n");
	rc = fs_write_atomic(path, b.data, b.len);
	buf_release(&b);
	return rc;
}
