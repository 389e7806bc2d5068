/* cmd_eval.c: `egg eval TASK.py KERNEL.py`: check and time one candidate kernel. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../agents/context.h"
#include "../eval/eval.h"
#include "../util/beat.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/jsonnum.h"
#include "cli.h"
#include "flags.h"

/* The practical bound's line (eval/roofline.h), when the baseline has one:
 * the work at the rate egg's own Triton matrix product reached, and the
 * kernel's share of it (pct; NAN: no kernel). */
static void print_practical(const json_t *baseline, double pct)
{
	const json_t *rl = json_object_get(baseline, "roofline");
	if (!(json_num(baseline, "practical_ms") > 0))
		return;
	printf("practical:     %.4f ms (egg's own Triton matrix product: %.1f TFLOP/s %s at %lld^3)",
	       json_num(baseline, "practical_ms"), json_num(rl, "practical_flops_s") / 1e12,
	       json_string_value(json_object_get(rl, "practical_scheme")) ?: "?",
	       json_integer_value(json_object_get(rl, "practical_size")));
	if (!isnan(pct))
		printf("   kernel at %.1f%% of it", pct);
	printf("\n");
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
	if (json_is_integer(json_object_get(r, "trials_run")) && !json_integer_value(json_object_get(r, "trials_run")))
		printf("trials:        not run (it failed at the %s stage, before any output was compared)",
		       json_string_value(json_object_get(r, "stage")) ?: "?");
	else
		printf("trials:        %lld/%lld correct", json_integer_value(json_object_get(r, "correct_trials")),
		       json_integer_value(json_object_get(r, "trials")));
	if (!isnan(json_num(r, "max_abs_err")))
		printf(" (max abs err %.3g; max rel err %.3g, relative to max(|reference|, atol))", json_num(r, "max_abs_err"),
		       json_num(r, "max_rel_err"));
	printf("\n");
	if (t && json_is_object(t)) {
		const char *clock = json_string_value(json_object_get(t, "clock")) ?: "";
		if (!strncmp(clock, "cuda_events_", 12))
			clock += 12;
		printf("kernel:        %.4f ms median of %lld (min %.4f, max %.4f, cv %.2f%%) [", json_num(t, "median"),
		       json_integer_value(json_object_get(t, "iters")), json_num(t, "min"), json_num(t, "max"), 100 * json_num(t, "cv"));
		if (cpu)
			printf("CPU timing, Triton interpreter]\n");
		else
			printf("CUDA events, %s clock, %s]\n", clock, device);
	}
	if (!isnan(json_num(r, "eager_ms")))
		printf("eager:         %.4f ms%s", json_num(r, "eager_ms"), isnan(json_num(r, "speedup_eager")) ? "\n" : "");
	if (!isnan(json_num(r, "speedup_eager")))
		printf("   speedup %.2fx\n", json_num(r, "speedup_eager"));
	if (!isnan(json_num(r, "compile_ms")))
		printf("torch.compile: %.4f ms%s", json_num(r, "compile_ms"), isnan(json_num(r, "speedup_compile")) ? "\n" : "");
	if (!isnan(json_num(r, "speedup_compile")))
		printf("   speedup %.2fx\n", json_num(r, "speedup_compile"));
	if (json_is_true(json_object_get(json_object_get(r, "baseline"), "cached")))
		printf("baselines:     from egg's evaluation cache (measured earlier on this device with these "
		       "settings; --no-cache measures them again)\n");
	if (!isnan(json_num(r, "roofline_ms"))) {
		const json_t *rl = json_object_get(json_object_get(r, "baseline"), "roofline");
		int memory = !strcmp(json_string_value(json_object_get(rl, "bound")) ?: "", "memory") ||
			     !strcmp(json_string_value(json_object_get(r, "sol_basis")) ?: "", "memory");
		struct buf text = BUF_INIT;

		eval_roofline_text(&text, rl, memory ? "memory" : "compute");
		printf("roofline:      %.4f ms (%s, measured peaks%s)", json_num(r, "roofline_ms"), buf_str(&text),
		       cpu ? " of the CPU's torch; interpreted kernels are far from them" : "");
		buf_release(&text);
		if (!isnan(json_num(r, "sol_pct")))
			printf("   kernel at %.1f%% of it", json_num(r, "sol_pct"));
		printf("\n");
		print_practical(json_object_get(r, "baseline"), json_num(r, "practical_pct"));
	}
	if (json_is_integer(json_object_get(r, "triton_launches")))
		printf("launches:      %lld Triton launch(es) per call\n",
		       json_integer_value(json_object_get(r, "triton_launches")));
	json_array_foreach(json_object_get(r, "flags"), i, f)
		printf("flag:          %s\n", json_string_value(f));
	if (json_string_length(json_object_get(r, "log")))
		printf("log:\n%s\n", json_string_value(json_object_get(r, "log")));
}

