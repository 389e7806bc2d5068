/* cmd_optimize.c: `egg optimize TASK.py`: run the EGG pipeline on one task. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../bench/runner.h"
#include "../llm/spool.h"
#include "../pipeline/pipeline.h"
#include "../store/store.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/timeutil.h"
#include "cli.h"
#include "optimize.h"

int cmd_optimize(const struct command *self, int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	struct optimize_flags fl;
	struct run_ctx rc;
	struct task_state ts;
	struct store *store = NULL;
	struct pool *pool = NULL;
	struct llm *llm = NULL;
	json_t *res_rows, *config = NULL;
	char *run_id = NULL, *runs_dir = NULL, *stem = NULL, *group = NULL;
	const char *device, *kind, *status;
	int code;

	memset(&rc, 0, sizeof(rc));
	memset(&ts, 0, sizeof(ts));
	optimize_flags_init(&fl);
	code = cmd_parse(self, optimize_options(&fl), CMD_WITH_CONFIG | CMD_WITH_JSON, argc, argv, &ctx);
	if (code) {
		code = code == 1 ? EXIT_DONE : code;
		goto out;
	}
	if (ctx.args.n != 1) {
		code = err_usage("optimize takes one TASK.py");
		goto out;
	}
	if ((code = cmd_device(&ctx.cfg, &device, &kind)))
		goto out;
	if (optimize_flags_apply(&fl, device, &rc.po, &rc.eo) < 0 || !fs_exists(ctx.args.v[0])) {
		if (!err_msg()[0] || err_kind() == ERR_NONE)
			err_set(ERR_INPUT, "cannot read task '%s': no such file", ctx.args.v[0]);
		code = err_report();
		goto out;
	}
	{
		struct buf probe = BUF_INIT;
		int bad = fs_read(ctx.args.v[0], &probe) < 0;
		buf_release(&probe);
		if (bad) {
			code = err_report();
			goto out;
		}
	}
	llm = llm_new(&ctx.cfg, ctx.cfg.cache);
	if (!llm || !(store = store_open(ctx.cfg.store))) {
		code = err_report();
		goto out;
	}
	ts.task_id = runner_task_id(ctx.args.v[0], &group);
	stem = xstrdup(strstr(ts.task_id, "__") ? strstr(ts.task_id, "__") + 2 : ts.task_id);
	run_id = optimize_run_id(stem);
	runs_dir = xasprintf("%s/runs/%s", ctx.cfg.store, run_id);
	config = json_pack("{s:s, s:s, s:s?, s:o}", "device", device, "task", ctx.args.v[0], "model", ctx.cfg.model,
			   "options", optimize_flags_json(&fl, &rc.po, &rc.eo));
	if (store_run_create(store, run_id, "optimize", config) < 0 ||
	    store_task_add(store, run_id, ts.task_id, ctx.args.v[0], group, "") < 0) {
		code = err_report();
		goto out;
	}
	pool = pool_new(&ctx.cfg, &device, 1, 1, runs_dir);
	if (ctx.cfg.cache) {
		char *dir = fs_join(ctx.cfg.store, "eval-cache");
		rc.cache = evcache_open(dir);
		free(dir);
		if (!rc.cache) {
			code = err_report();
			goto out;
		}
	}
	rc.cfg = &ctx.cfg;
	rc.store = store;
	rc.run_id = run_id;
	rc.runs_dir = runs_dir;
	rc.pool = pool;
	rc.llm = llm;
	rc.task_max_tokens = fl.max_tokens;
	rc.task_max_cost = fl.max_cost;
	rc.print_progress = !ctx.json && !fl.quiet;
	pthread_mutex_init(&rc.mu, NULL);
	ts.path = ctx.args.v[0];
	ts.group = group;
	ts.run_dir = fl.run_dir ? xstrdup(fl.run_dir) : NULL;
	if (!ctx.json)
		fprintf(stderr, "egg: optimizing '%s' on %s; run %s\n", ctx.args.v[0], device, run_id);
	runner_task(&rc, &ts);
	status = json_string_value(json_object_get(ts.result, "status"));
	store_run_set_status(store, run_id, !strcmp(status ?: "", "waiting") ? "waiting" : "done");

	res_rows = json_object_get(ts.result, "stages");
	if (json_is_true(json_object_get(ts.result, "found")) && fl.output) {
		const char *final = json_string_value(json_object_get(ts.result, "final_kernel"));
		struct buf k = BUF_INIT;
		if (fs_read(final, &k) < 0 || fs_write_atomic(fl.output, k.data, k.len) < 0) {
			buf_release(&k);
			code = err_report();
			goto out;
		}
		buf_release(&k);
		json_object_set_new(ts.result, "final_kernel", json_string(fl.output));
	}
	json_object_set_new(ts.result, "run_id", json_string(run_id));
	if ((!ctx.json || fl.table) && res_rows) {
		const json_t *eager = json_object_get(ts.result, "eager_ms");
		optimize_print_table(stderr, ctx.args.v[0], device, fl.clock ? fl.clock : "gpu",
				     eager && !json_is_null(eager) ? ts.result : NULL, res_rows);
	}
	if (ctx.json)
		cmd_print_json(json_incref(ts.result));
	else if (json_is_true(json_object_get(ts.result, "found")))
		printf("%s\n", json_string_value(json_object_get(ts.result, "final_kernel")));
	if (!strcmp(status ?: "", "waiting")) {
		json_t *pending = spool_pending(ctx.cfg.llm_spool);
		err_set(ERR_WAITING, "%zu request(s) await a reply in %s/pending; write each reply to %s/replies/KEY.txt "
			"and run the same command again", json_array_size(pending), ctx.cfg.llm_spool, ctx.cfg.llm_spool);
		json_decref(pending);
		code = err_report();
	} else if (!strcmp(ts.error_kind, "input")) {
		err_set(ERR_INPUT, "%s", json_string_value(json_object_get(ts.result, "stop_reason")) ?: "bad task");
		code = err_report();
	} else if (!strcmp(status ?: "", "failed")) {
		err_set(ERR_INFRA, "%s%s", json_string_value(json_object_get(ts.result, "stop_reason")) ?: "failed",
			json_is_true(json_object_get(ts.result, "found")) ? " (the best kernel so far was written)" : "");
		code = err_report();
	} else if (!json_is_true(json_object_get(ts.result, "found"))) {
		const char *why = json_string_value(json_object_get(ts.result, "stop_reason"));
		err_set(ERR_REJECTED, "no valid kernel for '%s'%s%s", ctx.args.v[0], why ? ": " : "", why ? why : "");
		code = err_report();
	} else {
		if (!strcmp(ts.error_kind, "budget") && !ctx.json)
			fprintf(stderr, "egg: stopped early: %s\n",
				json_string_value(json_object_get(ts.result, "stop_reason")));
		code = EXIT_DONE;
	}
out:
	json_decref(ts.result);
	free(ts.task_id);
	free(ts.run_dir);
	json_decref(config);
	pool_free(pool);
	store_close(store);
	llm_free(llm);
	free(run_id);
	free(runs_dir);
	evcache_close(rc.cache);
	free(stem);
	free(group);
	cmd_ctx_clear(&ctx);
	return code;
}
