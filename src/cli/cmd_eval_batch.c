/* cmd_eval_batch.c: `egg eval --batch LIST` and `egg eval --kernelbench KB --generations GEN`: kernels made
 * elsewhere, every (task, kernel) pair judged by egg's evaluator as one resumable run over the devices. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../report/report.h"
#include "../run/run.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "cli.h"
#include "flags.h"

static const struct command batch_command = {
	"eval", NULL,
	"--batch LIST | --kernelbench KB_DIR --generations GEN_DIR [--resume RUN] [--devices LIST] [--jobs N] [--json]",
	"Judge kernels made elsewhere: every (task, kernel) pair through egg's evaluator, as one resumable run.",
	NEEDS_WORKER | NEEDS_STORE | NEEDS_JSON | NEEDS_SLURM, 0, 0,
};

int cmd_eval_is_batch(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "--batch", 7) || !strncmp(argv[i], "--kernelbench", 13) ||
		    !strncmp(argv[i], "--generations", 13) || !strncmp(argv[i], "--resume", 8))
			return 1;
	return 0;
}

/* `path` as written in a list: relative paths are relative to the list's folder. */
static char *beside(const char *list, const char *path)
{
	const char *slash = strrchr(list, '/');
	if (path[0] == '/' || !slash)
		return xstrdup(path);
	return xasprintf("%.*s/%s", (int)(slash - list), list, path);
}

/*
 * Reads LIST: one pair per line, `TASK.py KERNEL.py` or a JSON object
 * {"task", "kernel"}; blank lines and lines starting with # are skipped.
 * -1 with ERR_INPUT naming the line that is neither.
 */
static int read_list(const char *list, struct strvec *tasks, struct strvec *kernels)
{
	struct buf text = BUF_INIT;
	char *save = NULL, *line;
	int n = 0, rc = 0;
	if (fs_read(list, &text) < 0)
		return -1;
	for (line = strtok_r(text.data ? text.data : (char[]){ 0 }, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char a[4096], b[4096], extra[2];
		n++;
		while (isspace((unsigned char)*line))
			line++;
		if (!*line || *line == '#')
			continue;
		if (*line == '{') {
			json_error_t je;
			json_t *o = json_loads(line, 0, &je);
			const char *t = json_string_value(json_object_get(o, "task")),
				   *k = json_string_value(json_object_get(o, "kernel"));
			if (t && k) {
				char *tp = beside(list, t), *kp = beside(list, k);
				strvec_push(tasks, tp);
				strvec_push(kernels, kp);
				free(tp);
				free(kp);
			}
			json_decref(o);
			if (!t || !k) {
				err_set(ERR_INPUT, "%s line %d: a JSON line needs \"task\" and \"kernel\" strings", list, n);
				rc = -1;
				break;
			}
			continue;
		}
		if (sscanf(line, "%4095s %4095s %1s", a, b, extra) != 2) {
			err_set(ERR_INPUT, "%s line %d: expected 'TASK.py KERNEL.py' or {\"task\": ..., \"kernel\": ...}", list,
				n);
			rc = -1;
			break;
		}
		{
			char *tp = beside(list, a), *kp = beside(list, b);
			strvec_push(tasks, tp);
			strvec_push(kernels, kp);
			free(tp);
			free(kp);
		}
	}
	buf_release(&text);
	if (!rc && !tasks->n) {
		err_set(ERR_INPUT, "%s holds no pair", list);
		rc = -1;
	}
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The task file of KernelBench problem P of level L: KB/levelL/P_*.py (KB
 * may be the repository, holding KernelBench/levelL). NULL when none. */
static char *kernelbench_task(const char *kb, int level, int problem)
{
	char *dir = xasprintf("%s/level%d", kb, level), *found = NULL, prefix[32];
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d) {
		free(dir);
		dir = xasprintf("%s/KernelBench/level%d", kb, level);
		d = opendir(dir);
	}
	snprintf(prefix, sizeof(prefix), "%d_", problem);
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix)) && strlen(e->d_name) > 3 &&
		    !strcmp(e->d_name + strlen(e->d_name) - 3, ".py")) {
			found = xasprintf("%s/%s", dir, e->d_name);
			break;
		}
	if (d)
		closedir(d);
	free(dir);
	return found;
}

/*
 * Pairs from KernelBench's layout: each GEN/level_L_problem_P_sample_S_kernel.py
 * with the task of level L, problem P. Samples of one problem share its
 * baselines (the evaluation cache keys them by the task). A generation whose
 * problem has no task file is still a pair (it fails as unreadable, named);
 * other files in GEN are ignored. -1 with ERR_INPUT when GEN is unreadable
 * or holds no generation.
 */
