/* optimize.c: flags, summaries and progress shared by `egg optimize` and `egg bench`. */
#include "optimize.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../util/buf.h"
#include "../util/err.h"
#include "../util/timeutil.h"

void optimize_flags_init(struct optimize_flags *f)
{
	memset(f, 0, sizeof(*f));
	f->atol = f->rtol = -1;
}

#define PIPELINE_OPTIONS(f) \
	{ "seeds", 0, OPT_INT, &f->seeds, "S", "seed kernels with different algorithms (default 2)" }, \
	{ "seed-repairs", 0, OPT_INT, &f->seed_repairs, "N", "repairs per seed (default 3)" }, \
	{ "repairs", 0, OPT_INT, &f->repairs, "N", "repairs per later candidate (default 1)" }, \
	{ "stages", 0, OPT_STRING, &f->stages, "LIST", "tuning stages to run (default mapping,tiling,memory)" }, \
	{ "top-k", 0, OPT_INT, &f->top_k, "K", "candidates kept through each stage (default 1)" }, \
	{ "no-multi-seed", 0, OPT_FLAG, &f->no_multi_seed, NULL, "ablation: one seed" }, \
	{ "no-refine", 0, OPT_FLAG, &f->no_refine, NULL, "ablation: skip algorithmic refinement" }, \
	{ "no-hw-tune", 0, OPT_FLAG, &f->no_hw_tune, NULL, "ablation: skip the three tuning stages" }, \
	{ "single-agent", 0, OPT_FLAG, &f->single_agent, NULL, "ablation: one agent instead of code/profile/debug" }, \
	{ "no-profile", 0, OPT_FLAG, &f->no_profile, NULL, "do not run ncu (the profile agent gets timings only)" }, \
	{ "trials", 0, OPT_INT, &f->trials, "N", "correctness trials per candidate (default 5)" }, \
	{ "iters", 0, OPT_INT, &f->iters, "N", "timed calls per candidate (default 100; CPU 5)" }, \
	{ "warmup", 0, OPT_INT, &f->warmup, "N", "warm-up calls (default 10; CPU 1)" }, \
	{ "atol", 0, OPT_DOUBLE, &f->atol, "X", "absolute tolerance (default 1e-4; fp16/bf16 1e-2)" }, \
	{ "rtol", 0, OPT_DOUBLE, &f->rtol, "X", "relative tolerance (default 1e-4; fp16/bf16 1e-2)" }, \
	{ "precision", 0, OPT_STRING, &f->precision, "P", "fp32 (TF32 off, default) or tf32, for both sides" }, \
	{ "compile-mode", 0, OPT_STRING, &f->compile_mode, "M", "torch.compile baseline: default, max-autotune or none" }, \
	{ "clock", 0, OPT_STRING, &f->clock, "C", "GPU time: gpu (launch cost hidden, default) or latency (included)" }, \
	{ "no-truth", 0, OPT_FLAG, &f->no_truth, NULL, "judge misses against the fp32 reference only (no float64 rule)" }, \
	{ "timeout", 0, OPT_DOUBLE, &f->timeout, "S", "seconds per evaluation" }, \
	{ "max-tokens", 0, OPT_INT, &f->max_tokens, "N", "token budget per task" }, \
	{ "max-cost", 0, OPT_DOUBLE, &f->max_cost, "USD", "cost budget per task" }, \
	{ "quiet", 'q', OPT_FLAG, &f->quiet, NULL, "no progress lines" }

const struct opt *optimize_options(struct optimize_flags *f)
{
	static struct opt table[32];
	const struct opt t[] = {
		{ "output", 'o', OPT_STRING, &f->output, "OUT.py", "where to write the final kernel (default RUN_DIR/final.py)" },
		{ "run-dir", 0, OPT_STRING, &f->run_dir, "DIR", "run folder (default STORE/optimize/TASK-TIME)" },
		{ "table", 0, OPT_FLAG, &f->table, NULL, "print the stage table on stderr even with --json" },
		PIPELINE_OPTIONS(f),
		OPT_TABLE_END,
	};
	memcpy(table, t, sizeof(t));
	return table;
}

