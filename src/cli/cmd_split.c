/* cmd_split.c: `egg split TASK.py DIR` and `egg compose TASK.py DIR -o OUT.py`: a whole program in parts and back. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../program/model.h"
#include "../program/program.h"
#include "../report/format.h"
#include "../store/store.h"
#include "../util/beat.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "cli.h"
#include "flags.h"

/* The subgraphs' table shows one row per distinct task; names up to this
 * width, cut in the middle beyond it (fmt_middle). */
#define NAME_W 48

/* Fills rows[i] (one per subgraph) with the table's row that shows
 * subgraph i's task, from 1 in the order tasks first occur; 0 for glue. */
static void task_rows(const json_t *sgs, int *rows)
{
	const json_t *sg, *other;
	size_t i, j;
	int next = 0;
	json_array_foreach(sgs, i, sg) {
		const char *task = program_task_of(sg) ?: "";
		rows[i] = 0;
		if (json_is_true(json_object_get(sg, "glue")))
			continue;
		json_array_foreach(sgs, j, other)
			if (j < i && rows[j] && !strcmp(program_task_of(other) ?: "", task)) {
				rows[i] = rows[j];
				break;
			}
		if (!rows[i])
			rows[i] = ++next;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of the in-program eager times of `task`'s occurrences into
 * `out` (16 bytes): "0.1234", or "-" when none was measured. */
static void ms_of_each(const json_t *sgs, const char *task, char *out)
{
	double *ms = xcalloc(json_array_size(sgs) + 1, sizeof(double));
	size_t n = 0, i;
	const json_t *sg;
	json_array_foreach(sgs, i, sg)
		if (!strcmp(program_task_of(sg) ?: "", task) && json_is_number(json_object_get(sg, "eager_ms")))
			ms[n++] = json_number_value(json_object_get(sg, "eager_ms"));
	qsort(ms, n, sizeof(double), cmp_double);
	if (n)
		snprintf(out, 16, "%.4f", ms[n / 2]);
	else
		snprintf(out, 16, "-");
	free(ms);
}

/* Why `task`'s time is noisy (its first noisy occurrence's words), or NULL. */
static const char *task_noise(const json_t *sgs, const char *task)
{
	const json_t *sg;
	size_t i;
	json_array_foreach(sgs, i, sg)
		if (!strcmp(program_task_of(sg) ?: "", task) && json_is_string(json_object_get(sg, "noise")))
			return json_string_value(json_object_get(sg, "noise"));
	return NULL;
}

/* The coarser cut the plan offers: each residual block, the table's rows
 * its subgraphs' tasks are, and its task. */
static void print_blocks(FILE *f, const json_t *plan, const int *rows)
{
	const json_t *b, *k;
	size_t i, j;
	int shown = 0;
	if (!json_array_size(json_object_get(plan, "blocks")))
		return;
	fprintf(f, "  blocks: a coarser cut, several subgraphs as one task (a kernel may keep what crosses between "
		   "them on chip):\n");
	json_array_foreach(json_object_get(plan, "blocks"), i, b) {
		const char *file = json_string_value(json_object_get(b, "file")) ?: "?", *task = program_task_of(b) ?: file;
		char sh[16] = "-", ms[16], times[16], name[NAME_W + 1];
		struct buf spans = BUF_INIT;
		int last = 0;
		/* A block that repeats another is that one's task: one row. */
		if (strcmp(task, file))
			continue;
		if (json_is_number(json_object_get(b, "task_share")))
			snprintf(sh, sizeof(sh), "%.1f%%", 100 * json_number_value(json_object_get(b, "task_share")));
		ms_of_each(json_object_get(plan, "blocks"), task, ms);
		snprintf(times, sizeof(times), "x%lld", (long long)json_integer_value(json_object_get(b, "occurrences")));
		/* The rows of its subgraphs' tasks, each once, in its order. */
		json_array_foreach(json_object_get(b, "replaces"), j, k) {
			json_int_t at = json_integer_value(k);
			int row = at >= 0 && at < (json_int_t)json_array_size(json_object_get(plan, "subgraphs")) ? rows[at] : 0;
			if (row && row != last)
				buf_addf(&spans, "%s%d", spans.len ? ", " : "", row);
			last = row ? row : last;
		}
		fprintf(f, "  B%-2d %-*s %5s %7s %10s %-5s  %s: the subgraphs of rows %s, %lld anchors\n", ++shown, NAME_W,
			fmt_middle(json_string_value(json_object_get(b, "name")) ?: "?", NAME_W, name, sizeof(name)), times, sh,
			ms, task_noise(json_object_get(plan, "blocks"), task) ? "noisy" : "", file, buf_str(&spans),
			json_integer_value(json_object_get(b, "anchors")));
		buf_release(&spans);
	}
}

/* What the times are, and how rough: the shares are measured inside the
 * program; a task alone is timed apart. A noisy share is said to be so,
 * each with its spread. */
static void print_legend(FILE *f, const json_t *plan, const int *rows)
{
	const json_t *sg, *sgs = json_object_get(plan, "subgraphs");
	size_t i;
	long noisy = (long)json_integer_value(json_object_get(plan, "noisy"));
	int shown = 0;
	if (!json_is_string(json_object_get(plan, "measured_on")))
		return;
	fprintf(f, "  share: of the program's eager time, all of a task's occurrences together; eager ms: one "
		   "occurrence inside the program's forward (the median of its occurrences). A task alone (egg eval, "
		   "egg optimize) is timed apart, with fresh inputs and a flushed cache, and may read otherwise\n");
	if (!noisy)
		return;
	fprintf(f, "  noisy: %ld subgraph time(s) varied more than 2x between rounds or between repeats of one task "
		   "(a busy or shared machine): the shares are rough, and choosing parts by share may miss the "
		   "largest; split again on an idle machine\n", noisy);
	json_array_foreach(sgs, i, sg) {
		const char *noise;
		if (!rows[i] || rows[i] <= shown)
			continue;
		shown = rows[i];
		if ((noise = task_noise(sgs, program_task_of(sg) ?: "")))
			fprintf(f, "    row %d: %s\n", rows[i], noise);
	}
}

static void print_plan(FILE *f, const char *task, const char *dir, const json_t *plan)
{
	const json_t *sg, *sgs = json_object_get(plan, "subgraphs");
	size_t i, n = json_array_size(sgs);
	int distinct = 0, glue = 0, shown = 0, *rows = xcalloc(n ? n : 1, sizeof(int));
	const char *on = json_string_value(json_object_get(plan, "measured_on"));
	long noisy = (long)json_integer_value(json_object_get(plan, "noisy"));
	task_rows(sgs, rows);
	json_array_foreach(sgs, i, sg) {
		distinct += json_integer_value(json_object_get(sg, "occurrences")) > 0;
		glue += json_is_true(json_object_get(sg, "glue"));
	}
	fprintf(f, "egg: %s in %zu subgraph(s), %d distinct task(s), written to %s", task, n, distinct, dir);
	if (on)
		fprintf(f, " (shares of the eager time measured on %s%s)", on, noisy ? "; some are noisy: see below" : "");
	fprintf(f, "\n  %-3s %-*s %5s %7s %10s %-5s  %s\n", "#", NAME_W, "subgraph (first occurrence)", "times", "share",
		"eager ms", "noise", "file (task)");
	json_array_foreach(sgs, i, sg) {
		const char *file = json_string_value(json_object_get(sg, "file")) ?: "?";
		const json_t *share = json_object_get(sg, "task_share");
		char s[16] = "-", m[16], num[16], times[16], name[NAME_W + 1];
		/* One row per distinct task, where it first occurs. */
		if (!rows[i] || rows[i] <= shown)
			continue;
		shown = rows[i];
		ms_of_each(sgs, program_task_of(sg) ?: file, m);
		if (json_is_number(share))
			snprintf(s, sizeof(s), "%.1f%%", 100 * json_number_value(share));
		snprintf(num, sizeof(num), "%d", rows[i]);
		snprintf(times, sizeof(times), "x%lld", (long long)json_integer_value(json_object_get(sg, "occurrences")));
		fprintf(f, "  %-3s %-*s %5s %7s %10s %-5s  %s\n", num, NAME_W,
			fmt_middle(json_string_value(json_object_get(sg, "name")) ?: "?", NAME_W, name, sizeof(name)), times, s,
			m, task_noise(sgs, program_task_of(sg) ?: file) ? "noisy" : "", file);
	}
	if (glue)
		fprintf(f, "  and %d glue subgraph(s): views only, they stay PyTorch\n", glue);
	print_blocks(f, plan, rows);
	if (json_is_number(json_object_get(plan, "eager_ms")))
		fprintf(f, "  the whole program: %.4f ms in PyTorch eager\n",
			json_number_value(json_object_get(plan, "eager_ms")));
	print_legend(f, plan, rows);
	free(rows);
}

int cmd_split(const struct command *self, int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	int no_measure = 0, code;
	struct opt own[] = {
		{ "no-measure", 0, OPT_FLAG, &no_measure, NULL,
		  "do not run the program to measure each subgraph's share of its eager time (only trace it)" },
		OPT_TABLE_END,
	};
	struct model_flags mf = { 0 };
	const struct opt *tables[] = { own, model_flag_options(&mf), NULL };
	struct eval_opts o;
	struct beat beat = BEAT_INIT;
	struct buf task = BUF_INIT;
	struct worker *w = NULL;
	json_t *plan = NULL;
	char *written = NULL;
	const char *program;
	int dir_was_there;

	if ((code = cmd_parse(self, tables, argc, argv, &ctx)) >= 0)
		goto out;
	dir_was_there = fs_exists(ctx.args.v[1]);
	/* A model, or a program in another mode or dtype: the program egg
	 * writes for it, in DIR beside the parts. */
	if (model_flags_program(&mf, ctx.args.v[0], ctx.args.v[1], &ctx.cfg, &written) < 0) {
		code = err_report();
		goto out;
	}
	program = written ? written : ctx.args.v[0];
	if (written && !ctx.json)
		fprintf(stderr, "egg: the program of %s is %s (egg compose and egg eval take it)\n", ctx.args.v[0],
			written);
	if (fs_read(program, &task) < 0) {
		code = err_report();
		goto out;
	}
	eval_opts_init(&o, ctx.device);
	if (!ctx.json) {
		/* Tracing and measuring a large program takes a minute: say so,
		 * then each step, and a line at least every BEAT_S (beat.h). */
		fprintf(stderr, "egg: splitting '%s' on %s: tracing it%s\n", program, ctx.device,
			no_measure ? "" : ", then measuring each subgraph's share of its eager time");
		beat.out = stderr;
		beat.label = "split";
		beat_begin(&beat, "starting the eval worker", 0);
		o.progress = beat_progress;
		o.progress_arg = &beat;
	}
	w = cmd_start_worker(&ctx);
	plan = program_split(w, &o, program, buf_str(&task), !no_measure, ctx.args.v[1]);
	if (!plan) {
		err_prefix("cannot split '%s'", ctx.args.v[0]);
		code = err_report();
		/* A spec that does not split leaves nothing behind: the program egg
		 * wrote for it, and DIR when egg made it. */
		if (written) {
			unlink(written);
			if (!dir_was_there)
				rmdir(ctx.args.v[1]);
		}
		goto out;
	}
	if (written)
		json_object_set_new(plan, "program_file", json_string(written));
	if (ctx.json)
		cmd_print_json(json_incref(plan));
	else
		print_plan(stderr, ctx.args.v[0], ctx.args.v[1], plan);
	code = EXIT_DONE;
out:
	free(written);
	json_decref(plan);
	worker_free(w);
	buf_release(&task);
	cmd_ctx_clear(&ctx);
	return code;
}

/* The final kernel of each subgraph task of run `run` ({FILE: PATH}), by
 * the tasks' paths: DIR/FILE. */
static json_t *run_kernels(const char *store_dir, const char *run, const char *dir, const json_t *plan)
{
	struct store *s = store_open(store_dir);
	json_t *tasks, *out = json_object(), *t, *sg;
	char *abs_dir = fs_absolute(dir);
	size_t i, j;
	if (!s) {
		json_decref(out);
		free(abs_dir);
		return NULL;
	}
	if (!(tasks = store_tasks(s, run))) {
		store_close(s);
		json_decref(out);
		free(abs_dir);
		return NULL;
	}
	json_array_foreach(json_object_get(plan, "subgraphs"), i, sg) {
		const char *file = json_string_value(json_object_get(sg, "file"));
		/* A repeat's kernel is its task's. */
		char *want = file ? fs_join(abs_dir, program_task_of(sg)) : NULL;
		json_array_foreach(tasks, j, t) {
			const json_t *r = json_object_get(t, "result");
			char *path = fs_absolute(json_string_value(json_object_get(t, "path")) ?: "");
			if (want && !strcmp(path, want) && json_is_true(json_object_get(r, "found")) &&
			    json_string_value(json_object_get(r, "final_kernel")))
				json_object_set(out, file, json_object_get(r, "final_kernel"));
			free(path);
		}
		free(want);
	}
	json_decref(tasks);
	store_close(s);
	free(abs_dir);
	return out;
}

int cmd_compose(const struct command *self, int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	const char *output = NULL, *run = NULL;
	int keep_torch = 0, code;
	struct opt own[] = {
		{ "output", 'o', OPT_STRING, &output, "OUT.py", "the composed program (required)" },
		{ "keep-torch", 0, OPT_FLAG, &keep_torch, NULL, "subgraphs without a kernel stay PyTorch" },
		{ "run", 0, OPT_STRING, &run, "RUN", "take each subgraph's kernel from run RUN (its final kernel)" },
		OPT_TABLE_END,
	};
	const struct opt *tables[] = { own, NULL };
	struct buf task = BUF_INIT;
	json_t *plan = NULL, *kernels = NULL, *summary = NULL;

	if ((code = cmd_parse(self, tables, argc, argv, &ctx)) >= 0)
		goto out;
	if (!output) {
		code = err_usage("egg compose needs -o OUT.py");
		goto out;
	}
	if (!(plan = program_load_plan(ctx.args.v[1]))) {
		code = err_report();
		goto out;
	}
	if (model_is_ref(ctx.args.v[0])) {
		/* The model spec egg split took: compose takes the program egg wrote
		 * for it beside the parts (the plan names it). */
		const char *name = json_string_value(json_object_get(plan, "program"));
		char *written = name ? fs_join(ctx.args.v[1], name) : NULL;
		if (!written || !fs_exists(written)) {
			err_set(ERR_INPUT, "'%s' is a model spec: egg compose takes the program egg split wrote for it (its "
				"file beside the parts in '%s'%s%s)", ctx.args.v[0], ctx.args.v[1], name ? ", " : "",
				name ? name : "");
			free(written);
			code = err_report();
			goto out;
		}
		code = fs_read(written, &task);
		free(written);
	} else {
		code = fs_read(ctx.args.v[0], &task);
	}
	if (code < 0) {
		code = err_report();
		goto out;
	}
	if (!program_plan_fits(plan, buf_str(&task))) {
		err_set(ERR_INPUT, "'%s' was not split from '%s' as it is now (its plan.json is of %s): split '%s' into a "
			"folder of its own with egg split", ctx.args.v[1], ctx.args.v[0],
			json_string_value(json_object_get(plan, "program")) ?: "another program", ctx.args.v[0]);
		code = err_report();
		goto out;
	}
	kernels = run ? run_kernels(ctx.cfg.store, run, ctx.args.v[1], plan)
		      : program_kernels_in_dir(plan, ctx.args.v[1]);
	if (!kernels || !(summary = program_compose(buf_str(&task), plan, ctx.args.v[1], kernels, &(struct compose_opts){ .keep_torch = keep_torch }, output))) {
		code = err_report();
		goto out;
	}
	if (ctx.json) {
		cmd_print_json(json_incref(summary));
	} else {
		fprintf(stderr, "egg: %s: %lld subgraph(s) through a kernel, %lld in PyTorch%s\n", output,
			json_integer_value(json_object_get(summary, "kernel_parts")),
			json_integer_value(json_object_get(summary, "torch_parts")),
			json_integer_value(json_object_get(summary, "torch_parts"))
				? " (evaluate it with egg eval --allow-torch)" : "");
		printf("%s\n", output);
	}
	code = EXIT_DONE;
out:
	json_decref(summary);
	json_decref(kernels);
	json_decref(plan);
	buf_release(&task);
	cmd_ctx_clear(&ctx);
	return code;
}
