/* cmd_optimize.c: `egg optimize TASK.py`: the EGG pipeline on one task (a run of one task). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../llm/spool.h"
#include "../pipeline/table.h"
#include "../report/report.h"
#include "../run/effort.h"
#include "../run/run.h"
#include "../run/whole.h"
#include "../store/store.h"
#include "../util/beat.h"
#include "../util/jsonnum.h"
#include "../util/hash.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "cli.h"
#include "flags.h"

/*
 * The run of this very command (same task text, device, model, spool and
 * options) that has not finished: it waits for spool replies, an
 * infrastructure failure stopped it, or its process ended while it ran
 * (Ctrl-C, a kill: the store reads such a run as stopped). Running the same
 * command again goes on with it rather than starting a run beside it; a run
 * another process runs now is not one. NULL when there is none; *why says
 * what left it unfinished (owned).
 */
static char *unfinished_run_of(const struct config *cfg, const json_t *config, char **why)
{
	struct store *s = store_open(cfg->store);
	json_t *runs, *r;
	size_t i;
	char *id = NULL;
	if (!s) {
		err_clear();
		return NULL;
	}
	runs = store_runs(s);
	json_array_foreach(runs, i, r) {
		const char *status = json_string_value(json_object_get(r, "status")) ?: "";
		json_t *full;
		if (strcmp(json_string_value(json_object_get(r, "command")) ?: "", "optimize") ||
		    (strcmp(status, "waiting") && strcmp(status, "stopped")))
			continue;
		full = store_run_get(s, json_string_value(json_object_get(r, "id")));
		if (full && json_equal(json_object_get(full, "config"), (json_t *)config)) {
			id = xstrdup(json_string_value(json_object_get(r, "id")));
			*why = xstrdup(json_string_value(json_object_get(full, "stop_reason")) ?:
				       !strcmp(status, "waiting") ? "it waits for replies" : "a task of it stopped");
		}
		json_decref(full);
		if (id)
			break;
	}
	json_decref(runs);
	store_close(s);
	err_clear();	/* an unreadable store: the new run's own open says so */
	return id;
}

/* The run that this same command left unfinished (unfinished_run_of),
 * said on stderr when there is one; NULL: none. */
static char *go_on_with(const struct cmd_ctx *ctx, const json_t *config)
{
	char *why = NULL, *id = unfinished_run_of(&ctx->cfg, config, &why);
	if (id && !ctx->json)
		fprintf(stderr, "egg: going on with run %s, which this same command left unfinished (%s)\n", id, why);
	free(why);
	return id;
}

/* The command line's options without the task path: what `--resume RUN`
 * replays before its own arguments (which name the task again). */
static json_t *options_of(int argc, char **argv, const char *task)
{
	json_t *args = json_array();
	int skipped = 0;
	for (int i = 0; i < argc; i++) {
		if (!skipped && !strcmp(argv[i], task)) {
			skipped = 1;
			continue;
		}
		json_array_append_new(args, json_string(argv[i]));
	}
	return args;
}

/* Copies the file a result names under `key` to `out`, and names `out` there. */
static int copy_kernel(json_t *result, const char *key, const char *out)
{
	struct buf k = BUF_INIT;
	int rc = fs_read(json_string_value(json_object_get(result, key)) ?: "", &k) < 0 ||
			 fs_write_atomic(out, k.data, k.len) < 0 ? -1 : 0;
	buf_release(&k);
	if (!rc)
		json_object_set_new(result, key, json_string(out));
	return rc;
}

/* The -o file, named in the last line on stderr (the path alone goes to
 * stdout), and how to run it on the CPU, where Triton finds no driver
 * unless its interpreter is on. */
static void say_written(const struct cmd_ctx *ctx, const char *what, const char *output)
{
	if (!output)
		return;
	fprintf(stderr, "egg: %s is written to '%s'%s\n", what, output,
		!strcmp(ctx->kind, "cpu") ? " (on the CPU, run it with TRITON_INTERPRET=1: Triton's interpreter)" : "");
}

/* The exit code of a one-task run (outcome.h), with its one line on
 * stderr; a budget that ended the search early is said too. */
static int task_exit(struct cmd_ctx *ctx, struct run *run)
{
	const struct task_state *ts = run_task(run, 0);
	char *subject = xasprintf("'%s'", ctx->args.v[0]);
	struct outcome_words words = { "task", subject, NULL, ctx->cfg.llm_spool };
	int code = run_exit_code(run, OUTCOME_ONE_TASK, &words);
	free(subject);
	if (code == EXIT_DONE && ts->stop.cause == STOP_BUDGET && !ctx->json)
		fprintf(stderr, "egg: stopped early: %s\n", ts->stop.reason);
	return code;
}

