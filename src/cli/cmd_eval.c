/* cmd_eval.c: `egg eval TASK.py KERNEL.py`: check and time one candidate kernel. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../eval/eval.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "cli.h"

static double num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void print_human(const json_t *r)
{
	const json_t *t = json_object_get(r, "timing"), *f;
	const char *device = json_string_value(json_object_get(r, "device")) ?: "?";
	int cpu = !strcmp(device, "cpu");
	size_t i;

	printf("verdict:       %s\n", json_string_value(json_object_get(r, "verdict")));
	printf("stage:         %s\n", json_string_value(json_object_get(r, "stage")));
	if (json_string_value(json_object_get(r, "reason")))
		printf("reason:        %s\n", json_string_value(json_object_get(r, "reason")));
	printf("trials:        %lld/%lld correct", json_integer_value(json_object_get(r, "correct_trials")),
	       json_integer_value(json_object_get(r, "trials")));
	if (!isnan(num(r, "max_abs_err")))
		printf(" (max abs err %.3g, max rel err %.3g)", num(r, "max_abs_err"), num(r, "max_rel_err"));
	printf("\n");
	if (t && json_is_object(t)) {
		const char *clock = json_string_value(json_object_get(t, "clock")) ?: "";
		if (!strncmp(clock, "cuda_events_", 12))
			clock += 12;
		printf("kernel:        %.4f ms median of %lld (min %.4f, max %.4f, cv %.2f%%) [", num(t, "median"),
		       json_integer_value(json_object_get(t, "iters")), num(t, "min"), num(t, "max"), 100 * num(t, "cv"));
		if (cpu)
			printf("CPU timing, Triton interpreter]\n");
		else
			printf("CUDA events, %s clock, %s]\n", clock, device);
	}
	if (!isnan(num(r, "eager_ms")))
		printf("eager:         %.4f ms%s", num(r, "eager_ms"), isnan(num(r, "speedup_eager")) ? "\n" : "");
	if (!isnan(num(r, "speedup_eager")))
		printf("   speedup %.2fx\n", num(r, "speedup_eager"));
	if (!isnan(num(r, "compile_ms")))
		printf("torch.compile: %.4f ms%s", num(r, "compile_ms"), isnan(num(r, "speedup_compile")) ? "\n" : "");
	if (!isnan(num(r, "speedup_compile")))
		printf("   speedup %.2fx\n", num(r, "speedup_compile"));
	if (json_is_integer(json_object_get(r, "triton_launches")))
		printf("launches:      %lld Triton launch(es) per call\n",
		       json_integer_value(json_object_get(r, "triton_launches")));
	json_array_foreach(json_object_get(r, "flags"), i, f)
		printf("flag:          %s\n", json_string_value(f));
	if (json_string_length(json_object_get(r, "log")))
		printf("log:\n%s\n", json_string_value(json_object_get(r, "log")));
}

int cmd_eval(const struct command *self, int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	struct eval_opts o = { 0 };
	const char *precision = NULL, *compile_mode = NULL, *clock = NULL;
	int trials = 0, iters = 0, warmup = 0, no_baseline = 0, no_timing = 0, no_truth = 0;
	double atol = -1, rtol = -1, timeout = 0, bound = 0;
	const struct opt own[] = {
		{ "trials", 0, OPT_INT, &trials, "N", "correctness trials with fresh inputs (default 5)" },
		{ "iters", 0, OPT_INT, &iters, "N", "timed calls (default 100 on a GPU, 5 on the CPU)" },
		{ "warmup", 0, OPT_INT, &warmup, "N", "warm-up calls before timing (default 10, CPU 1)" },
		{ "atol", 0, OPT_DOUBLE, &atol, "X", "absolute tolerance (default 1e-4; fp16/bf16 1e-2)" },
		{ "rtol", 0, OPT_DOUBLE, &rtol, "X", "relative tolerance (default 1e-4; fp16/bf16 1e-2)" },
		{ "precision", 0, OPT_STRING, &precision, "P", "fp32 (TF32 off, default) or tf32, for both sides" },
		{ "compile-mode", 0, OPT_STRING, &compile_mode, "M", "torch.compile baseline mode: default, max-autotune, or none (skip it)" },
		{ "clock", 0, OPT_STRING, &clock, "C", "GPU time: gpu (launch cost hidden, default) or latency (included)" },
		{ "no-baseline", 0, OPT_FLAG, &no_baseline, NULL, "skip the eager/torch.compile baselines" },
		{ "no-timing", 0, OPT_FLAG, &no_timing, NULL, "check correctness only" },
		{ "no-truth", 0, OPT_FLAG, &no_truth, NULL, "judge misses against the fp32 reference only (no float64 rule)" },
		{ "timeout", 0, OPT_DOUBLE, &timeout, "S", "seconds per evaluation (default 300, CPU 900)" },
		{ "speedup-bound", 0, OPT_DOUBLE, &bound, "X", "re-measure speedups over eager beyond this (default 10)" },
		OPT_TABLE_END,
	};
	struct buf task = BUF_INIT, kernel = BUF_INIT;
	struct worker *w = NULL;
	json_t *baseline = NULL, *res = NULL;
	char *log_dir = NULL, *log_path = NULL, *cache_dir = NULL;
	const char *device, *kind;
	int code = cmd_parse(self, own, CMD_WITH_CONFIG | CMD_WITH_JSON, argc, argv, &ctx);

	if (code) {
		code = code == 1 ? EXIT_DONE : code;
		goto out;
	}
	if (ctx.args.n != 2) {
		code = err_usage("eval takes TASK.py and KERNEL.py");
		goto out;
	}
	if ((code = cmd_device(&ctx.cfg, &device, &kind)))
		goto out;
	eval_opts_init(&o, device);
	if ((precision && eval_opts_set_precision(&o, precision) < 0) ||
	    (compile_mode && eval_opts_set_compile_mode(&o, compile_mode) < 0) ||
	    (clock && eval_opts_set_clock(&o, clock) < 0)) {
		code = err_report();
		goto out;
	}
	if (trials < 0 || iters < 0 || warmup < 0) {
		code = err_usage("--trials, --iters and --warmup must not be negative");
		goto out;
	}
	if (fs_read(ctx.args.v[0], &task) < 0 || fs_read(ctx.args.v[1], &kernel) < 0) {
		code = err_report();
		goto out;
	}
	if (trials)
		o.trials = trials;
	if (iters)
		o.iters = iters;
	if (warmup)
		o.warmup = warmup;
	o.atol = atol;
	o.rtol = rtol;
	if (timeout > 0)
		o.timeout_s = timeout;
	if (bound > 0)
		o.speedup_bound = bound;
	o.timing = !no_timing;
	o.truth = !no_truth;
	cache_dir = fs_join(ctx.cfg.store, "eval-cache");
	if (ctx.cfg.cache && !(o.cache = evcache_open(cache_dir))) {
		code = err_report();
		goto out;
	}
	log_dir = fs_join(ctx.cfg.store, "logs");
	if (fs_mkdir_p(log_dir) == 0)
		log_path = fs_join(log_dir, "worker.log");
	err_clear();
	w = worker_new(&ctx.cfg, kind, log_path);
	if (!ctx.json)
		fprintf(stderr, "egg: evaluating '%s' on %s...\n", ctx.args.v[1], device);
	if (!no_baseline && o.timing) {
		baseline = eval_baseline(w, &o, buf_str(&task));
		if (!baseline) {
			code = err_report();
			goto out;
		}
	}
	res = eval_candidate(w, &o, buf_str(&task), buf_str(&kernel), baseline);
	if (!res) {
		code = err_report();
		goto out;
	}
	json_object_set_new(res, "task", json_string(ctx.args.v[0]));
	json_object_set_new(res, "kernel", json_string(ctx.args.v[1]));
	if (ctx.json)
		cmd_print_json(json_incref(res));
	else
		print_human(res);
	if (strcmp(json_string_value(json_object_get(res, "verdict")) ?: "", "pass")) {
		err_set(ERR_REJECTED, "'%s' failed at %s: %s", ctx.args.v[1],
			json_string_value(json_object_get(res, "stage")) ?: "?",
			json_string_value(json_object_get(res, "reason")) ?: "no reason given");
		code = err_report();
		goto out;
	}
	code = EXIT_DONE;
out:
	json_decref(res);
	json_decref(baseline);
	worker_free(w);
	evcache_close(o.cache);
	free(cache_dir);
	free(log_dir);
	free(log_path);
	buf_release(&task);
	buf_release(&kernel);
	cmd_ctx_clear(&ctx);
	return code;
}