static int kernelbench_pairs(const char *kb, const char *gen, struct strvec *tasks, struct strvec *kernels)
{
	DIR *d = opendir(gen);
	struct dirent *e;
	struct strvec names = STRVEC_INIT;
	if (!d) {
		err_set(ERR_INPUT, "cannot read the generations folder '%s'", gen);
		return -1;
	}
	while ((e = readdir(d))) {
		int level, problem, sample, used = 0;
		if (sscanf(e->d_name, "level_%d_problem_%d_sample_%d_kernel.py%n", &level, &problem, &sample, &used) == 3 &&
		    used == (int)strlen(e->d_name))
			strvec_push(&names, e->d_name);
	}
	closedir(d);
	qsort(names.v, names.n, sizeof(char *), by_name);
	for (size_t i = 0; i < names.n; i++) {
		int level, problem, sample;
		char *task, *kernel = xasprintf("%s/%s", gen, names.v[i]);
		sscanf(names.v[i], "level_%d_problem_%d_sample_%d", &level, &problem, &sample);
		task = kernelbench_task(kb, level, problem);
		if (!task)
			task = xasprintf("%s/level%d/%d_(no such problem).py", kb, level, problem);
		strvec_push(tasks, task);
		strvec_push(kernels, kernel);
		free(task);
		free(kernel);
	}
	strvec_clear(&names);
	if (!tasks->n) {
		err_set(ERR_INPUT, "'%s' holds no level_L_problem_P_sample_S_kernel.py file", gen);
		return -1;
	}
	return 0;
}

/* One pair's entry of --json's results list (its task's summary, trimmed). */
static json_t *result_entry(const struct task_state *ts)
{
	static const char *const keys[] = { "task", "kernel", "verdict", "stage", "reason", "kernel_ms", "eager_ms",
					    "compile_ms", "speedup_eager", "speedup_compile", "sol_pct", "compiled",
					    "correctness", "runtime", "ref_runtime", "task_id", "status" };
	json_t *e = json_object();
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		json_object_set(e, keys[i], json_object_get(ts->result, keys[i]) ?: json_null());
	json_object_set_new(e, "task", json_string(ts->path));
	json_object_set_new(e, "kernel", json_string(ts->kernel));
	json_object_set_new(e, "status", json_string(task_status_name(ts->status)));
	if (ts->status != TASK_DONE) {
		json_object_set_new(e, "verdict", json_string(ts->status == TASK_FAILED ? "fail" : "not judged"));
		json_object_set_new(e, "reason", ts->stop.reason[0] ? json_string(ts->stop.reason) : json_null());
	}
	return e;
}

static void print_pairs(FILE *f, struct run *run)
{
	fprintf(f, "%-56s %-10s %-12s %10s %9s  %s\n", "pair", "verdict", "stage", "kernel ms", "vs eager", "reason");
	for (int i = 0; i < run_task_count(run); i++) {
		const struct task_state *ts = run_task(run, i);
		json_t *e = result_entry(ts);
		char ms[16] = "-", sp[16] = "-";
		if (json_is_number(json_object_get(e, "kernel_ms")))
			snprintf(ms, sizeof(ms), "%.4f", json_number_value(json_object_get(e, "kernel_ms")));
		if (json_is_number(json_object_get(e, "speedup_eager")))
			snprintf(sp, sizeof(sp), "%.2fx", json_number_value(json_object_get(e, "speedup_eager")));
		fprintf(f, "%-56.56s %-10s %-12s %10s %9s  %.100s\n", ts->task_id,
			json_string_value(json_object_get(e, "verdict")) ?: "-",
			json_string_value(json_object_get(e, "stage")) ?: "-", ms, sp,
			json_string_value(json_object_get(e, "reason")) ?: "");
		json_decref(e);
	}
}

/* What the batch forms' own options set. */
struct batch_args {
	const char *list, *kb, *gen, *resume;
	int quiet;
};

/* The batch forms' own options (a static table, like device_flag_options). */
static const struct opt *batch_options(struct batch_args *a)
{
	static struct opt table[6];
	const struct opt t[] = {
		{ "batch", 0, OPT_STRING, &a->list, "LIST", "pairs to judge: lines 'TASK.py KERNEL.py' or {\"task\", \"kernel\"}" },
		{ "kernelbench", 0, OPT_STRING, &a->kb, "KB_DIR", "KernelBench's tasks (levelL/P_Name.py)" },
		{ "generations", 0, OPT_STRING, &a->gen, "GEN_DIR", "kernels by KernelBench's names "
		  "(level_L_problem_P_sample_S_kernel.py)" },
		{ "resume", 0, OPT_STRING, &a->resume, "RUN", "finish an interrupted judging run" },
		{ "quiet", 'q', OPT_FLAG, &a->quiet, NULL, "no progress lines" },
		OPT_TABLE_END,
	};
	memcpy(table, t, sizeof(t));
	return table;
}

