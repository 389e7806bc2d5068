/* profile.c: one ncu profile of a candidate, parsed into metrics or an "unavailable" reason. */
#include "profile.h"

#include <string.h>

#include "../util/err.h"
#include "ncu.h"

/* Seconds one ncu run of a candidate may take. */
#define PROFILE_TIMEOUT_S 240

static json_t *unavailable(const char *fmt, const char *detail)
{
	return json_pack("{s:b, s:o}", "available", 0, "reason", json_sprintf(fmt, detail ? detail : ""));
}

static json_t *measure(struct worker *w, const struct eval_opts *o, const char *task_source,
		       const char *kernel_source);

json_t *profile_candidate(struct worker *w, const struct eval_opts *o, const char *task_source,
			  const char *kernel_source)
{
	json_t *facts = NULL, *out = NULL;
	char key[65];
	int cache = o->cache && o->cache_verdicts && strcmp(o->device, "cpu");
	if (cache && (facts = eval_device_facts(w, o->device))) {
		eval_result_key(w, o, facts, "profile", task_source, kernel_source, key);
		out = evcache_get(o->cache, "profile", key);
	}
	err_clear();
	if (!out) {
		out = measure(w, o, task_source, kernel_source);
		if (facts && json_is_true(json_object_get(out, "available")))
			evcache_put(o->cache, "profile", key, out);
	}
	json_decref(facts);
	return out;
}

/* One profiling job, parsed. */
static json_t *measure(struct worker *w, const struct eval_opts *o, const char *task_source,
		       const char *kernel_source)
{
	struct strvec args = STRVEC_INIT;
	struct ncu_report rep;
	json_t *req, *res, *out, *jargs;
	const char *csv, *errtail;
	char why[256];

	if (!strcmp(o->device, "cpu"))
		return unavailable("cpu device: no hardware counters (Triton interpreter)%s", NULL);
	ncu_args(&args);
	jargs = json_array();
	for (size_t i = 0; i < args.n; i++)
		json_array_append_new(jargs, json_string(args.v[i]));
	strvec_clear(&args);
	/* One profiled call after 3 warm-up calls; ncu itself is found on the
	 * worker's machine (its PATH, else the CUDA toolkit's). */
	req = eval_job_request("profile", o, task_source);
	json_object_set_new(req, "timeout_s", json_real(PROFILE_TIMEOUT_S));
	json_object_set_new(req, "kernel_source", json_string(kernel_source));
	json_object_set_new(req, "precision", json_string(o->precision));
	json_object_set_new(req, "warmup", json_integer(3));
	json_object_set_new(req, "calls", json_integer(1));
	json_object_set_new(req, "ncu_args", jargs);
	json_object_set_new(req, "ncu", json_null());
	res = worker_call_retry(w, req, (PROFILE_TIMEOUT_S + 120) * 1000);
	json_decref(req);
	if (!res) {
		out = unavailable("the profiling job failed: %s", err_msg());
		err_clear();
		return out;
	}
	csv = json_string_value(json_object_get(res, "csv")) ?: "";
	errtail = json_string_value(json_object_get(res, "stderr_tail")) ?: "";
	if (json_string_value(json_object_get(res, "error"))) {
		out = unavailable("%s", json_string_value(json_object_get(res, "error")));
	} else if (strstr(csv, "ERR_NVGPUCTRPERM") || strstr(errtail, "ERR_NVGPUCTRPERM")) {
		out = unavailable("hardware counters not permitted for this user (ERR_NVGPUCTRPERM)%s", NULL);
	} else if (json_is_null(json_object_get(res, "rc"))) {
		out = unavailable("ncu timed out%s", NULL);
	} else if (ncu_parse(csv, strlen(csv), &rep, why, sizeof(why)) < 0) {
		char detail[512];
		snprintf(detail, sizeof(detail), "%s (exit %lld; %.200s)", why,
			 json_integer_value(json_object_get(res, "rc")), errtail);
		out = unavailable("unparsable ncu output: %s", detail);
	} else if (rep.nkernels == 0) {
		ncu_report_clear(&rep);
		out = unavailable("ncu profiled no kernels: %s", errtail[0] ? errtail : "(no message)");
	} else {
		out = ncu_report_json(&rep);
		ncu_report_clear(&rep);
		json_object_set_new(out, "available", json_true());
		json_object_set(out, "seconds", json_object_get(res, "seconds"));
		json_object_set(out, "lock", json_object_get(res, "lock"));
		json_object_set(out, "locked_at", json_object_get(res, "locked_at"));
		json_object_set(out, "released_at", json_object_get(res, "released_at"));
	}
	json_decref(res);
	return out;
}