const struct opt *bench_pipeline_options(struct optimize_flags *f)
{
	static struct opt table[32];
	const struct opt t[] = { PIPELINE_OPTIONS(f), OPT_TABLE_END };
	memcpy(table, t, sizeof(t));
	return table;
}

int optimize_flags_apply(const struct optimize_flags *f, const char *device, struct pipeline_opts *po,
			 struct eval_opts *eo)
{
	pipeline_opts_init(po);
	eval_opts_init(eo, device);
	if (f->seeds < 0 || f->seed_repairs < 0 || f->repairs < 0 || f->top_k < 0 || f->trials < 0 ||
	    f->iters < 0 || f->warmup < 0 || f->max_tokens < 0 || f->max_cost < 0) {
		err_set(ERR_INPUT, "budgets and counts must not be negative");
		return -1;
	}
	if (f->seeds)
		po->seeds = f->seeds;
	if (f->no_multi_seed)
		po->seeds = 1;
	if (f->seed_repairs || f->seeds)
		po->seed_repairs = f->seed_repairs ? f->seed_repairs : po->seed_repairs;
	po->repairs = f->repairs ? f->repairs : po->repairs;
	if (f->top_k > 8) {
		err_set(ERR_INPUT, "--top-k is at most 8");
		return -1;
	}
	if (f->top_k)
		po->top_k = f->top_k;
	po->refine = !f->no_refine;
	po->single_agent = f->single_agent;
	po->profile = !f->no_profile;
	if (f->stages) {
		char *list = xstrdup(f->stages), *save = NULL;
		po->stage_on[STAGE_MAPPING] = po->stage_on[STAGE_TILING] = po->stage_on[STAGE_MEMORY] = 0;
		for (char *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
			const struct stage *st = stage_by_name(s);
			if (!st || st->id < STAGE_MAPPING) {
				err_set(ERR_INPUT, "unknown tuning stage '%s' (use mapping, tiling, memory)", s);
				free(list);
				return -1;
			}
			po->stage_on[st->id] = 1;
		}
		free(list);
	}
	if (f->no_hw_tune)
		po->stage_on[STAGE_MAPPING] = po->stage_on[STAGE_TILING] = po->stage_on[STAGE_MEMORY] = 0;
	if (f->trials)
		eo->trials = f->trials;
	if (f->iters)
		eo->iters = f->iters;
	if (f->warmup)
		eo->warmup = f->warmup;
	eo->atol = f->atol;
	eo->rtol = f->rtol;
	eo->truth = !f->no_truth;
	if ((f->precision && eval_opts_set_precision(eo, f->precision) < 0) ||
	    (f->compile_mode && eval_opts_set_compile_mode(eo, f->compile_mode) < 0) ||
	    (f->clock && eval_opts_set_clock(eo, f->clock) < 0))
		return -1;
	if (f->timeout > 0)
		eo->timeout_s = f->timeout;
	return 0;
}

json_t *optimize_flags_json(const struct optimize_flags *f, const struct pipeline_opts *po,
			    const struct eval_opts *eo)
{
	json_t *stages_on = json_array();
	for (int s = STAGE_MAPPING; s <= STAGE_MEMORY; s++)
		if (po->stage_on[s])
			json_array_append_new(stages_on, json_string(stages[s].name));
	return json_pack("{s:i, s:i, s:i, s:b, s:o, s:b, s:i, s:b, s:i, s:i, s:i, s:s, s:s, s:s, s:f, s:i, s:f, s:b}",
			 "seeds", po->seeds, "seed_repairs", po->seed_repairs, "repairs", po->repairs, "refine",
			 po->refine, "tuning_stages", stages_on, "single_agent", po->single_agent, "top_k", po->top_k,
			 "profile", po->profile, "trials", eo->trials, "iters", eo->iters, "warmup", eo->warmup,
			 "precision", eo->precision, "compile_mode", eo->compile_mode, "clock", eo->clock, "timeout_s", eo->timeout_s,
			 "max_tokens", f->max_tokens, "max_cost", f->max_cost, "truth", eo->truth);
}

