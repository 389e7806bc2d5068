/* roofline.c: a baseline's speed of light, and the words that describe a bound (eval/roofline.h). */
#include "roofline.h"

#include <math.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/jsonnum.h"

/* The peak a task's counted floating-point FLOPs run at: BF16 tensor cores for a task in
 * fp16/bf16, TF32 tensor cores under --precision tf32; under fp32 the
 * faster of the FP32 FMA units and a third of the TF32 rate (the three-pass
 * tf32x3 split that egg's fp32 rule allows: docs/method.md, "Numerics"). */
static const char *peak_of(const json_t *work, const char *precision, const json_t *cal, double *rate)
{
	if (json_is_true(json_object_get(work, "half"))) {
		*rate = json_num(cal, "bf16_flops_s");
		return "bf16";
	}
	if (!strcmp(precision, "tf32")) {
		*rate = json_num(cal, "tf32_flops_s");
		return "tf32";
	}
	*rate = json_num(cal, "fp32_flops_s");
	if (json_num(cal, "tf32_flops_s") / 3 > *rate) {
		*rate = json_num(cal, "tf32_flops_s") / 3;
		return "fp32 as tf32x3";
	}
	return "fp32";
}

const struct eval_practical_scheme eval_practical_schemes[] = {
	{ "fp32_ieee", "fp32 (ieee)", "fp32 on the FMA units (ieee)" },
	{ "fp32_tf32x3", "fp32 as tf32x3", "fp32 as tf32x3" },
	{ "fp32_presplit", "fp32 pre-split", "fp32 as the pre-split TF32 scheme" },
	{ "tf32", "tf32", "plain TF32" },
	{ "bf16", "bf16", "bf16" },
};
const size_t eval_npractical_schemes = sizeof(eval_practical_schemes) / sizeof(eval_practical_schemes[0]);

int eval_practical_is_bound(const json_t *practical, const char *key)
{
	double rate = json_num(json_object_get(practical, "flops_s"), key);
	double cublas = json_num(json_object_get(practical, "cublas_flops_s"), key);
	if (!(rate > 0))
		return 0;
	if (strcmp(key, "tf32") && strcmp(key, "bf16"))
		return 1;
	return cublas > 0 && rate >= EVAL_PRACTICAL_MIN_SHARE * cublas;
}

/* The practical rate for the roofline's peak: what egg's own Triton matrix
 * product reached at calibration in that precision (the calibration's
 * "practical": worker/egg_worker/device/practical.py), the fastest
 * fp32-accurate scheme for fp32; NAN when there is none (int8, a
 * calibration without it) or it is no bound (eval_practical_is_bound).
 * *scheme names it. */
static double practical_rate(const json_t *cal, const char *peak, const char **scheme)
{
	const json_t *p = json_object_get(cal, "practical"), *rates = json_object_get(p, "flops_s");
	*scheme = !strcmp(peak, "bf16") ? "bf16" : !strcmp(peak, "tf32") ? "tf32" : !strncmp(peak, "fp32", 4)
		  ? json_string_value(json_object_get(p, "fp32_best")) : NULL;
	return *scheme && eval_practical_is_bound(p, *scheme) ? json_num(rates, *scheme) : NAN;
}

/* The roofline bound of a baseline's work: max(compute, memory). The
 * compute side has two parts, the floating-point FLOPs at the precision's
 * peak and the int8 matrix products' operations at the int8 peak; the
 * larger is the bound (a lower bound whether or not they overlap) and names
 * the peak in the roofline object ("flops" and "peak_flops_s" are that
 * part's: integer operations for "int8"). A calibration without an int8
 * peak leaves the int8 part out, which only lowers the bound. */
