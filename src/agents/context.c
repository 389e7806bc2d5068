/* context.c: what every agent is told about the target and the precision rules. */
#include "context.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../eval/roofline.h"
#include "../util/buf.h"
#include "../util/jsonnum.h"

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

/* What egg's own Triton matrix products reached at calibration (the
 * calibration's "practical"), onto `t`: the rates that are bounds
 * (eval_practical_is_bound), then the tensor-core schemes that are not,
 * pointed at the measured peaks instead; nothing without a figure. */
static void practical_text(struct buf *t, const json_t *p)
{
	const json_t *rates = json_object_get(p, "flops_s");
	struct buf weak = BUF_INIT;
	int n = 0, nweak = 0;
	for (size_t i = 0; i < eval_npractical_schemes; i++) {
		const struct eval_practical_scheme *s = &eval_practical_schemes[i];
		double r = json_num(rates, s->key);
		if (!(r > 0))
			continue;
		if (!eval_practical_is_bound(p, s->key)) {
			/* Said under the line only where cuBLAS was measured beside it. */
			if (json_num(json_object_get(p, "cublas_flops_s"), s->key) > 0)
				buf_addf(&weak, "%s%s", nweak++ ? " and " : "", s->words);
			continue;
		}
		buf_addf(t, "%s%s %.1f", n++ ? ", " : "; egg's own Triton matrix products reach ", s->words, r / 1e12);
	}
	if (n)
		buf_addf(t, " TFLOP/s here (%lld^3, measured: what a Triton kernel of that kind can expect)",
			 json_integer_value(json_object_get(p, "size")));
	if (nweak)
		buf_addf(t, "; for %s the measured peak above is the bound (egg's own kernel reached under %.0f%% of "
			     "cuBLAS's rate: a well-tiled Triton kernel can come closer)",
			 buf_str(&weak), 100 * EVAL_PRACTICAL_MIN_SHARE);
	buf_release(&weak);
}

/* The device text, with the measured peaks of `cal` (the worker's
 * calibration) when there is one, else the data-sheet peaks of a known GPU:
 * never both, so that a prompt does not state two different peaks. */
static char *device_text(const json_t *facts, const char *device, const json_t *cal)
{
	const char *name;
	struct buf t = BUF_INIT;
	if (!strcmp(device, "cpu"))
		return xstrdup("CPU with Triton's interpreter (TRITON_INTERPRET=1). Kernels are checked exactly as on a "
			       "GPU, but times are CPU times: the interpreter runs each program instance in Python, so "
			       "fewer, larger blocks run faster. No hardware counters. The interpreter has no GPU driver: "
			       "@triton.autotune and triton.testing.do_bench fail there, so choose one configuration "
			       "yourself. The interpreter (Triton 3.6) cannot compute on bf16 values: arithmetic on them "
			       "gives NaN or an error and tl.dot reads their bits as integers; convert bf16 data to fp32 "
			       "right after tl.load and back with .to(tl.bfloat16) only in tl.store (fp16 works).");
	name = json_string_value(json_object_get(facts, "name")) ?: "unknown GPU";
	buf_addf(&t, "%s (%s), compute capability %s, %lld SMs", name, device,
		 json_string_value(json_object_get(facts, "compute_capability")) ?: "?",
		 json_integer_value(json_object_get(facts, "sm_count")));
	if (json_num(facts, "smem_per_sm_bytes") > 0)
		buf_addf(&t, ", %.0f KB shared memory per SM (%.0f KB per block at most)",
			 json_num(facts, "smem_per_sm_bytes") / 1024, json_num(facts, "smem_per_block_optin_bytes") / 1024);
	if (json_num(facts, "regs_per_sm") > 0)
		buf_addf(&t, ", %.0f 32-bit registers per SM", json_num(facts, "regs_per_sm"));
	if (!isnan(json_num(facts, "l2_bytes")))
		buf_addf(&t, ", L2 cache %.0f MB", json_num(facts, "l2_bytes") / 1e6);
	if (!isnan(json_num(facts, "memory_bytes")))
		buf_addf(&t, ", %.0f GB device memory", json_num(facts, "memory_bytes") / 1e9);
	/* No free-memory figure: it changes from one start to the next, and a
	 * prompt must not (a resumed run finds its replies by the prompt). */
	if (json_num(cal, "bandwidth_bytes_s") > 0 && json_num(cal, "fp32_flops_s") > 0) {
		buf_addf(&t, "; measured peaks (egg's calibration on this GPU): FP32 %.0f TFLOP/s (CUDA cores), TF32 %.0f "
			     "and BF16 %.0f TFLOP/s (tensor cores), memory bandwidth %.2g TB/s",
			 json_num(cal, "fp32_flops_s") / 1e12, json_num(cal, "tf32_flops_s") / 1e12,
			 json_num(cal, "bf16_flops_s") / 1e12, json_num(cal, "bandwidth_bytes_s") / 1e12);
		practical_text(&t, json_object_get(cal, "practical"));
	} else {
		for (size_t i = 0; i < sizeof(peaks) / sizeof(peaks[0]); i++)
			if (strstr(name, peaks[i].name)) {
				buf_addf(&t, "; data-sheet peaks: FP32 %.0f TFLOP/s (CUDA cores), TF32 %.0f and BF16 %.0f "
					     "TFLOP/s (tensor cores), memory bandwidth %.2g TB/s",
					 peaks[i].fp32, peaks[i].tf32, peaks[i].bf16, peaks[i].tbps);
				break;
			}
	}
	buf_addf(&t, "; driver %s", json_string_value(json_object_get(facts, "driver")) ?: "?");
	return buf_detach(&t);
}

