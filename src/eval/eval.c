/* eval.c: evaluation requests, speedups, re-measurement and the baseline cache. */
#include "eval.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/err.h"
#include "../util/hash.h"
#include "../util/jsonnum.h"
#include "pool.h"

void eval_opts_init(struct eval_opts *o, const char *device)
{
	int cpu = device && !strcmp(device, "cpu");
	memset(o, 0, sizeof(*o));
	o->device = device;
	o->trials = 5;
	o->warmup = cpu ? 1 : 10;
	o->iters = cpu ? 5 : 100;
	o->atol = o->rtol = -1;
	o->precision = "fp32";
	o->compile_mode = "default";
	o->clock = "gpu";
	o->timeout_s = cpu ? 900 : 300;
	o->speedup_bound = 10;
	o->timing = 1;
	o->truth = 1;
}

/* 0 when `word` is one of the NULL-terminated `choices`. */
static int one_of(const char *word, const char *const *choices)
{
	for (; *choices; choices++)
		if (!strcmp(word, *choices))
			return 0;
	return -1;
}

int eval_opts_set_precision(struct eval_opts *o, const char *precision)
{
	static const char *const choices[] = { "fp32", "tf32", NULL };
	if (one_of(precision, choices) < 0) {
		err_set(ERR_INPUT, "unknown precision '%s' (use fp32 or tf32)", precision);
		return -1;
	}
	o->precision = precision;
	return 0;
}

int eval_opts_set_compile_mode(struct eval_opts *o, const char *mode)
{
	static const char *const choices[] = { "default", "max-autotune", "reduce-overhead", "none", NULL };
	if (one_of(mode, choices) < 0) {
		err_set(ERR_INPUT, "unknown compile mode '%s'", mode);
		return -1;
	}
	o->compile_mode = mode;
	return 0;
}

int eval_opts_set_clock(struct eval_opts *o, const char *clock)
{
	static const char *const choices[] = { "gpu", "latency", NULL };
	if (one_of(clock, choices) < 0) {
		err_set(ERR_INPUT, "unknown clock '%s' (use gpu or latency)", clock);
		return -1;
	}
	o->clock = clock;
	return 0;
}

json_t *eval_job_request(const char *op, const struct eval_opts *o, const char *task_source)
{
	return json_pack("{s:s, s:s, s:s, s:f, s:s?}", "op", op, "device", o->device, "task_source", task_source,
			 "timeout_s", o->timeout_s, "lock", o->lock);
}

/* A job that runs the task under egg's numerics and clock. */
static json_t *run_request(const char *op, const struct eval_opts *o, const char *task_source)
{
	json_t *r = eval_job_request(op, o, task_source);
	json_object_set_new(r, "precision", json_string(o->precision));
	json_object_set_new(r, "clock", json_string(o->clock));
	json_object_set_new(r, "warmup", json_integer(o->warmup));
	json_object_set_new(r, "iters", json_integer(o->iters));
	return r;
}

void eval_result_key(struct worker *w, const struct eval_opts *o, const json_t *device_facts, const char *kind,
		     const char *task_source, const char *kernel_source, char key[65])
{
	const json_t *hello = worker_hello(w);
	struct hash_ctx *h = hash_begin();
	char num[160];
	int baseline = !strcmp(kind, "baseline");
	hash_field(h, "egg-result-v3");
	hash_field(h, json_string_value(json_object_get(hello, "code")));
	hash_field(h, kind);
	hash_field(h, task_source);
	hash_field(h, kernel_source ? kernel_source : "");
	hash_field(h, o->device);
	hash_field(h, json_string_value(json_object_get(device_facts, "name")));
	hash_field(h, json_string_value(json_object_get(device_facts, "driver")));
	hash_field(h, json_string_value(json_object_get(hello, "python")));
	hash_field(h, json_string_value(json_object_get(hello, "torch")));
	hash_field(h, json_string_value(json_object_get(hello, "triton")));
	hash_field(h, o->precision);
	hash_field(h, o->clock);
	hash_field(h, baseline ? o->compile_mode : "");
	snprintf(num, sizeof(num), "%d/%d/%d/%.17g/%.17g/%d/%d/%d", baseline ? 0 : o->trials, o->warmup, o->iters,
		 baseline ? 0 : o->atol, baseline ? 0 : o->rtol, baseline ? 0 : o->truth, baseline ? 1 : o->timing,
		 baseline ? 0 : o->allow_torch);
	hash_field(h, num);
	hash_final(h, key);
}