/* A long evaluation (a full-size task on the CPU interpreter) says what it
 * is doing once it has run BEAT_S, then at most every BEAT_S while it
 * lasts (util/beat.h); quicker ones print nothing. `label` is the job's
 * name ("baseline", "kernel"). */
static void progress_for(struct eval_opts *o, struct beat *b, const char *label)
{
	*b = (struct beat)BEAT_INIT;
	b->out = stderr;
	b->label = label;
	beat_begin(b, label, BEAT_HOLD_S);
	o->progress = beat_progress;
	o->progress_arg = b;
}

/* `egg eval TASK.py`: eager and torch.compile times, the roofline bound
 * and their %SOL: what a kernel for the task would be measured against. */
static int baseline_only(struct cmd_ctx *ctx, struct worker *w, struct eval_opts *o)
{
	struct buf task = BUF_INIT;
	struct beat beat;
	json_t *b;
	int code;
	if (fs_read(ctx->args.v[0], &task) < 0)
		return err_report();
	if (!ctx->json) {
		fprintf(stderr, "egg: measuring the baselines of '%s' on %s...\n", ctx->args.v[0], ctx->device);
		progress_for(o, &beat, "baseline");
	}
	b = eval_baseline(w, o, buf_str(&task));
	buf_release(&task);
	if (!b)
		return err_report();
	json_object_set_new(b, "task", json_string(ctx->args.v[0]));
	code = EXIT_DONE;
	if (ctx->json) {
		cmd_print_json(json_incref(b));
	} else {
		const json_t *rl = json_object_get(b, "roofline");
		printf("eager:         %.4f ms", json_num(b, "eager_ms"));
		if (!isnan(json_num(b, "eager_sol_pct")))
			printf("   %.1f%% of the roofline bound", json_num(b, "eager_sol_pct"));
		printf("\n");
		if (!isnan(json_num(b, "compile_ms"))) {
			printf("torch.compile: %.4f ms", json_num(b, "compile_ms"));
			if (!isnan(json_num(b, "compile_sol_pct")))
				printf("   %.1f%% of the roofline bound", json_num(b, "compile_sol_pct"));
			printf("\n");
		} else if (json_string_value(json_object_get(b, "compile_error")))
			printf("torch.compile: failed: %s\n", json_string_value(json_object_get(b, "compile_error")));
		if (rl) {
			struct buf text = BUF_INIT;

			eval_roofline_text(&text, rl, NULL);
			printf("roofline:      %.4f ms (%s, measured peaks)\n", json_num(b, "roofline_ms"), buf_str(&text));
			buf_release(&text);
			print_practical(b, NAN);
		} else
			printf("roofline:      none (%s)\n",
			       json_string_value(json_object_get(b, "roofline_error")) ?:
			       json_string_value(json_object_get(json_object_get(b, "work"), "error")) ?:
			       "the reference's work was not counted");
		{
			/* What torch.compile runs, launch by launch: where the room is. */
			char *inductor = agents_compile_text(b);
			if (inductor)
				printf("%s\n", inductor);
			free(inductor);
		}
	}
	json_decref(b);
	return code;
}

/* egg eval of one pair (or, with no kernel, the task's own figures; the batch
 * forms are cmd_eval_batch.c). Over 100 lines: the option table and the
 * verdict's exit rules (a timing that ran out is not a rejection) belong
 * together. */
/* The exit code of one candidate's evaluation: done when it passed; a
 * correct kernel whose timing ran out of time is not a rejection. */