json_t *optimize_summary(const char *task, const char *device, const char *run_dir, const char *final_path,
			 const json_t *baseline, const struct pipeline_result *r, const struct agents *a)
{
	json_t *s = json_pack("{s:s, s:s, s:s, s:b, s:s?, s:s?}", "task", task, "device", device, "run_dir", run_dir,
			      "found", r->found, "final_kernel", final_path, "candidate", r->id);
	const json_t *e = r->eval;
	json_object_set(s, "kernel_ms", json_object_get(e, "kernel_ms") ?: json_null());
	json_object_set(s, "eager_ms", json_object_get(baseline, "eager_ms") ?: json_null());
	json_object_set(s, "compile_ms", json_object_get(baseline, "compile_ms") ?: json_null());
	json_object_set(s, "speedup_eager", json_object_get(e, "speedup_eager") ?: json_null());
	json_object_set(s, "speedup_compile", json_object_get(e, "speedup_compile") ?: json_null());
	json_object_set(s, "stages", r->stage_rows);
	json_object_set_new(s, "usage", json_pack("{s:I, s:I, s:I, s:I, s:f}", "calls", (json_int_t)a->calls,
						  "cached_calls", (json_int_t)a->cached_calls,
						  "prompt_tokens", (json_int_t)a->prompt_tokens,
						  "completion_tokens", (json_int_t)a->completion_tokens,
						  "cost_usd", a->cost_usd));
	json_object_set_new(s, "stop_reason", r->stop_reason[0] ? json_string(r->stop_reason) : json_null());
	json_object_set_new(s, "infra_error", json_boolean(r->infra));
	json_object_set_new(s, "budget_stop", json_boolean(r->budget));
	return s;
}

void optimize_progress_stderr(void *ctx, const char *stage, const char *text)
{
	(void)ctx;
	fprintf(stderr, "egg: [%s] %s\n", stage, text);
}

/* Peaks by GPU name, from the vendors' data sheets (dense, no sparsity), for
 * the prompts: FP32 on the CUDA cores, TF32 and BF16 on tensor cores, in
 * TFLOP/s, and memory bandwidth in TB/s. Measured peaks would be better
 * (a calibration kernel per device); these are labelled as data-sheet figures. */
static const struct {
	const char *name;
	double fp32, tf32, bf16, tbps;
} peaks[] = {
	{ "H200", 67, 495, 989, 4.8 }, { "H100 PCIe", 51, 378, 756, 2.0 }, { "H100", 67, 495, 989, 3.35 },
	{ "B200", 80, 1100, 2250, 8.0 }, { "A100", 19.5, 156, 312, 2.0 }, { "L40S", 91.6, 183, 362, 0.86 },
	{ "4090", 82.6, 82.6, 165, 1.0 }, { "A10", 31.2, 62.5, 125, 0.6 }, { "L4", 30.3, 60, 121, 0.3 },
};

static double fnum(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : -1;
}