json_t *eval_device_facts(struct worker *w, const char *device)
{
	const json_t *probe = worker_probe(w);
	json_t *out;
	if (!probe)
		return NULL;
	out = json_object();
	if (!strcmp(device, "cpu")) {
		json_object_set_new(out, "name", json_sprintf("cpu: %s", json_string_value(json_object_get(probe, "platform")) ?: "?"));
		/* The worker's host, which is not this one under Slurm. */
		json_object_set(out, "free_bytes", json_object_get(probe, "host_available_bytes"));
	} else {
		int index = strlen(device) > 5 ? atoi(device + 5) : 0;
		json_t *g = json_array_get(json_object_get(probe, "gpus"), (size_t)index);
		if (!g) {
			err_set(ERR_INPUT, "no GPU '%s' on the worker's machine", device);
			json_decref(out);
			return NULL;
		}
		json_object_update(out, g);
		json_object_set(out, "driver", json_object_get(probe, "driver"));
	}
	return out;
}

/* Calibrations made in this process, by key: tasks that start together on
 * one device wait for one calibration instead of each making its own (also
 * without a cache). */
static pthread_mutex_t calibration_mu = PTHREAD_MUTEX_INITIALIZER;
static json_t *calibrations;

json_t *eval_calibration(struct worker *w, const struct eval_opts *o, const json_t *facts)
{
	const json_t *hello = worker_hello(w);
	struct hash_ctx *h = hash_begin();
	json_t *req, *res;
	char key[65];

	hash_field(h, "egg-calibration-v3");
	hash_field(h, json_string_value(json_object_get(hello, "code")));
	hash_field(h, o->device);
	hash_field(h, json_string_value(json_object_get(facts, "name")));
	hash_field(h, json_string_value(json_object_get(facts, "driver")));
	hash_field(h, json_string_value(json_object_get(hello, "torch")));
	hash_field(h, json_string_value(json_object_get(hello, "triton")));
	hash_final(h, key);
	pthread_mutex_lock(&calibration_mu);
	if (!calibrations)
		calibrations = json_object();
	if ((res = json_object_get(calibrations, key))) {
		res = json_deep_copy(res);
		goto out;
	}
	if (o->cache && (res = evcache_get(o->cache, "calibration", key))) {
		json_object_set_new(calibrations, key, json_deep_copy(res));
		goto out;
	}
	req = json_pack("{s:s, s:s, s:f}", "op", "calibrate", "device", o->device, "timeout_s", 300.0);
	json_object_set_new(req, "lock", o->lock ? json_string(o->lock) : json_null());
	worker_set_progress(w, o->progress, o->progress_arg);
	res = worker_call_retry(w, req, 420000);
	worker_set_progress(w, NULL, NULL);
	json_decref(req);
	if (res) {
		json_object_set_new(calibrations, key, json_deep_copy(res));
		if (o->cache)
			evcache_put(o->cache, "calibration", key, res);
	}
out:
	pthread_mutex_unlock(&calibration_mu);
	return res;
}

const struct eval_user_way eval_user_ways[EVAL_USER_WAYS] = {
	{ "eager", "plain", "plain", 0 },
	{ "compile", "compile", "torch.compile", 1 },
	{ "compile_cudagraphs", "compile_cudagraphs", "compile + CUDA graphs", 1 },
};

json_t *eval_usertime(struct worker *w, const struct eval_opts *o, const char *task_source,
		      const char *dropin_source, int wall_iters, int wall_rounds)
{
	json_t *req = run_request("usertime", o, task_source), *res, *ways = json_array();
	int cpu = !strcmp(o->device, "cpu");
	json_object_del(req, "clock");
	json_object_set_new(req, "kernel_source", json_string(dropin_source));
	json_object_set_new(req, "wall_iters", json_integer(wall_iters));
	json_object_set_new(req, "wall_rounds", json_integer(wall_rounds));
	/* Each way's names, once (a compiled way has the same name on both sides). */
	for (int k = 0; k < EVAL_USER_WAYS; k++) {
		if (cpu && eval_user_ways[k].compiled)
			continue;
		json_array_append_new(ways, json_string(eval_user_ways[k].original));
		if (strcmp(eval_user_ways[k].original, eval_user_ways[k].dropin))
			json_array_append_new(ways, json_string(eval_user_ways[k].dropin));
	}
	json_object_set_new(req, "ways", ways);
	json_object_set_new(req, "timeout_s", json_real(o->timeout_s * 8));
	worker_set_progress(w, o->progress, o->progress_arg);
	res = worker_call_retry(w, req, o->timeout_s * 8000 + 120000);
	worker_set_progress(w, NULL, NULL);
	json_decref(req);
	return res;
}

