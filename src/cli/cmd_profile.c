/* cmd_profile.c: `egg profile TASK.py KERNEL.py`: Nsight Compute metrics of one candidate. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../profile/ncu.h"
#include "../profile/profile.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "cli.h"

static void print_human(const json_t *r)
{
	const json_t *agg = json_object_get(r, "aggregate"), *k;
	size_t i;
	printf("kernels profiled: %lld\n", json_integer_value(json_object_get(r, "kernel_count")));
	for (size_t m = 0; m < ncu_nmetrics; m++) {
		const json_t *v = json_object_get(agg, ncu_metrics[m].key);
		if (json_is_number(v))
			printf("  %-22s %12.2f  %s\n", ncu_metrics[m].key, json_number_value(v), ncu_metrics[m].label);
		else
			printf("  %-22s %12s  %s\n", ncu_metrics[m].key, "n/a", ncu_metrics[m].label);
	}
	json_array_foreach(json_object_get(r, "kernels"), i, k)
		printf("kernel %zu: %s grid %s block %s, %.0f ns\n", i, json_string_value(json_object_get(k, "name")),
		       json_string_value(json_object_get(k, "grid")), json_string_value(json_object_get(k, "block")),
		       json_number_value(json_object_get(k, "duration_ns")));
}

int cmd_profile(const struct command *self, int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	struct eval_opts o = { 0 };
	struct buf task = BUF_INIT, kernel = BUF_INIT;
	struct worker *w = NULL;
	json_t *res = NULL;
	int code = cmd_parse(self, NULL, argc, argv, &ctx);

	if (code >= 0)
		goto out;
	if (fs_read(ctx.args.v[0], &task) < 0 || fs_read(ctx.args.v[1], &kernel) < 0) {
		code = err_report();
		goto out;
	}
	eval_opts_init(&o, ctx.device);
	w = cmd_start_worker(&ctx);
	res = profile_candidate(w, &o, buf_str(&task), buf_str(&kernel));
	if (ctx.json)
		cmd_print_json(json_incref(res));
	else if (json_is_true(json_object_get(res, "available")))
		print_human(res);
	if (!json_is_true(json_object_get(res, "available"))) {
		err_set(ERR_INFRA, "metrics unavailable: %s", json_string_value(json_object_get(res, "reason")));
		code = err_report();
		goto out;
	}
	code = EXIT_DONE;
out:
	json_decref(res);
	worker_free(w);
	buf_release(&task);
	buf_release(&kernel);
	cmd_ctx_clear(&ctx);
	return code;
}
