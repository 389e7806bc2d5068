/* roofline.h: the speed of light of a task on a device: its counted work
 * (FLOPs, least bytes) against the device's measured peaks. Arithmetic only:
 * the figures come from the worker (work) and the calibration (peaks). */
#ifndef EGG_ROOFLINE_H
#define EGG_ROOFLINE_H

#include <jansson.h>

/*
 * Adds the speed of light to a baseline that has the reference's `work`
 * (FLOPs and least bytes per forward): `roofline` {flops, bytes, peak,
 * peak_flops_s, bandwidth_bytes_s, compute_ms, memory_ms, bound},
 * `roofline_ms` = max(FLOPs / peak, bytes / bandwidth) with the peak of the
 * precision in force, and `eager_sol_pct`, `compile_sol_pct` (100 *
 * roofline_ms / time). Nothing is added when a figure is missing.
 */
void eval_attach_roofline(json_t *baseline, const json_t *calibration, const char *precision);
/* ... and, when the calibration measured egg's own Triton matrix products
 * (its "practical") and they reach less than the peak, `practical_ms`: the
 * work at that rate (max with the memory side), the roofline object naming
 * `practical_scheme`, `practical_flops_s` and `practical_size`. */
/* The schemes of the practical bound (the calibration's "practical":
 * worker/egg_worker/device/practical.py), in the order they are stated:
 * their key in "flops_s", short words (egg doctor) and the prompts' words. */
struct eval_practical_scheme {
	const char *key, *short_words, *words;
};
extern const struct eval_practical_scheme eval_practical_schemes[];
extern const size_t eval_npractical_schemes;

/* A tensor-core scheme's practical rate (tf32, bf16) is a bound only at
 * EVAL_PRACTICAL_MIN_SHARE of cuBLAS's rate for the same product or more
 * (the calibration's "cublas_flops_s"): a weaker kernel of egg's own would
 * tell the model to stop where the hardware has more to give. The
 * fp32-accurate schemes have no cuBLAS counterpart and are always stated.
 * 1 when `key`'s rate in `practical` may be stated as a bound. */
#define EVAL_PRACTICAL_MIN_SHARE 0.8
int eval_practical_is_bound(const json_t *practical, const char *key);

/* Appends what a roofline bound is made of, in the words every surface
 * uses (egg eval, the profile agent's prompt): "memory-bound: 190.0 MB at
 * 4.50 TB/s" or "compute-bound: 275 GFLOP at 784.4 TFLOP/s bf16" (int8
 * work in GOP and TOP/s). basis: "memory" or "compute" names that side
 * alone; NULL gives the bound's own side and then the other one's figures
 * (unless no work was counted there). */
struct buf;
void eval_roofline_text(struct buf *b, const json_t *roofline, const char *basis);

#endif