/* egg optimize TASK.py --split: the whole program (run/whole.h); what it
 * comes to (-o, the exit code and its line) is outcome.c's, from the
 * verdict run_whole_program gives. */
static int optimize_whole(struct cmd_ctx *ctx, struct run_opts *ro, const char *program, const char *output,
			  struct whole_opts wo, const char *resume, int quiet)
{
	struct run *run;
	struct program_verdict v = PROGRAM_VERDICT_INIT;
	struct run_outcome o;
	json_t *prog = NULL;
	int code;
	char *again = resume ? NULL : go_on_with(ctx, ro->config), *subject = NULL, *resume_cmd = NULL;
	struct beat beat = BEAT_INIT;
	/* The program's own jobs (the split, its baselines, the composed
	 * program's evaluation) say each step and a line at least every
	 * BEAT_S; the subgraph tasks have the run's board. */
	if (!quiet && !ctx->json) {
		beat.out = stderr;
		beat.label = "the program";
		beat_begin(&beat, "starting the eval worker", 0);
		ro->eo.progress = beat_progress;
		ro->eo.progress_arg = &beat;
	}
	ro->workers_per_device = 2;
	ro->po.skip_eager_at_sol = 1;
	run = resume || again ? run_resume(&ctx->cfg, ro, resume ? resume : again) : run_open(&ctx->cfg, ro);
	free(again);
	if (!run)
		return err_report();
	if (!ctx->json)
		fprintf(stderr, "egg: optimizing the program '%s' part by part on %s; run %s\n", ctx->args.v[0], ctx->device,
			run_id(run));
	if (!(prog = run_whole_program(run, program, &wo, &v))) {
		run_end_on_error(run);	/* "refused" on the user's input, never read as interrupted */
		code = err_report();
		goto out;
	}
	json_object_set_new(prog, "run_id", json_string(run_id(run)));
	if (!ctx->json)
		report_print_program(stderr, prog);
	run_outcome_of(run, &o);
	/* -o gets a program with kernels in it that beats the original run its
	 * best way, by the user's clock. */
	if (output && program_outcome_dropin(&o, &v) && copy_kernel(prog, "composed", output) < 0) {
		code = err_report();
		goto out;
	}
	if (ctx->json)
		cmd_print_json(json_incref(prog));
	subject = xasprintf("'%s'", ctx->args.v[0]);
	resume_cmd = xasprintf("egg optimize %s --split --resume %s", ctx->args.v[0], run_id(run));
	{
		struct outcome_words words = { "subgraph task", subject, resume_cmd, ctx->cfg.llm_spool };
		code = program_outcome_exit(&o, &v, &words, output);
	}
	if (code == EXIT_DONE && !ctx->json) {
		say_written(ctx, "the drop-in", output);
		printf("%s\n", output ? output : v.composed);
	}
out:
	free(subject);
	free(resume_cmd);
	program_verdict_clear(&v);
	json_decref(prog);
	run_close(run);
	return code;
}

/* The options of egg optimize of its own (the model's, the pipeline's and
 * the evaluation's come from their tables). */
struct optimize_args {
	const char *output, *run_dir, *existing, *resume;
	int table, split, max_tasks;	/* max_tasks -1: not given */
	double min_share;		/* -1: not given */
	int program_calls;		/* -1: not given */
	const char *cut;
};

/* A whole program's options (--split) from the command line's; -1 with
 * ERR_INPUT for a bad one. The call budget by default: what the flags'
 * pipeline plans for four tasks (the default pipeline on --max-subgraphs 4). */
static int whole_options(const struct optimize_args *a, const struct pipeline_opts *po, int quiet,
			 struct whole_opts *wo)
{
	int stages_on = 0, cut = cut_rule_of(a->cut ? a->cut : "auto");
	for (int s = 0; s < STAGE_COUNT; s++)
		stages_on += stages[s].tuning && po->stage_on[s];
	if (cut < 0) {
		err_set(ERR_INPUT, "--cut takes auto, fine or blocks, not '%s'", a->cut);
		return -1;
	}
	if (a->max_tasks == 0 || a->max_tasks < -1) {
		err_set(ERR_INPUT, "--max-subgraphs takes 1 or more (leave it out to optimize every subgraph worth it)");
		return -1;
	}
	if (a->program_calls < -1) {
		err_set(ERR_INPUT, "--program-calls takes 0 (every task what the flags give) or more");
		return -1;
	}
	wo->min_share = a->min_share >= 0 ? a->min_share : 0.02;
	wo->max_tasks = a->max_tasks > 0 ? a->max_tasks : 0;
	wo->progress = quiet ? RUN_QUIET : RUN_BOARD;
	wo->cut = (enum cut_rule)cut;
	wo->program_calls = a->program_calls >= 0 ? a->program_calls
			    : 4 * effort_calls(po->seeds, po->refine ? po->refine_rounds : 0,
					       po->refine ? po->fresh_seeds : 0, stages_on > 0, stages_on);
	return 0;
}