char *optimize_device_text(const json_t *facts, const char *device)
{
	const char *name;
	struct buf t = BUF_INIT;
	if (!strcmp(device, "cpu"))
		return xstrdup("CPU with Triton's interpreter (TRITON_INTERPRET=1). Kernels are checked exactly as on a "
			       "GPU, but times are CPU times: the interpreter runs each program instance in Python, so "
			       "fewer, larger blocks run faster. No hardware counters. The interpreter has no GPU driver: "
			       "@triton.autotune and triton.testing.do_bench fail there, so choose one configuration "
			       "yourself.");
	name = json_string_value(json_object_get(facts, "name")) ?: "unknown GPU";
	buf_addf(&t, "%s (%s), compute capability %s, %lld SMs", name, device,
		 json_string_value(json_object_get(facts, "compute_capability")) ?: "?",
		 json_integer_value(json_object_get(facts, "sm_count")));
	if (fnum(facts, "smem_per_sm_bytes") > 0)
		buf_addf(&t, ", %.0f KB shared memory per SM (%.0f KB per block at most)",
			 fnum(facts, "smem_per_sm_bytes") / 1024, fnum(facts, "smem_per_block_optin_bytes") / 1024);
	if (fnum(facts, "regs_per_sm") > 0)
		buf_addf(&t, ", %.0f 32-bit registers per SM", fnum(facts, "regs_per_sm"));
	buf_addf(&t, ", L2 cache %.0f MB, %.0f GB device memory", fnum(facts, "l2_bytes") / 1e6,
		 fnum(facts, "memory_bytes") / 1e9);
	if (fnum(facts, "free_bytes") > 0)
		buf_addf(&t, " (%.0f GB free when egg started)", fnum(facts, "free_bytes") / 1e9);
	for (size_t i = 0; i < sizeof(peaks) / sizeof(peaks[0]); i++)
		if (strstr(name, peaks[i].name)) {
			buf_addf(&t, "; data-sheet peaks: FP32 %.0f TFLOP/s (CUDA cores), TF32 %.0f and BF16 %.0f TFLOP/s "
				     "(tensor cores), memory bandwidth %.2g TB/s",
				 peaks[i].fp32, peaks[i].tf32, peaks[i].bf16, peaks[i].tbps);
			break;
		}
	buf_addf(&t, "; driver %s", json_string_value(json_object_get(facts, "driver")) ?: "?");
	return buf_detach(&t);
}

const char *optimize_precision_note(const char *precision)
{
	return !strcmp(precision, "tf32")
		       ? "TF32 is allowed on both sides for this run (tl.dot may use its default precision); no "
			 "fp16/bf16 arithmetic on fp32 data."
		       : "fp32 data stays fp32 math: pass input_precision=\"ieee\" to tl.dot (its default would use "
			 "TF32); no TF32 in any form (tf32, tf32x3), no fp16/bf16 arithmetic on fp32 data; keep the "
			 "reference's output dtypes. Tolerance: 1e-4 (1e-2 for fp16/bf16 outputs).";
}

void optimize_print_table(FILE *f, const char *task, const char *device, const char *clock, const json_t *baseline,
			  const json_t *rows)
{
	double eager = json_number_value(json_object_get(baseline, "eager_ms"));
	const json_t *row, *c = json_object_get(baseline, "compile_ms");
	size_t i;
	if (!strcmp(device, "cpu"))
		fprintf(f, "egg: %s on cpu (CPU timings, Triton interpreter)\n", task);
	else
		fprintf(f, "egg: %s on %s (%s clock)\n", task, device, clock);
	fprintf(f, "  %-26s %14s %18s\n", "stage", "time (ms)", "speedup vs eager");
	if (baseline) {
		fprintf(f, "  %-26s %14.4f %17.2fx\n", "PyTorch eager", eager, 1.0);
		if (json_is_number(c))
			fprintf(f, "  %-26s %14.4f %17.2fx\n", "torch.compile", json_number_value(c),
				eager / json_number_value(c));
	}
	json_array_foreach(rows, i, row) {
		const json_t *ms = json_object_get(row, "kernel_ms");
		const char *title = json_string_value(json_object_get(row, "title"));
		if (!json_is_number(ms))
			fprintf(f, "  %-26s %14s %18s\n", title, "-", "-");
		else if (baseline)
			fprintf(f, "  %-26s %14.4f %17.2fx\n", title, json_number_value(ms), eager / json_number_value(ms));
		else
			fprintf(f, "  %-26s %14.4f %18s\n", title, json_number_value(ms), "-");
	}
}

/* A run id: UTC time plus a random suffix, e.g. 20261129-101500-3f9a. */
char *optimize_run_id(const char *hint)
{
	char stamp[32], rnd[8];
	time_t t = time(NULL);
	struct tm tm;
	FILE *f = fopen("/dev/urandom", "rb");
	unsigned v = (unsigned)time_mono_ms();
	if (f) {
		if (fread(&v, sizeof(v), 1, f) != 1)
			v ^= (unsigned)t;
		fclose(f);
	}
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(rnd, sizeof(rnd), "%04x", v & 0xffff);
	return hint ? xasprintf("%s-%s-%s", stamp, hint, rnd) : xasprintf("%s-%s", stamp, rnd);
}