char *agents_device_text(const json_t *facts, const char *device)
{
	return device_text(facts, device, NULL);
}

/* The rule on data types, without the tolerance (agents_precision_note adds it). */
static const char *dtype_rule(const char *precision, int half)
{
	if (half)
		return "The task computes in fp16/bf16: keep its dtypes for inputs, weights and outputs, accumulate "
		       "reductions and tl.dot in fp32 (tl.dot's default for fp16/bf16 inputs), and convert back when "
		       "storing; integer tensors (int8 weights with scales, say) stay integers until dequantized in "
		       "the kernel.";
	return !strcmp(precision, "tf32")
		       ? "TF32 is allowed on both sides for this run (tl.dot may use its default precision); no "
			 "fp16/bf16 arithmetic on fp32 data."
		       : "fp32 data keeps fp32 accuracy. tl.dot may run as input_precision=\"ieee\" (FMA units), as "
			 "\"tf32x3\" (Triton splits the operands into TF32 parts inside the K loop: three tensor-core "
			 "passes), or as a compensated scheme of your own: split each fp32 operand once into a TF32 high "
			 "part and its remainder (hi = the value with its low 13 mantissa bits cleared, lo = value - "
			 "hi; both exact in fp32), then per tile three plain TF32 dots hi*hi + hi*lo + lo*hi accumulated "
			 "in fp32. The evaluator judges the numbers, not the spelling: measured on an H200, tf32x3 stayed "
			 "within the tolerance on every matmul and convolution shape tried, the hand split on four of six "
			 "(it missed on long K), and a single TF32 pass (tl.dot's default or \"tf32\" on unsplit data) "
			 "misses it many times over. No fp16/bf16 arithmetic on fp32 data; keep the reference's output "
			 "dtypes.";
}

/* One output's tolerance as the evaluator states it ({"output", "dtype",
 * "atol", "rtol", "exact"}), the run's --atol/--rtol (>= 0) in place of its
 * defaults, onto `t`. */
static void tolerance_entry(struct buf *t, const json_t *e, double atol, double rtol)
{
	const char *dtype = json_string_value(json_object_get(e, "dtype")) ?: "?";
	if (json_is_true(json_object_get(e, "exact")))
		buf_addf(t, "%s outputs must match exactly", dtype);
	else
		buf_addf(t, "%s outputs within |out - ref| <= %g + %g * |ref|", dtype,
			 atol >= 0 ? atol : json_num(e, "atol"), rtol >= 0 ? rtol : json_num(e, "rtol"));
}

char *agents_precision_note(const char *precision, int half, const json_t *tolerance, double atol, double rtol)
{
	struct buf t = BUF_INIT;
	const json_t *e;
	size_t i;
	buf_addf(&t, "%s Tolerance, as the evaluator applies it to this task: ", dtype_rule(precision, half));
	if (!json_array_size(tolerance) && atol >= 0 && rtol >= 0)
		buf_addf(&t, "floating outputs within |out - ref| <= %g + %g * |ref|", atol, rtol);
	else if (!json_array_size(tolerance))
		buf_adds(&t, "its default for each output dtype");
	json_array_foreach(tolerance, i, e) {
		int seen = 0;
		/* Once per dtype: outputs of one dtype share their rule. */
		for (size_t k = 0; k < i && !seen; k++)
			seen = json_equal(json_object_get(json_array_get(tolerance, k), "dtype"), json_object_get(e, "dtype"));
		if (seen)
			continue;
		if (i)
			buf_adds(&t, "; ");
		tolerance_entry(&t, e, atol, rtol);
	}
	buf_adds(&t, ".");
	return buf_detach(&t);
}

