/* ask.c: the rules under which a tuning stage decides "no change" from the profile alone (ask.h). */
#include "ask.h"

#include <math.h>
#include <string.h>

#include "../util/jsonnum.h"

/*
 * The rules, as data. Each one is the method's own condition for a stage
 * to change nothing, made measurable:
 *
 * - Parallel mapping changes the grid "only when SM use is clearly low".
 *   With at least 4 waves of blocks per SM (launch__waves_per_multiprocessor
 *   counts them at the kernel's own occupancy), every SM receives work
 *   again and again, and the last, partial wave costs at most a fifth of
 *   the time; with the SMs or DRAM at half their peak or more, the machine
 *   is busy. Recorded with a real model on the H200: the mapping stage
 *   answered "no change" in 16 of 16 calls over two runs, each time naming
 *   many waves and busy SMs (FlashAttention: 15.5 waves of 4096 blocks, "the
 *   limit is inside a block").
 *
 * Tiling and memory have no rule: in the recorded runs their plans did
 * change kernels, and some were kept (MinGPT GELU's tiling, the GEMM's
 * tiling and memory), so no figure of the profile said in advance that
 * they had nothing to give. They run side by side instead (pipeline.c).
 */
const struct ask_rule ask_rules[] = {
	{ STAGE_MAPPING, "grid-fills-gpu",
	  "the grid already gives every SM work (4 or more waves of blocks per SM) and the SMs or DRAM run at "
	  "half their peak or more",
	  { { "waves_per_sm", 4 }, { NULL, 0 } },
	  { { "sm_throughput_pct", 50 }, { "dram_throughput_pct", 50 }, { NULL, 0 } } },
};
const size_t ask_nrules = sizeof(ask_rules) / sizeof(ask_rules[0]);

/* Whether the profile's figure for c holds (a missing figure never does);
 * the figure read goes into `figures`. */
static int holds(const struct ask_cond *c, const json_t *agg, json_t *figures)
{
	double v = json_num(agg, c->metric);
	if (isnan(v))
		return 0;
	json_object_set_new(figures, c->metric, json_real(v));
	return v >= c->at_least;
}

static int rule_holds(const struct ask_rule *r, const json_t *agg, json_t *figures)
{
	int any = 0, has_any = 0;
	for (int i = 0; i < 3 && r->all[i].metric; i++)
		if (!holds(&r->all[i], agg, figures))
			return 0;
	for (int i = 0; i < 3 && r->any[i].metric; i++) {
		has_any = 1;
		any |= holds(&r->any[i], agg, figures);
	}
	return !has_any || any;
}

const struct ask_rule *ask_decided(enum stage_id st, const json_t *profile, json_t **figures)
{
	const json_t *agg = json_object_get(profile, "aggregate");
	if (figures)
		*figures = NULL;
	if (!json_is_true(json_object_get(profile, "available")) || !json_is_object(agg))
		return NULL;
	for (size_t i = 0; i < ask_nrules; i++) {
		json_t *read;
		if (ask_rules[i].stage != st)
			continue;
		read = json_object();
		if (rule_holds(&ask_rules[i], agg, read)) {
			if (figures)
				*figures = read;
			else
				json_decref(read);
			return &ask_rules[i];
		}
		json_decref(read);
	}
	return NULL;
}