static int candidate_verdict(const char *kernel_path, const struct eval_opts *o, json_t *res)
{
	if (!eval_passed(res) &&
	    !strcmp(json_string_value(json_object_get(res, "stage")) ?: "", "timing") &&
	    !strcmp(json_string_value(json_object_get(res, "reason")) ?: "", "timed out") &&
	    json_integer_value(json_object_get(res, "correct_trials")) == json_integer_value(json_object_get(res, "trials"))) {
		/* Correct in every trial; only the timed loop ran out of time (a
		 * full-size task on the CPU, typically). Not a rejection of the
		 * kernel's correctness: say so, and what helps. */
		fprintf(stderr, "egg: not timed: '%s' is correct (%lld/%lld trials), but its timing exceeded the %.0f s "
			"limit: try fewer --iters (now %d), --no-timing, or a longer --timeout\n", kernel_path,
			json_integer_value(json_object_get(res, "correct_trials")),
			json_integer_value(json_object_get(res, "trials")), o->timeout_s, o->iters);
		return EXIT_NEGATIVE;
	}
	if (!eval_passed(res)) {
		err_set(ERR_REJECTED, "'%s' failed at %s: %s", kernel_path,
			json_string_value(json_object_get(res, "stage")) ?: "?",
			json_string_value(json_object_get(res, "reason")) ?: "no reason given");
		return err_report();
	}
	return EXIT_DONE;
}

int cmd_eval(const struct command *self, int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	struct eval_opts o = { 0 };
	struct eval_flags ef;
	int no_baseline = 0;
	double bound = 0;
	const struct opt own[] = {
		{ "no-baseline", 0, OPT_FLAG, &no_baseline, NULL, "skip the eager/torch.compile baselines" },
		{ "speedup-bound", 0, OPT_DOUBLE, &bound, "X", "re-measure speedups over eager beyond this (default 10)" },
		OPT_TABLE_END,
	};
	const struct opt *tables[] = { eval_flag_options(&ef, EVAL_FLAGS_EVAL), own, NULL };
	struct buf task = BUF_INIT, kernel = BUF_INIT;
	struct worker *w = NULL;
	struct beat beat;
	json_t *baseline = NULL, *res = NULL;
	char *cache_dir = NULL;
	int code;

	if (cmd_eval_is_batch(argc, argv))
		return cmd_eval_batch(argc, argv);
	eval_flags_init(&ef);
	if ((code = cmd_parse(self, tables, argc, argv, &ctx)) >= 0) {
		if (ctx.help)
			cmd_eval_batch_help(stdout);
		goto out;
	}
	if (eval_flags_apply(&ef, EVAL_FLAGS_EVAL, ctx.device, &o) < 0 || fs_read(ctx.args.v[0], &task) < 0 ||
	    (ctx.args.n > 1 && fs_read(ctx.args.v[1], &kernel) < 0)) {
		code = err_report();
		goto out;
	}
	if (bound > 0)
		o.speedup_bound = bound;
	cache_dir = fs_join(ctx.cfg.store, "eval-cache");
	if (ctx.cfg.cache && !(o.cache = evcache_open(cache_dir))) {
		code = err_report();
		goto out;
	}
	w = cmd_start_worker(&ctx);
	if (ctx.args.n == 1) {
		/* No kernel: the task's own figures (baselines, speed of light). */
		code = baseline_only(&ctx, w, &o);
		goto out;
	}
	if (!ctx.json)
		fprintf(stderr, "egg: evaluating '%s' on %s...\n", ctx.args.v[1], ctx.device);
	if (!no_baseline && o.timing) {
		if (!ctx.json)
			progress_for(&o, &beat, "baseline");
		baseline = eval_baseline(w, &o, buf_str(&task));
		if (!baseline) {
			code = err_report();
			goto out;
		}
	}
	if (!ctx.json)
		progress_for(&o, &beat, "kernel");
	res = eval_candidate(w, &o, buf_str(&task), buf_str(&kernel), baseline);
	if (!res) {
		code = err_report();
		goto out;
	}
	json_object_set_new(res, "task", json_string(ctx.args.v[0]));
	json_object_set_new(res, "kernel", json_string(ctx.args.v[1]));
	/* Jobs run again after a lost worker: egg's infrastructure, not the kernel. */
	json_object_set_new(res, "worker_retries", json_integer(worker_retries(w)));
	if (worker_retries(w) && !ctx.json)
		fprintf(stderr, "egg: the eval worker was lost %ld time(s); each job it had in hand ran again on a fresh "
			"worker (infrastructure, not the kernel's doing)\n", worker_retries(w));
	if (ctx.json)
		cmd_print_json(json_incref(res));
	else
		print_human(res);
	code = candidate_verdict(ctx.args.v[1], &o, res);
out:
	json_decref(res);
	json_decref(baseline);
	worker_free(w);
	evcache_close(o.cache);
	free(cache_dir);
	buf_release(&task);
	buf_release(&kernel);
	cmd_ctx_clear(&ctx);
	return code;
}