json_t *eval_baseline(struct worker *w, const struct eval_opts *o, const char *task_source)
{
	json_t *facts = NULL, *req = NULL, *res = NULL;
	char key[65];

	/* Starting the worker first makes its hello (versions) available. */
	facts = eval_device_facts(w, o->device);
	if (!facts)
		return NULL;
	eval_result_key(w, o, facts, "baseline", task_source, NULL, key);
	if (o->cache && (res = evcache_get(o->cache, "baseline", key))) {
		json_object_set_new(res, "cached", json_true());
		goto out;
	}
	req = run_request("baseline", o, task_source);
	json_object_set_new(req, "compile_mode", json_string(o->compile_mode));
	json_object_set_new(req, "timeout_s", json_real(o->timeout_s * 4));
	worker_set_progress(w, o->progress, o->progress_arg);
	res = worker_call_retry(w, req, o->timeout_s * 4000 + 120000);
	worker_set_progress(w, NULL, NULL);
	if (!res)
		goto out;
	json_object_set(res, "device_name", json_object_get(facts, "name"));
	json_object_set(res, "driver", json_object_get(facts, "driver"));
	json_object_set(res, "torch", json_object_get(worker_hello(w), "torch"));
	json_object_set(res, "triton", json_object_get(worker_hello(w), "triton"));
	json_object_set_new(res, "warmup", json_integer(o->warmup));
	json_object_set_new(res, "iters", json_integer(o->iters));
	if (o->cache)
		evcache_put(o->cache, "baseline", key, res);
	json_object_set_new(res, "cached", json_false());
out:
	if (res) {
		/* The speed of light: without a calibration (it failed) the
		 * baseline has no roofline, and nothing else is lost. */
		json_t *cal = eval_calibration(w, o, facts);
		if (cal) {
			eval_attach_roofline(res, cal, o->precision);
			json_object_set(res, "calibration", cal);
		} else
			json_object_set_new(res, "roofline_error", json_string(err_msg()));
		err_clear();
		json_decref(cal);
	}
	json_decref(req);
	json_decref(facts);
	return res;
}

static json_t *run_eval(struct worker *w, const struct eval_opts *o, const char *task_source,
			const char *kernel_source)
{
	json_t *req = run_request("eval", o, task_source), *res;
	json_object_set_new(req, "kernel_source", kernel_source ? json_string(kernel_source) : json_null());
	json_object_set_new(req, "selfcheck", json_boolean(!kernel_source));
	json_object_set_new(req, "trials", json_integer(o->trials));
	json_object_set_new(req, "timing", json_boolean(o->timing));
	json_object_set_new(req, "truth", json_boolean(o->truth));
	json_object_set_new(req, "allow_torch", json_boolean(o->allow_torch));
	json_object_set_new(req, "atol", o->atol >= 0 ? json_real(o->atol) : json_null());
	json_object_set_new(req, "rtol", o->rtol >= 0 ? json_real(o->rtol) : json_null());
	worker_set_progress(w, o->progress, o->progress_arg);
	/* A worker that died or hung (not the candidate: that would be a
	 * verdict) gets one more try on a fresh worker. */
	res = worker_call_retry(w, req, o->timeout_s * 1000 + 120000);
	worker_set_progress(w, NULL, NULL);
	json_decref(req);
	return res;
}