/* One task through the pipeline as a run of its own (or the unfinished run
 * of the same task and options, go_on_with): -o, the stage table and the
 * exit code (task_exit). */
static int optimize_task(struct cmd_ctx *ctx, struct run_opts *ro, const struct optimize_args *a, const char *task_path,
			 const char *clock, int quiet)
{
	struct strvec paths = STRVEC_INIT;
	struct run *run;
	const struct task_state *ts;
	json_t *result;
	int code;
	char *again = go_on_with(ctx, ro->config);
	run = again ? run_resume(&ctx->cfg, ro, again) : run_open(&ctx->cfg, ro);
	free(again);
	strvec_push(&paths, task_path);
	if (!run || run_add_tasks(run, &paths, a->run_dir) < 0) {
		code = err_report();
		goto out;
	}
	if (!ctx->json)
		fprintf(stderr, "egg: optimizing '%s' on %s; run %s\n", ctx->args.v[0], ctx->device, run_id(run));
	run_execute(run, 1, !ctx->json && !quiet ? RUN_EVENTS : RUN_QUIET);
	ts = run_task(run, 0);
	result = ts->result;
	/* -o gets the kernel of a finished task only: a task that waits for
	 * replies or stopped has a best kernel so far, not its result. */
	if (ts->status == TASK_DONE && json_is_true(json_object_get(result, "found")) && a->output &&
	    copy_kernel(result, "final_kernel", a->output) < 0) {
		code = err_report();
		goto out;
	}
	json_object_set_new(result, "run_id", json_string(run_id(run)));
	if ((!ctx->json || a->table) && json_object_get(result, "stages")) {
		const json_t *eager = json_object_get(result, "eager_ms");
		pipeline_print_table(stderr, ctx->args.v[0], ctx->device, clock, eager && !json_is_null(eager) ? result : NULL,
				     json_object_get(result, "stages"));
		pipeline_print_time(stderr, json_object_get(result, "time"));
		pipeline_print_usage(stderr, json_object_get(result, "usage"));
	}
	code = task_exit(ctx, run);
	if (ctx->json)
		cmd_print_json(json_incref(result));
	else if (code == EXIT_DONE) {
		say_written(ctx, "the kernel", a->output);
		printf("%s\n", json_string_value(json_object_get(result, "final_kernel")));
	}
out:
	run_close(run);
	strvec_clear(&paths);
	return code;
}

/* The SHA-256 of a file's text into hex; -1 (err set) when it cannot be read. */
static int file_sha256(const char *path, char hex[65])
{
	struct buf src = BUF_INIT;
	int bad = fs_read(path, &src) < 0;
	if (!bad)
		hash_hex(src.data ? src.data : "", src.len, hex);
	buf_release(&src);
	return bad ? -1 : 0;
}

/* egg optimize: one task (optimize_task) or, with --split, a whole program
 * (optimize_whole): the options, the program a model spec gets, and the
 * run's configuration. */
