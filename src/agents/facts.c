/* facts.c: a candidate's facts as the prompts state them (agents/facts.h). */
#include "facts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../eval/eval.h"
#include "../profile/ncu.h"
#include "../util/buf.h"
#include "../util/jsonnum.h"

char *agents_timing_text(const json_t *b, const char *device, double ms)
{
	struct buf t = BUF_INIT;
	buf_addf(&t, "%.4f ms median per call", ms);
	if (b && !isnan(json_num(b, "eager_ms")))
		buf_addf(&t, "; PyTorch eager %.4f ms (%.2fx)", json_num(b, "eager_ms"), json_num(b, "eager_ms") / ms);
	if (b && !isnan(json_num(b, "compile_ms")))
		buf_addf(&t, "; torch.compile %.4f ms (%.2fx)", json_num(b, "compile_ms"), json_num(b, "compile_ms") / ms);
	if (!strcmp(device, "cpu"))
		buf_adds(&t, " [CPU timings: Triton interpreter]");
	else if (b && !isnan(json_num(b, "roofline_ms"))) {
		const json_t *rl = json_object_get(b, "roofline");
		buf_addf(&t, "\nSpeed of light: %.4f ms (", json_num(b, "roofline_ms"));
		eval_roofline_text(&t, rl, NULL);
		buf_adds(&t, "; measured peaks, the inputs, weights and outputs moved once)");
		buf_addf(&t, "; this kernel runs at %.0f%% of it (eager at %.0f%%). Little is left to gain near 100%%.",
			 100 * json_num(b, "roofline_ms") / ms, json_num(b, "eager_sol_pct"));
		if (json_num(b, "practical_ms") > 0)
			buf_addf(&t, "\nPractical bound: egg's own Triton matrix product reaches %.1f TFLOP/s on this GPU in "
				     "%s (measured at calibration, %lld^3); at that rate this task's work takes %.4f ms, and "
				     "this kernel runs at %.0f%% of it. Near or past it, tuning has little left; only less "
				     "work (another algorithm) or a faster scheme gains more.",
				 json_num(rl, "practical_flops_s") / 1e12,
				 json_string_value(json_object_get(rl, "practical_scheme")) ?: "?",
				 json_integer_value(json_object_get(rl, "practical_size")), json_num(b, "practical_ms"),
				 100 * json_num(b, "practical_ms") / ms);
	}
	return buf_detach(&t);
}

char *agents_metrics_text(const json_t *prof, const char *const *focus, int nfocus, long long launches)
{
	struct buf t = BUF_INIT;
	const json_t *agg = json_object_get(prof, "aggregate"), *k;
	size_t i;

	if (!json_is_true(json_object_get(prof, "available"))) {
		buf_addf(&t, "metrics unavailable: %s.\nStatic facts: %lld Triton launch(es) per forward call.",
			 json_string_value(json_object_get(prof, "reason")) ?: "unknown reason", launches);
		return buf_detach(&t);
	}
	buf_addf(&t, "%lld kernel(s) per forward call; aggregated over them (percentages weighted by duration, "
		     "grid of the longest kernel):\n", json_integer_value(json_object_get(prof, "kernel_count")));
	/* Focus metrics first, then the rest. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t m = 0; m < ncu_nmetrics; m++) {
			int is_focus = 0;
			const json_t *v = json_object_get(agg, ncu_metrics[m].key);
			for (int f = 0; focus && f < nfocus && focus[f]; f++)
				is_focus |= !strcmp(focus[f], ncu_metrics[m].key);
			if (is_focus != (pass == 0))
				continue;
			if (json_is_number(v))
				buf_addf(&t, "- %s = %.2f (%s)\n", ncu_metrics[m].key, json_number_value(v), ncu_metrics[m].label);
			else
				buf_addf(&t, "- %s = n/a (%s)\n", ncu_metrics[m].key, ncu_metrics[m].label);
		}
	json_array_foreach(json_object_get(prof, "kernels"), i, k) {
		if (i >= 8)
			break;
		buf_addf(&t, "kernel %zu: %.80s, grid %s, block %s, %.0f ns\n", i,
			 json_string_value(json_object_get(k, "name")), json_string_value(json_object_get(k, "grid")),
			 json_string_value(json_object_get(k, "block")), json_num(k, "duration_ns"));
	}
	return buf_detach(&t);
}

char *agents_seed_diversity(int seeds, const char *approaches)
{
	if (!approaches)
		return xstrdup(seeds > 1 ? "Other seeds will use different algorithms; pick the one you consider most natural."
					 : "Pick the algorithm you consider best for this device.");
	return xasprintf("Earlier seeds used these approaches: %s. Use a structurally different algorithm (different "
			 "decomposition of the work, different data flow), not a re-tuning of those.", approaches);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char *agents_launch_text(const json_t *eval)
{
	struct buf t = BUF_INIT;
	const json_t *c, *grid, *v;
	const char *key;
	size_t i, k;
	if (!json_array_size(json_object_get(eval, "launch_configs")))
		return xstrdup("Launch configuration: none recorded for this kernel.");
	buf_adds(&t, "Launch configuration of the current kernel, as it ran (each Triton kernel's launch; for an "
		     "autotuned kernel, the configuration the autotuner chose):");
	json_array_foreach(json_object_get(eval, "launch_configs"), i, c) {
		int first = 1;
		buf_addf(&t, "\n- %s: grid ", json_string_value(json_object_get(c, "kernel")) ?: "?");
		grid = json_object_get(c, "grid");
		if (json_array_size(grid)) {
			buf_adds(&t, "(");
			json_array_foreach(grid, k, v)
				buf_addf(&t, "%s%lld", k ? ", " : "", (long long)json_integer_value(v));
			buf_adds(&t, ")");
		} else {
			buf_adds(&t, "not known");
		}
		/* In key order: a cached evaluation's object comes back sorted, and
		 * the same kernel must give the same prompt (the reply cache). */
		const char *keys[32];
		size_t nkeys = 0;
		json_object_foreach((json_t *)json_object_get(c, "config"), key, v)
			if (nkeys < sizeof(keys) / sizeof(keys[0]))
				keys[nkeys++] = key;
		qsort(keys, nkeys, sizeof(keys[0]), by_name);
		for (k = 0; k < nkeys; k++) {
			key = keys[k];
			v = json_object_get(json_object_get(c, "config"), key);
			buf_addf(&t, "%s%s=", first ? "; " : ", ", key);
			first = 0;
			if (json_is_integer(v))
				buf_addf(&t, "%lld", (long long)json_integer_value(v));
			else if (json_is_real(v))
				buf_addf(&t, "%g", json_real_value(v));
			else if (json_is_boolean(v))
				buf_adds(&t, json_is_true(v) ? "True" : "False");
			else
				buf_addf(&t, "%s", json_string_value(v) ?: "?");
		}
	}
	return buf_detach(&t);
}
