/* cmd_bench.c: `egg bench`: many tasks at once, crash-safe and resumable, over all devices (a run of many tasks). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../llm/spool.h"
#include "../report/report.h"
#include "../run/discover.h"
#include "../run/run.h"
#include "../store/store.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "cli.h"
#include "flags.h"

/* egg bench: parse, resume or open the run, execute it, report, and the exit code.
 * Over 100 lines because its option table and its exit rules are the
 * command's contract, read best in one place. */
int cmd_bench(const struct command *self, int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	struct eval_flags ef;
	struct pipeline_flags pf;
	struct run_opts ro = { 0 };
	struct strvec paths = STRVEC_INIT, devices = STRVEC_INIT, all_args = STRVEC_INIT;
	struct run *run = NULL;
	json_t *config = NULL, *report = NULL;
	const char *dir = NULL, *resume = NULL;
	int run_max_tokens = 0, code;
	double run_max_cost = 0;
	struct device_flags df;
	const struct opt own[] = {
		{ "dir", 0, OPT_STRING, &dir, "DIR", "run every *.py task under DIR (recursively)" },
		{ "resume", 0, OPT_STRING, &resume, "RUN", "finish an interrupted run" },
		{ "run-max-tokens", 0, OPT_INT, &run_max_tokens, "N", "token budget for the whole run" },
		{ "run-max-cost", 0, OPT_DOUBLE, &run_max_cost, "USD", "cost budget for the whole run" },
		OPT_TABLE_END,
	};
	const struct opt *tables[] = { own, device_flag_options(&df), pipeline_flag_options(&pf),
				       eval_flag_options(&ef, EVAL_FLAGS_PIPELINE), NULL };

	eval_flags_init(&ef);
	pipeline_flags_init(&pf);
	device_flags_init(&df);
	if ((code = cmd_resumed_args(argc, argv, &all_args)))
		goto out;
	if ((code = cmd_parse(self, tables, (int)all_args.n, all_args.v, &ctx)) >= 0)
		goto out;
	if ((code = cmd_task_paths(self, &ctx.args, dir, &paths)) >= 0)
		goto out;
	if (device_flags_apply(&df, &ctx.cfg, &devices) < 0 || pipeline_flags_apply(&pf, &ro.po) < 0 ||
	    eval_flags_apply(&ef, EVAL_FLAGS_PIPELINE, devices.v[0], &ro.eo) < 0) {
		code = err_report();
		goto out;
	}
	ro.command = "bench";
	ro.devices = &devices;
	ro.workers_per_device = df.per_device;
	ro.task_max_tokens = pf.max_tokens;
	ro.task_max_cost = pf.max_cost;
	ro.run_max_tokens = run_max_tokens;
	ro.run_max_cost = run_max_cost;
	if (resume) {
		run = run_resume(&ctx.cfg, &ro, resume);
	} else {
		json_t *args = json_array();
		for (int i = 0; i < argc; i++)
			json_array_append_new(args, json_string(argv[i]));
		config = json_pack("{s:o, s:s?, s:s, s:o}", "argv", args, "model", ctx.cfg.model, "provider",
				   ctx.cfg.provider, "options", pipeline_flags_json(&pf, &ro.po, &ro.eo));
		ro.config = config;
		run = run_open(&ctx.cfg, &ro);
	}
	if (!run || run_add_tasks(run, &paths, NULL) < 0) {
		code = err_report();
		goto out;
	}
	if (!pf.quiet)
		fprintf(stderr, "egg: bench run %s: %d task(s) on %zu device(s) (%s%s), %d job(s)\n", run_id(run),
			run_task_count(run), devices.n, devices.v[0], devices.n > 1 ? ", ..." : "",
			df.jobs > 0 ? df.jobs : 2 * (int)devices.n);
	run_execute(run, df.jobs, pf.quiet ? RUN_QUIET : RUN_BOARD);
	report = run_report(run);
	if (report && !pf.quiet && !ctx.json)
		report_print_text(stderr, report);
	if (ctx.json && report)
		cmd_print_json(json_incref(report));
	{
		char *subject = xasprintf("run %s", run_id(run)), *resume_cmd = xasprintf("egg bench --resume %s", run_id(run));
		struct outcome_words words = { "task", subject, resume_cmd, ctx.cfg.llm_spool };
		code = run_exit_code(run, OUTCOME_ANY_FOUND, &words);
		free(subject);
		free(resume_cmd);
	}
out:
	run_close(run);
	json_decref(report);
	json_decref(config);
	strvec_clear(&paths);
	strvec_clear(&devices);
	strvec_clear(&all_args);
	cmd_ctx_clear(&ctx);
	return code;
}
