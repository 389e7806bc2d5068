/* cmd_runs.c: `egg runs`: the runs in the store, newest first, with their tasks' states and cost. */
#include <stdio.h>

#include "../store/store.h"
#include "../util/err.h"
#include "cli.h"

int cmd_runs(const struct command *self, int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	struct store *s = NULL;
	json_t *runs = NULL, *r;
	size_t i;
	int code = cmd_parse(self, NULL, argc, argv, &ctx);

	if (code >= 0)
		goto out;
	if (!store_exists(ctx.cfg.store)) {
		/* Nothing to list, and nothing created by listing it. */
		if (ctx.json)
			cmd_print_json(json_array());
		else
			printf("no runs: there is no store at '%s' yet\n", ctx.cfg.store);
		code = 0;
		goto out;
	}
	if (!(s = store_open(ctx.cfg.store))) {
		code = err_report();
		goto out;
	}
	if (!(runs = store_runs(s))) {
		code = err_report();
		goto out;
	}
	if (ctx.json) {
		cmd_print_json(json_pack("{s:O}", "runs", runs));
	} else {
		printf("%-36s %-10s %-8s %-20s %6s %6s %6s %7s %7s %10s\n", "run", "command", "status", "created", "tasks",
		       "done", "failed", "waiting", "stopped", "cost");
		json_array_foreach(runs, i, r)
			printf("%-36s %-10s %-8s %-20s %6lld %6lld %6lld %7lld %7lld %10.4f\n",
			       json_string_value(json_object_get(r, "id")), json_string_value(json_object_get(r, "command")),
			       json_string_value(json_object_get(r, "status")), json_string_value(json_object_get(r, "created")),
			       json_integer_value(json_object_get(r, "tasks")), json_integer_value(json_object_get(r, "done")),
			       json_integer_value(json_object_get(r, "failed")), json_integer_value(json_object_get(r, "waiting")),
			       json_integer_value(json_object_get(r, "stopped")),
			       json_number_value(json_object_get(r, "cost_usd")));
	}
	code = EXIT_DONE;
out:
	json_decref(runs);
	store_close(s);
	cmd_ctx_clear(&ctx);
	return code;
}