static void add_speedups(json_t *res, const json_t *baseline)
{
	double k = json_num(res, "kernel_ms");
	double e = baseline ? json_num(baseline, "eager_ms") : NAN;
	double c = baseline ? json_num(baseline, "compile_ms") : NAN;
	json_object_set_new(res, "eager_ms", isnan(e) ? json_null() : json_real(e));
	json_object_set_new(res, "compile_ms", isnan(c) ? json_null() : json_real(c));
	json_object_set_new(res, "speedup_eager", isnan(e) || isnan(k) || k <= 0 ? json_null() : json_real(e / k));
	json_object_set_new(res, "speedup_compile", isnan(c) || isnan(k) || k <= 0 ? json_null() : json_real(c / k));
	if (baseline && json_is_number(json_object_get(baseline, "existing_ms"))) {
		/* The task's existing kernel, the third baseline. */
		double x = json_num(baseline, "existing_ms");
		json_object_set_new(res, "existing_ms", json_real(x));
		json_object_set_new(res, "speedup_existing", isnan(k) || k <= 0 ? json_null() : json_real(x / k));
	}
	{
		const json_t *rl = baseline ? json_object_get(baseline, "roofline") : NULL;
		double r = baseline ? json_num(baseline, "roofline_ms") : NAN, mem = json_num(rl, "memory_ms");
		json_object_set_new(res, "roofline_ms", isnan(r) ? json_null() : json_real(r));
		json_object_set_new(res, "sol_pct", isnan(r) || isnan(k) || k <= 0 ? json_null() : json_real(100 * r / k));
		json_object_set_new(res, "sol_basis", isnan(r) ? json_null() : json_string("roofline"));
		if (baseline && json_num(baseline, "practical_ms") > 0 && k > 0)
			json_object_set_new(res, "practical_pct", json_real(100 * json_num(baseline, "practical_ms") / k));
		if (!isnan(r) && k > 0 && k < r && !isnan(mem) && mem < r) {
			/* Faster than the reference's FLOPs allow: the kernel computes
			 * less (an algebraic rewrite). Only its traffic bounds it. */
			json_object_set_new(res, "roofline_ms", json_real(mem));
			json_object_set_new(res, "sol_pct", json_real(100 * mem / k));
			json_object_set_new(res, "sol_basis", json_string("memory"));
			json_object_del(res, "practical_pct");
			json_array_append_new(json_object_get(res, "flags"),
					      json_sprintf("beyond_flop_bound: %.4f ms beats the %.4f ms the reference's FLOPs "
							   "need at the measured peak, so the kernel computes less; its %%SOL "
							   "is against the memory bound (%.4f ms)", k, r, mem));
		}
	}
}

/* The worker's verdict, re-measured in a fresh process when its speedup
 * over eager is beyond the bound (what the cache holds). */
static json_t *verdict(struct worker *w, const struct eval_opts *o, const char *task_source,
		       const char *kernel_source, const json_t *baseline)
{
	double eager = baseline ? json_num(baseline, "eager_ms") : NAN;
	json_t *res = run_eval(w, o, task_source, kernel_source);
	double k;

	if (!res)
		return NULL;
	k = json_num(res, "kernel_ms");
	if (eval_passed(res) &&
	    !isnan(eager) && !isnan(k) && k > 0 && eager / k > o->speedup_bound) {
		/* Too good to trust from one process: measure again in a fresh one
		 * and keep the slower of the two. */
		json_t *again = run_eval(w, o, task_source, kernel_source);
		json_t *flags = json_object_get(res, "flags");
		double k2 = again ? json_num(again, "kernel_ms") : NAN;
		if (!again || !eval_passed(again)) {
			json_decref(res);
			res = again;
			if (!res)
				return NULL;
			json_array_append_new(json_object_get(res, "flags"),
					      json_sprintf("speedup_remeasured: %.1fx over eager on the first measurement; the fresh process failed", eager / k));
		} else {
			json_array_append_new(flags, json_sprintf("speedup_remeasured: %.1fx over eager (bound %.0fx); %.4f ms then %.4f ms in a fresh process, the slower kept",
								  eager / k, o->speedup_bound, k, k2));
			if (fabs(k2 - k) > 0.25 * fmin(k, k2))
				json_array_append_new(flags, json_string("unstable_timing: the two measurements differ by more than 25%"));
			if (k2 > k) {
				json_object_set(res, "kernel_ms", json_object_get(again, "kernel_ms"));
				json_object_set(res, "timing", json_object_get(again, "timing"));
			}
			json_decref(again);
		}
	}
	return res;
}

