/* profile.h: profiling a candidate with ncu through the worker; failures are data, never fatal. */
#ifndef EGG_PROFILE_H
#define EGG_PROFILE_H

#include <jansson.h>

#include "../eval/eval.h"

/*
 * Runs ncu on a warmed-up profile run of the candidate (only its kernels:
 * the calls sit inside cudaProfilerStart/Stop) and parses the CSV here.
 * Always returns an object: {"available": true, "kernels": [...],
 * "aggregate": {...}, "kernel_count": N, "seconds": S} or
 * {"available": false, "reason": "..."} when the device is the CPU, ncu is
 * missing, counters are not permitted, ncu timed out or its output could
 * not be parsed.
 */
json_t *profile_candidate(struct worker *w, const struct eval_opts *o, const char *task_source,
			  const char *kernel_source);

#endif