int cmd_optimize(const struct command *self, int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	struct eval_flags ef;
	struct pipeline_flags pf;
	struct run_opts ro = { 0 };
	struct strvec devices = STRVEC_INIT, all_args = STRVEC_INIT;
	struct optimize_args a = { .max_tasks = -1, .min_share = -1, .program_calls = -1 };
	struct whole_opts wo;
	int code;
	const struct opt own[] = {
		{ "output", 'o', OPT_STRING, &a.output, "OUT.py", "where to write the final kernel (default RUN_DIR/final.py)" },
		{ "run-dir", 0, OPT_STRING, &a.run_dir, "DIR", "run folder (default STORE/runs/RUN/TASK)" },
		{ "table", 0, OPT_FLAG, &a.table, NULL, "print the stage table on stderr even with --json" },
		{ "split", 0, OPT_FLAG, &a.split, NULL,
		  "a whole program: split it into subgraphs, optimize those worth it as one run, compose them into "
		  "OUT.py (ModelNew) and verify it end to end" },
		{ "min-share", 0, OPT_DOUBLE, &a.min_share, "F",
		  "with --split: subgraphs under this share of the program's eager time stay PyTorch (default 0.02; "
		  "0: every subgraph is optimized)" },
		{ "max-subgraphs", 0, OPT_INT, &a.max_tasks, "N",
		  "with --split: optimize at most N distinct subgraphs, largest share first (repeats count once); the "
		  "rest stay PyTorch" },
		{ "program-calls", 0, OPT_INT, &a.program_calls, "N",
		  "with --split: the model calls spread over the tasks by the time each can still win (default: what "
		  "the flags plan for 4 tasks; 0: every task what the flags give)" },
		{ "cut", 0, OPT_STRING, &a.cut, "RULE",
		  "with --split: each residual block as one task or as its subgraphs: auto (by what each can win), "
		  "fine or blocks (default auto)" },
		{ "resume", 0, OPT_STRING, &a.resume, "RUN", "with --split: go on with run RUN (after a crash, or with new "
		  "spool replies)" },
		{ "existing", 0, OPT_STRING, &a.existing, "KERNEL.py",
		  "an existing Triton kernel for the task: evaluated like a candidate, its time a third baseline "
		  "(default: TASK.existing.py beside the task, when present)" },
		OPT_TABLE_END,
	};
	struct model_flags mf = { 0 };
	const struct opt *tables[] = { own, model_flag_options(&mf), pipeline_flag_options(&pf),
				       eval_flag_options(&ef, EVAL_FLAGS_PIPELINE), NULL };
	char *written = NULL;
	const char *task_path;
	json_t *config = NULL;
	char *hint = NULL, *group = NULL, task_hash[65] = "";

	eval_flags_init(&ef);
	pipeline_flags_init(&pf);
	/* --resume RUN replays the options the run was started with (its
	 * spool, seeds, stages), then this command's own. */
	if ((code = cmd_resumed_args(argc, argv, &all_args)))
		goto out;
	if ((code = cmd_parse(self, tables, (int)all_args.n, all_args.v, &ctx)) >= 0)
		goto out;
	if (pipeline_flags_apply(&pf, &ro.po) < 0 || eval_flags_apply(&ef, EVAL_FLAGS_PIPELINE, ctx.device, &ro.eo) < 0) {
		code = err_report();
		goto out;
	}
	/* A model, or a program in another mode or dtype: the program egg
	 * writes for it under the store (the same spec, the same file). */
	if (model_flags_program(&mf, ctx.args.v[0], NULL, &ctx.cfg, &written) < 0) {
		code = err_report();
		goto out;
	}
	task_path = written ? written : ctx.args.v[0];
	if (written && !ctx.json)
		fprintf(stderr, "egg: the program of %s is %s\n", ctx.args.v[0], written);
	if (file_sha256(task_path, task_hash) < 0) {
		code = err_report();
		goto out;
	}
	strvec_push(&devices, ctx.device);
	hint = task_id_of(task_path, &group);
	config = json_pack("{s:s, s:s, s:s?, s:s?, s:o}", "device", ctx.device, "task", ctx.args.v[0], "model",
			   ctx.cfg.model, "llm_spool", ctx.cfg.llm_spool, "options", pipeline_flags_json(&pf, &ro.po, &ro.eo));
	json_object_set_new(config, "task_sha256", json_string(task_hash));
	json_object_set_new(config, "argv", options_of(argc, argv, ctx.args.v[0]));
	ro.command = "optimize";
	ro.id_hint = strstr(hint, "__") ? strstr(hint, "__") + 2 : hint;
	ro.devices = &devices;
	ro.workers_per_device = 1;
	ro.task_max_tokens = pf.max_tokens;
	ro.task_max_cost = pf.max_cost;
	ro.config = config;
	ro.existing = a.existing;
	if (a.split)
		code = whole_options(&a, &ro.po, pf.quiet || ctx.json, &wo) < 0
			       ? err_report() : optimize_whole(&ctx, &ro, task_path, a.output, wo, a.resume, pf.quiet);
	else if (a.resume || a.min_share >= 0 || a.max_tasks >= 0 || a.program_calls >= 0 || a.cut)
		code = err_usage("--resume, --min-share, --max-subgraphs, --program-calls and --cut go with --split");
	else if (a.existing && !fs_exists(a.existing))
		code = err_usage("no existing kernel '%s'", a.existing);
	else
		code = optimize_task(&ctx, &ro, &a, task_path, ef.clock ? ef.clock : "gpu", pf.quiet);
out:
	json_decref(config);
	free(written);
	free(hint);
	free(group);
	strvec_clear(&devices);
	strvec_clear(&all_args);
	cmd_ctx_clear(&ctx);
	return code;
}
