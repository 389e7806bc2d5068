/* eval.h: evaluations and baselines through the worker, with the results cache. */
#ifndef EGG_EVAL_H
#define EGG_EVAL_H

#include <jansson.h>

#include "roofline.h"

#include "cache.h"
#include "worker.h"

struct eval_opts {
	const char *device;	/* "cpu", "cuda", "cuda:N" */
	int trials;		/* correctness trials (>= 1) */
	int warmup;		/* warm-up calls before timing */
	int iters;		/* timed calls */
	double atol, rtol;	/* < 0: the worker's defaults per dtype */
	const char *precision;	/* "fp32" (TF32 off) or "tf32" */
	const char *compile_mode; /* torch.compile mode of the baseline */
	const char *clock;	/* GPU timing: "gpu" (launch cost hidden) or "latency" */
	double timeout_s;	/* per job */
	double speedup_bound;	/* re-measure in a fresh process beyond this */
	int timing;		/* time the candidate (0: correctness only) */
	int truth;		/* judge misses against the float64 truth (default 1) */
	int allow_torch;	/* waive the rule against PyTorch compute (a program that keeps PyTorch parts) */
	struct evcache *cache;	/* results cache (borrowed), or NULL */
	int cache_verdicts;	/* also cache candidates' verdicts and profiles (runs do; egg eval does not) */
	const char *lock;	/* device lock key for timing and profiling (NULL: the device) */
	worker_progress_fn progress;	/* told the worker's progress lines of each job, or NULL */
	void *progress_arg;
};

/* Defaults for a device: 5 trials, fp32, the worker's tolerance for each
 * output dtype (its compare.py holds them; a baseline says which apply), and
 * 10+100 timed calls on a GPU or 1+5 on the CPU interpreter. */
void eval_opts_init(struct eval_opts *o, const char *device);
/* Set a choice from a user's word; -1 with ERR_INPUT naming it when it is
 * not one of the choices. precision: fp32, tf32. compile mode: default,
 * max-autotune, reduce-overhead, none. clock: gpu, latency. */
int eval_opts_set_precision(struct eval_opts *o, const char *precision);
int eval_opts_set_compile_mode(struct eval_opts *o, const char *mode);
int eval_opts_set_clock(struct eval_opts *o, const char *clock);

/* A worker request for `op` with the fields every job carries: device,
 * task_source, timeout_s, lock (null: the device's own). Owned. */
json_t *eval_job_request(const char *op, const struct eval_opts *o, const char *task_source);

/* Facts about the device from the worker's probe: name, SM count, L2 size,
 * memory, driver (GPU) or the platform (CPU). Owned; NULL with an error. */
json_t *eval_device_facts(struct worker *w, const char *device);

/*
 * The cache key of a result: `kind` ("baseline", "eval", "profile"), the
 * task and kernel texts, the device, its driver, the worker's Python,
 * torch and Triton, and every setting that changes the result (precision,
 * clock, trials, loop sizes, tolerances, the truth rule; the compile mode
 * for baselines only: speedups are computed when a result is read).
 */
void eval_result_key(struct worker *w, const struct eval_opts *o, const json_t *device_facts, const char *kind,
		     const char *task_source, const char *kernel_source, char key[65]);

/*
 * Eager and torch.compile timings of the task, from the cache when a
 * matching entry exists (eval_result_key), else measured by the worker in a
 * clean process and stored. Returns an owned object or NULL (ERR_INPUT for a
 * bad task, ERR_INFRA otherwise).
 */
json_t *eval_baseline(struct worker *w, const struct eval_opts *o, const char *task_source);

/*
 * A program and its drop-in (`dropin_source`, a composed ModelNew) timed
 * as their user runs them (the worker's op "usertime"): the original
 * plain, under torch.compile and under torch.compile with CUDA graphs, the
 * drop-in the same three ways (on the CPU plain only: Inductor on the CPU
 * around interpreted kernels says nothing), each by GPU time and by wall
 * clock per forward over `wall_iters` calls, launch included, `wall_rounds`
 * times. Returns {"original": {WAY: {"device_ms", "device_cv", "wall_ms"
 * (the median round), "wall_rounds_ms"} or {"error"}} or {"error"},
 * "dropin": ...} (owned), or NULL on an infrastructure failure.
 */
json_t *eval_usertime(struct worker *w, const struct eval_opts *o, const char *task_source,
		      const char *dropin_source, int wall_iters, int wall_rounds);