void eval_attach_roofline(json_t *baseline, const json_t *calibration, const char *precision)
{
	const json_t *work = json_object_get(baseline, "work");
	double flops = json_num(work, "flops"), bytes = json_num(work, "bytes"), bw = json_num(calibration, "bandwidth_bytes_s");
	double int8 = json_num(work, "int8_ops"), int8_rate = json_num(calibration, "int8_ops_s");
	double rate, compute_ms, int8_ms = 0, memory_ms, ms;
	const char *peak = peak_of(work, precision, calibration, &rate);

	if (isnan(flops) || isnan(bytes) || isnan(bw) || isnan(rate) || bw <= 0 || rate <= 0)
		return;
	if (isnan(int8) || int8 < 0 || int8 > flops)
		int8 = 0;
	if (int8 > 0 && int8_rate > 0)
		int8_ms = int8 / int8_rate * 1e3;
	compute_ms = (flops - int8) / rate * 1e3;
	if (int8_ms > compute_ms) {
		compute_ms = int8_ms;
		flops = int8;
		rate = int8_rate;
		peak = "int8";
	} else {
		flops -= int8;
	}
	memory_ms = bytes / bw * 1e3;
	ms = fmax(compute_ms, memory_ms);
	if (ms <= 0)
		return;
	json_object_set_new(baseline, "roofline",
			    json_pack("{s:f, s:f, s:s, s:f, s:f, s:f, s:f, s:s}", "flops", flops, "bytes", bytes,
				      "peak", peak, "peak_flops_s", rate, "bandwidth_bytes_s", bw, "compute_ms", compute_ms,
				      "memory_ms", memory_ms, "bound", compute_ms > memory_ms ? "compute" : "memory"));
	{
		/* The practical bound beside it, where egg's own kernels reach
		 * less than the peak (compute-bound work only moves). */
		const char *scheme;
		double prate = practical_rate(calibration, peak, &scheme), pms;
		if (prate > 0 && strcmp(peak, "int8")) {
			pms = fmax(flops / prate * 1e3, memory_ms);
			if (pms > ms) {
				json_t *rl = json_object_get(baseline, "roofline");
				json_object_set_new(rl, "practical_scheme", json_string(scheme));
				json_object_set_new(rl, "practical_flops_s", json_real(prate));
				json_object_set_new(rl, "practical_size", json_integer(json_integer_value(
					json_object_get(json_object_get(calibration, "practical"), "size"))));
				json_object_set_new(baseline, "practical_ms", json_real(pms));
			}
		}
	}
	json_object_set_new(baseline, "roofline_ms", json_real(ms));
	json_object_set_new(baseline, "eager_sol_pct",
			    json_num(baseline, "eager_ms") > 0 ? json_real(100 * ms / json_num(baseline, "eager_ms")) : json_null());
	json_object_set_new(baseline, "compile_sol_pct",
			    json_num(baseline, "compile_ms") > 0 ? json_real(100 * ms / json_num(baseline, "compile_ms")) : json_null());
}

static void roofline_side(struct buf *b, const json_t *rl, int memory)
{
	const char *unit = strcmp(json_string_value(json_object_get(rl, "peak")) ?: "", "int8") ? "FLOP" : "OP";

	if (memory) {
		/* In a unit that shows the size: a 49 KB task is not "0.0 MB". */
		buf_add_size(b, json_num(rl, "bytes"));
		buf_addf(b, " at %.2f TB/s", json_num(rl, "bandwidth_bytes_s") / 1e12);
	}
	else
		buf_addf(b, "%.4g G%s at %.1f T%s/s %s", json_num(rl, "flops") / 1e9, unit, json_num(rl, "peak_flops_s") / 1e12,
			 unit, json_string_value(json_object_get(rl, "peak")) ?: "");
}

void eval_roofline_text(struct buf *b, const json_t *roofline, const char *basis)
{
	int memory = !strcmp(basis ? basis : json_string_value(json_object_get(roofline, "bound")) ?: "", "memory");

	buf_addf(b, "%s-bound: ", memory ? "memory" : "compute");
	roofline_side(b, roofline, memory);
	if (!basis && (!memory || json_num(roofline, "flops") > 0)) {
		buf_adds(b, "; ");
		roofline_side(b, roofline, !memory);
	}
}