int eval_passed(const json_t *result)
{
	return !strcmp(json_string_value(json_object_get(result, "verdict")) ?: "", "pass");
}

enum eval_stage eval_stage_of(const json_t *result)
{
	static const char *const names[] = {
		[EVAL_AT_LOAD] = "load", [EVAL_AT_COMPILE] = "compile", [EVAL_AT_RUN] = "run",
		[EVAL_AT_CORRECTNESS] = "correctness", [EVAL_AT_INTEGRITY] = "integrity", [EVAL_AT_TIMING] = "timing",
		[EVAL_AT_DONE] = "done",
	};
	const char *stage = json_string_value(json_object_get(result, "stage")) ?: "";
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(stage, names[i]))
			return (enum eval_stage)i;
	return EVAL_AT_UNKNOWN;
}

json_t *eval_candidate(struct worker *w, const struct eval_opts *o, const char *task_source,
		       const char *kernel_source, const json_t *baseline)
{
	json_t *facts = NULL, *res = NULL;
	char key[65];
	int cache = o->cache && o->cache_verdicts;

	if (cache) {
		if (!(facts = eval_device_facts(w, o->device)))
			return NULL;
		eval_result_key(w, o, facts, "eval", task_source, kernel_source, key);
		if ((res = evcache_get(o->cache, "eval", key)))
			json_object_set_new(res, "cached", json_true());
	}
	if (!res) {
		res = verdict(w, o, task_source, kernel_source, baseline);
		if (res && cache)
			evcache_put(o->cache, "eval", key, res);
	}
	json_decref(facts);
	if (!res)
		return NULL;
	add_speedups(res, baseline);
	if (kernel_source && o->allow_torch && json_is_integer(json_object_get(res, "triton_launches")) &&
	    json_integer_value(json_object_get(res, "triton_launches")) == 0 && eval_passed(res)) {
		/* PyTorch timed against PyTorch (a composition whose parts all stayed
		 * PyTorch): the ratio is noise, not a speedup. */
		json_object_set_new(res, "speedup_eager", json_null());
		json_object_set_new(res, "speedup_compile", json_null());
		json_array_append_new(json_object_get(res, "flags"),
				      json_string("no_kernel: no Triton kernel ran; the candidate is PyTorch, so no speedup "
						  "is claimed"));
	}
	if (baseline)
		json_object_set_new(res, "baseline", json_deep_copy(baseline));
	return res;
}

json_t *eval_selfcheck(struct worker *w, const struct eval_opts *o, const char *task_source)
{
	return run_eval(w, o, task_source, NULL);
}

json_t *eval_task_size(struct worker *w, const char *device, const char *task_source)
{
	json_t *req = json_pack("{s:s, s:s, s:s}", "op", "size", "device", device, "task_source", task_source);
	json_t *res = worker_call_retry(w, req, 300000);
	json_decref(req);
	return res;
}

json_t *eval_candidate_pooled(struct pool *pool, int device, const struct eval_opts *o, const char *task_source,
			      const char *kernel_source, const json_t *baseline)
{
	struct pool_slot *slot = pool_acquire_for(pool, device, eval_need_bytes(baseline, o->device));
	json_t *res = eval_candidate(slot->worker, o, task_source, kernel_source, baseline);
	pool_release(pool, slot);
	return res;
}

#define CONTEXT_BYTES (600LL << 20)

long long eval_need_bytes(const json_t *baseline, const char *device)
{
	double peak = baseline ? json_num(baseline, "peak_bytes") : NAN;
	if (!device || !strcmp(device, "cpu") || isnan(peak) || peak <= 0)
		return 0;
	return (long long)(2 * peak) + 2 * CONTEXT_BYTES;
}

long long eval_size_need_bytes(const json_t *size, const char *device)
{
	double need = json_num(size, "need_bytes");
	if (isnan(need) || need <= 0)
		return 0;
	return (long long)need + (device && strcmp(device, "cpu") ? 2 * CONTEXT_BYTES : 0);
}

long long eval_device_budget(const json_t *facts, const char *device)
{
	double have = json_num(facts, "free_bytes");
	if (isnan(have))
		have = json_num(facts, "memory_bytes");
	if (!device || isnan(have) || have <= 0)
		return 0;
	return (long long)(0.9 * have);
}