/* Those ways, in the order reports show them: the original's name for the
 * way and the drop-in's (the worker's usertime.py WAYS), the words for it,
 * and whether it compiles (run on a GPU only). */
struct eval_user_way {
	const char *original, *dropin, *words;
	int compiled;
};
#define EVAL_USER_WAYS 3
extern const struct eval_user_way eval_user_ways[EVAL_USER_WAYS];

/*
 * The device's measured peaks (the worker's calibration: bandwidth, FP32
 * FMA, TF32 and BF16 tensor-core FLOP/s), from the cache when this device,
 * driver, torch and Triton were calibrated before. Made once per process
 * and key: concurrent callers wait for the first. Owned, or NULL with the
 * error. eval_baseline calls it.
 */
json_t *eval_calibration(struct worker *w, const struct eval_opts *o, const json_t *device_facts);
/* The speed of light of a baseline: eval/roofline.h. */


/* Whether an evaluation's result is a pass (its "verdict" is "pass"). */
int eval_passed(const json_t *result);
/* The stage an evaluation stopped at (its "stage"), in the worker's order
 * (worker/PROTOCOL.md): loading, compiling and running the kernel come
 * before checking what it computed, so a failure past EVAL_AT_RUN is a
 * wrong result and one before it a kernel that would not run. A stage the
 * worker did not name is EVAL_AT_UNKNOWN, counted past them all. */
enum eval_stage {
	EVAL_AT_LOAD,
	EVAL_AT_COMPILE,
	EVAL_AT_RUN,
	EVAL_AT_CORRECTNESS,
	EVAL_AT_INTEGRITY,
	EVAL_AT_TIMING,
	EVAL_AT_DONE,
	EVAL_AT_UNKNOWN
};
enum eval_stage eval_stage_of(const json_t *result);

/*
 * Evaluates a candidate. The result is the worker's verdict plus eager_ms,
 * compile_ms, speedup_eager, speedup_compile, roofline_ms, sol_pct and
 * sol_basis ("roofline", or "memory" for a kernel faster than the
 * reference's FLOPs allow: it computes less, only its traffic bounds it) from
 * `baseline` (may be NULL), computed here even for a cached verdict (the cache holds the
 * verdict alone). A speedup beyond the bound is re-measured in a fresh
 * process and the slower time kept. Returns an owned object, or NULL with
 * ERR_INPUT / ERR_INFRA (a worker that died is retried once).
 */
json_t *eval_candidate(struct worker *w, const struct eval_opts *o, const char *task_source,
		       const char *kernel_source, const json_t *baseline);

struct pool;
/* eval_candidate on a worker of `pool`'s `device`, admitted for the memory
 * the evaluation needs (eval_need_bytes) and given back after it. */
json_t *eval_candidate_pooled(struct pool *pool, int device, const struct eval_opts *o, const char *task_source,
			      const char *kernel_source, const json_t *baseline);

/*
 * The device memory one evaluation of the task is expected to need, from
 * its baseline (two processes, each about the baseline's peak, plus their
 * CUDA contexts); 0 on the CPU or when the baseline has no figure. For the
 * device pool's memory admission.
 */
long long eval_need_bytes(const json_t *baseline, const char *device);
/* The same rule before any baseline exists, from the task's sizes
 * (eval_task_size's `need_bytes`, made on the meta device) plus, on a GPU,
 * the two processes' CUDA contexts; 0 when the sizes are unknown. */
long long eval_size_need_bytes(const json_t *size, const char *device);
/* The memory budget of a device for admission: 90% of what its facts say
 * is free (a GPU's free memory, else its total; the CPU's available host
 * memory on the worker's machine); 0 without figures. */
long long eval_device_budget(const json_t *facts, const char *device);

/*
 * The whole evaluation path with the task's own Model standing in as a
 * trusted candidate (the rules against PyTorch compute are waived; every
 * trial is also judged against float64 to find ill-conditioned tasks).
 * Returns the worker's verdict (owned), or NULL with ERR_INPUT/ERR_INFRA.
 */
json_t *eval_selfcheck(struct worker *w, const struct eval_opts *o, const char *task_source);

/*
 * The task's input, output and parameter bytes (found on PyTorch's meta
 * device, without allocating them) and `need_bytes`, the expected peak of
 * one evaluation; figures are null when the task does not run on the meta
 * device. Owned, or NULL with ERR_INPUT/ERR_INFRA.
 */
json_t *eval_task_size(struct worker *w, const char *device, const char *task_source);

#endif