void cmd_eval_batch_help(FILE *f)
{
	struct batch_args a = { 0 };
	struct device_flags df;
	const struct opt *tables[] = { batch_options(&a), device_flag_options(&df), NULL };
	fprintf(f, "\nbatch forms: egg eval %s\n%s\n\nbatch options (and the evaluation options above but --no-baseline "
		   "and --speedup-bound):\n", batch_command.usage, batch_command.summary);
	opt_print_help(f, tables);
}

/* egg eval --batch / --kernelbench. Over 100 lines: the option table, the
 * two ways pairs are read and the exit rules are the command's contract. */
int cmd_eval_batch(int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	struct eval_flags ef;
	struct device_flags df;
	struct run_opts ro = { 0 };
	struct strvec tasks = STRVEC_INIT, kernels = STRVEC_INIT, devices = STRVEC_INIT, all_args = STRVEC_INIT;
	struct run *run = NULL;
	json_t *config = NULL, *report = NULL;
	struct batch_args a = { 0 };
	int code;
	const struct opt *tables[] = { batch_options(&a), device_flag_options(&df), eval_flag_options(&ef, EVAL_FLAGS_EVAL),
				       NULL };

	/* One pair's option, said before anything is read or started. */
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--no-baseline"))
			return err_usage("--no-baseline goes with one pair (egg eval TASK.py KERNEL.py), not with --batch, "
					 "--kernelbench or --resume: a batch times every pair against its task's baselines");
	eval_flags_init(&ef);
	device_flags_init(&df);
	if ((code = cmd_resumed_args(argc, argv, &all_args)))
		goto out;
	if ((code = cmd_parse(&batch_command, tables, (int)all_args.n, all_args.v, &ctx)) >= 0)
		goto out;
	if (!!a.list + !!a.kb != 1 || !!a.kb != !!a.gen) {
		code = err_usage("give either --batch LIST or --kernelbench KB_DIR with --generations GEN_DIR");
		goto out;
	}
	if ((a.list ? read_list(a.list, &tasks, &kernels) : kernelbench_pairs(a.kb, a.gen, &tasks, &kernels)) < 0 ||
	    device_flags_apply(&df, &ctx.cfg, &devices) < 0 || eval_flags_apply(&ef, EVAL_FLAGS_EVAL, devices.v[0], &ro.eo) < 0) {
		code = err_report();
		goto out;
	}
	ro.command = "eval-batch";
	ro.id_hint = "judge";
	ro.devices = &devices;
	ro.workers_per_device = df.per_device;
	ro.judge_only = 1;
	if (a.resume) {
		run = run_resume(&ctx.cfg, &ro, a.resume);
	} else {
		json_t *args = json_array();
		for (int i = 0; i < argc; i++)
			json_array_append_new(args, json_string(argv[i]));
		config = json_pack("{s:o, s:I, s:s}", "argv", args, "pairs", (json_int_t)tasks.n, "judge", "egg eval");
		ro.config = config;
		run = run_open(&ctx.cfg, &ro);
	}
	if (!run || run_add_pairs(run, &tasks, &kernels) < 0) {
		code = err_report();
		goto out;
	}
	if (!a.quiet && !ctx.json)
		fprintf(stderr, "egg: judging run %s: %zu pair(s) on %zu device(s) (%s%s)\n", run_id(run), tasks.n,
			devices.n, devices.v[0], devices.n > 1 ? ", ..." : "");
	run_execute(run, df.jobs, a.quiet || ctx.json ? RUN_QUIET : RUN_BOARD);
	report = run_report(run);
	if (ctx.json) {
		json_t *out = json_pack("{s:s, s:O?}", "run", run_id(run), "summary", json_object_get(report, "all")),
		       *results = json_array();
		for (int i = 0; i < run_task_count(run); i++)
			json_array_append_new(results, result_entry(run_task(run, i)));
		json_object_set_new(out, "results", results);
		cmd_print_json(out);
	} else {
		print_pairs(stdout, run);
		if (report && !a.quiet)
			report_print_text(stderr, report);
	}
	{
		char *subject = xasprintf("run %s", run_id(run)), *resume_cmd = xasprintf("egg eval --resume %s", run_id(run));
		struct outcome_words words = { "pair", subject, resume_cmd, NULL };
		code = run_exit_code(run, OUTCOME_ALL_PASSED, &words);
		free(subject);
		free(resume_cmd);
	}
out:
	run_close(run);
	json_decref(report);
	json_decref(config);
	strvec_clear(&tasks);
	strvec_clear(&kernels);
	strvec_clear(&devices);
	strvec_clear(&all_args);
	cmd_ctx_clear(&ctx);
	return code;
}
