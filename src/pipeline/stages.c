/* stages.c: objectives, rules, focus metrics and prompts of each stage (docs/method.md). */
#include "stages.h"

#include <stdio.h>
#include <string.h>

const struct stage stages[STAGE_COUNT] = {
	[STAGE_SEED] = {
		.id = STAGE_SEED,
		.name = "seed",
		.title = "Seed",
		.objective = "Write a first correct Triton implementation whose algorithm is structurally different from the other seeds.",
		.rules = "Correctness first; choose an algorithm that can become fast.",
		/* Seeds have no parent to profile: no analysis prompt. */
		.focus = { NULL },
		.code_prompt = P_CODE_SEED,
		.step_kind = "seed",
	},
	[STAGE_REFINE] = {
		.id = STAGE_REFINE,
		.name = "refine",
		.title = "Algorithmic refinement",
		.objective = "Make one high-level change to the algorithm: fuse operators, replace the algorithm (online softmax, "
		  "FlashAttention-style tiling, im2col or Winograd for convolution, persistent kernels for recurrences), "
		  "launch fewer kernels, or use a better data layout or in-place buffers.",
		.rules = "One change only. If the expected gain is under about 10%, the kernel is not worth changing.",
		.focus = { "sm_throughput_pct", "grid_size", "dram_throughput_pct", NULL },
		.analysis_prompt = P_PROFILE_REFINE,
		.analysis_schema = SCHEMA_PROFILE_REFINE,
		.code_prompt = P_CODE_REFINE,
		.step_kind = "refine",
	},
	[STAGE_MAPPING] = {
		.id = STAGE_MAPPING,
		.name = "mapping",
		.title = "Parallel mapping",
		.objective = "Map the operator's independent dimensions (batch, head, group, expert, M/N tiles) onto the launch grid "
		  "so that every SM has work.",
		.rules = "At most 3 grid axes; flatten only independent dimensions; change the grid only when SM use is clearly "
		  "low. Keep the algorithm as it is.",
		.focus = { "warp_occupancy_pct", "grid_size", "sm_throughput_pct", NULL },
		.analysis_prompt = P_PROFILE_MAPPING,
		.analysis_schema = SCHEMA_PROFILE_TUNE,
		.code_prompt = P_CODE_TUNE,
		.step_kind = "tune",
		.sees_decisions = 1,
		.tuning = 1,
	},
	[STAGE_TILING] = {
		.id = STAGE_TILING,
		.name = "tiling",
		.title = "Tensor tiling",
		.objective = "Choose the BLOCK sizes. Use powers of two (multiples of 16 for M/N, at least 8 for K) with grid "
		  "G_i = ceil(d_i / B_i); offer 2 or 3 candidate configurations through @triton.autotune so that "
		  "measurement picks one.",
		.rules = "Keep the grid structure of the previous stage. Keep the algorithm.",
		.focus = { "dram_throughput_pct", "l2_hit_rate_pct", "memory_stall_pct", NULL },
		.analysis_prompt = P_PROFILE_TILING,
		.analysis_schema = SCHEMA_PROFILE_TUNE,
		.code_prompt = P_CODE_TUNE,
		.step_kind = "tune",
		.sees_decisions = 1,
		.tuning = 1,
	},
	[STAGE_MEMORY] = {
		.id = STAGE_MEMORY,
		.name = "memory",
		.title = "Memory optimization",
		.objective = "Improve memory access: coalesced global loads and stores, software pipelining depth (num_stages 2-4), "
		  "num_warps 4 or 8, chosen from the stall and occupancy evidence; offer 3 or 4 configurations through "
		  "@triton.autotune, always including the current one.",
		.rules = "Keep the grid and the BLOCK sizes fixed. A gain under 2% or an unstable one is reverted.",
		.focus = { "memory_stall_pct", "dram_throughput_pct", "l2_hit_rate_pct", NULL },
		.analysis_prompt = P_PROFILE_MEMORY,
		.analysis_schema = SCHEMA_PROFILE_TUNE,
		.code_prompt = P_CODE_TUNE,
		.step_kind = "tune",
		.sees_decisions = 1,
		.tuning = 1,
	},
	/* Not a stage of its own in the method: when the tuning stages run side
		 * by side on the same kernel and more than one of them wins, one code
		 * call brings their changes together (no profile agent: the plans are
		 * the ones that won). */
	[STAGE_COMBINE] = {
		.id = STAGE_COMBINE,
		.name = "combine",
		.title = "Combined tuning",
		.objective = "Bring together the tuning changes that were each measured faster on their own into one kernel.",
		.rules = "Keep every change the current kernel has; add the other changes as they were made; keep the algorithm.",
		.focus = { NULL },
		.analysis_prompt = P_CODE_COMBINE,
		.code_prompt = P_CODE_COMBINE,
		.step_kind = "tune",
		.sees_decisions = 1,
		.tuning = 0,
	},
};

const char *stage_tuning_names(const char *sep, char *out, size_t n)
{
	size_t at = 0;
	out[0] = '\0';
	for (int i = 0; i < STAGE_COUNT; i++)
		if (stages[i].tuning && at < n)
			at += (size_t)snprintf(out + at, n - at, "%s%s", at ? sep : "", stages[i].name);
	return out;
}

const struct stage *stage_by_name(const char *name)
{
	for (int i = 0; i < STAGE_COUNT; i++)
		if (!strcmp(stages[i].name, name))
			return &stages[i];
	return NULL;
}
