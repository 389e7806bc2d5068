/* cmd_report.c: `egg report RUN`: a run's metrics as text, JSON, CSV or HTML. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../report/report.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "cli.h"

int cmd_report(const struct command *self, int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	const char *html = NULL;
	int csv = 0;
	const struct opt own[] = {
		{ "csv", 0, OPT_FLAG, &csv, NULL, "print one CSV row per task on stdout" },
		{ "html", 0, OPT_STRING, &html, "FILE", "write a self-contained HTML report" },
		OPT_TABLE_END,
	};
	struct store *s = NULL;
	json_t *rep = NULL, *runs = NULL;
	const char *run_id;
	const struct opt *tables[] = { own, NULL };
	int code = cmd_parse(self, tables, argc, argv, &ctx);

	if (code >= 0)
		goto out;
	if (!store_exists(ctx.cfg.store)) {
		err_set(ERR_INPUT, "no store at '%s' (egg optimize and egg bench make one; --store or EGG_STORE names "
			"another)", ctx.cfg.store);
		code = err_report();
		goto out;
	}
	if (!(s = store_open(ctx.cfg.store))) {
		code = err_report();
		goto out;
	}
	run_id = ctx.args.v[0];
	if (!strcmp(run_id, "latest")) {
		if (!(runs = store_runs(s))) {
			code = err_report();
			goto out;
		}
		run_id = json_string_value(json_object_get(json_array_get(runs, 0), "id"));
		if (!run_id) {
			code = err_usage("the store '%s' holds no run", ctx.cfg.store);
			goto out;
		}
	}
	rep = report_compute(s, run_id);
	if (!rep) {
		code = err_report();
		goto out;
	}
	run_id = json_string_value(json_object_get(json_object_get(rep, "run"), "id"));
	{
		char *dir = xasprintf("%s/runs/%s", ctx.cfg.store, run_id);
		report_attach_program(rep, dir);
		free(dir);
	}
	if (html && report_html(rep, html) < 0) {
		code = err_report();
		goto out;
	}
	if (ctx.json) {
		cmd_print_json(json_incref(rep));
	} else if (csv) {
		char *text = report_csv(rep);
		fputs(text, stdout);
		free(text);
	} else if (!html) {
		report_print_text(stdout, rep);
	}
	if (html && !ctx.json)
		fprintf(stderr, "egg: wrote %s\n", html);
	code = EXIT_DONE;
out:
	json_decref(rep);
	json_decref(runs);
	store_close(s);
	cmd_ctx_clear(&ctx);
	return code;
}