/* One launch of torch.compile's summary: its kind, name, what it runs, its time. */
static void compile_launch_text(struct buf *t, size_t i, const json_t *x)
{
	const json_t *v;
	size_t k;
	int library = !strcmp(json_string_value(json_object_get(x, "kind")) ?: "", "library");
	buf_addf(t, "\n  %zu. %s %s `%s`", i + 1, library ? "library call" : "generated",
		 json_string_value(json_object_get(x, "what")) ?: "?", json_string_value(json_object_get(x, "name")) ?: "?");
	buf_adds(t, library ? " for " : " fusing ");
	json_array_foreach(json_object_get(x, "ops"), k, v)
		buf_addf(t, "%s%s", k ? ", " : "", json_string_value(v) ?: "?");
	if (library && json_array_size(json_object_get(x, "device_kernels"))) {
		buf_adds(t, " (it ran ");
		json_array_foreach(json_object_get(x, "device_kernels"), k, v)
			buf_addf(t, "%s%s", k ? ", " : "", json_string_value(v) ?: "?");
		buf_adds(t, ")");
	}
	if (!isnan(json_num(x, "ms")))
		buf_addf(t, ": %.4f ms", json_num(x, "ms"));
}

char *agents_compile_text(const json_t *baseline)
{
	const json_t *sum = json_object_get(baseline, "compile_summary"), *x;
	double roof = json_num(baseline, "roofline_ms"), compiled = json_num(baseline, "compile_ms");
	struct buf t = BUF_INIT;
	size_t i, n = json_array_size(json_object_get(sum, "launches"));
	if (!n)
		return NULL;
	buf_addf(&t, "What torch.compile (Inductor) makes of the reference, the code to beat: %zu launch(es), %lld "
		     "generated kernel(s) and %lld library call(s), in the order they run", n,
		 json_integer_value(json_object_get(sum, "generated")), json_integer_value(json_object_get(sum, "library")));
	if (!isnan(json_num(sum, "device_ms")))
		buf_addf(&t, ", %.4f ms of device time per call in all%s", json_num(sum, "device_ms"),
			 json_is_true(json_object_get(sum, "library_times_summed")) ? " (the library calls' time is summed "
			 "on the first of them)" : "");
	buf_adds(&t, ":");
	json_array_foreach(json_object_get(sum, "launches"), i, x)
		compile_launch_text(&t, i, x);
	if (roof > 0 && compiled > 0)
		buf_addf(&t, "\nThe roofline bound of the whole reference is %.4f ms: torch.compile runs at %.0f%% of it, "
			     "so a kernel has up to %.1fx to win over it.", roof, 100 * roof / compiled, compiled / roof);
	buf_adds(&t, "\nIt is a reference, not a seed: a kernel here may not call a library (cuBLAS, cuDNN, PyTorch). "
		     "Where the room is: every launch boundary writes its result to device memory and reads it "
		     "back, which one kernel that keeps the intermediate on chip does not; a library call is "
		     "usually hard to beat alone, its neighbours fused into it are not.");
	return buf_detach(&t);
}

char *agents_task_device_text(const json_t *facts, const char *device, const json_t *baseline)
{
	struct buf t = BUF_INIT;
	char *text = device_text(facts, device, json_object_get(baseline, "calibration"));
	double peak = json_num(baseline, "peak_bytes"), out = json_num(baseline, "output_bytes");
	double eager = json_num(baseline, "eager_ms"), compiled = json_num(baseline, "compile_ms");
	size_t n = strlen(text);
	buf_adds(&t, text);
	free(text);
	if (!isnan(json_num(baseline, "input_bytes"))) {
		buf_addf(&t, "%s The task's inputs take ", n && t.data[n - 1] == '.' ? "" : ".");
		buf_add_size(&t, json_num(baseline, "input_bytes"));
		buf_adds(&t, " and its outputs ");
		buf_add_size(&t, isnan(out) ? 0 : out);
		buf_adds(&t, ".");
		/* The memory a kernel may count on: what PyTorch itself used (stable
		 * from run to run, unlike the free memory). */
		if (peak > 0 && strcmp(device, "cpu")) {
			buf_adds(&t, " PyTorch's own forward peaked at ");
			buf_add_size(&t, peak);
			buf_adds(&t, " of device memory; other evaluations share the GPU, so keep a kernel's workspace "
				     "well within that.");
		}
	}
	/* The bar a kernel is worth its place against: what the user runs. */
	if (eager > 0 && compiled > 0)
		buf_addf(&t, " What the user runs today: on this device the reference takes %.4f ms in PyTorch eager and "
			 "%.4f ms under torch.compile; a kernel is worth its place only when it is faster than the faster "
			 "of the two (%.4f ms).", eager, compiled, fmin(eager, compiled));
	else if (eager > 0)
		buf_addf(&t, " What the user runs today: on this device the reference takes %.4f ms in PyTorch eager "
			 "(torch.compile is not measured in this run); a kernel is worth its place only when it is "
			 "faster.", eager);
	{
		char *inductor = agents_compile_text(baseline);
		if (inductor)
			buf_addf(&t, "\n\n%s", inductor);
		free(inductor);
	}
	return buf_detach(&t);
}
