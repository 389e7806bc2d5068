/* stages.c: objectives, rules, focus metrics and prompts of each stage (docs/method.md). */
#include "stages.h"

#include <stdio.h>
#include <string.h>

const struct stage stages[STAGE_COUNT] = {
	{ STAGE_SEED, "seed", "Seed",
	  "Write a first correct Triton implementation whose algorithm is structurally different from the other seeds.",
	  "Correctness first; choose an algorithm that can become fast.",
	  { NULL }, P_CODE_SEED, 0, P_CODE_SEED, "seed", 0, 0 }, /* seeds have no parent to profile */
	{ STAGE_REFINE, "refine", "Algorithmic refinement",
	  "Make one high-level change to the algorithm: fuse operators, replace the algorithm (online softmax, "
	  "FlashAttention-style tiling, im2col or Winograd for convolution, persistent kernels for recurrences), "
	  "launch fewer kernels, or use a better data layout or in-place buffers.",
	  "One change only. If the expected gain is under about 10%, the kernel is not worth changing.",
	  { "sm_throughput_pct", "grid_size", "dram_throughput_pct", NULL },
	  P_PROFILE_REFINE, SCHEMA_PROFILE_REFINE, P_CODE_REFINE, "refine", 0, 0 },
	{ STAGE_MAPPING, "mapping", "Parallel mapping",
	  "Map the operator's independent dimensions (batch, head, group, expert, M/N tiles) onto the launch grid "
	  "so that every SM has work.",
	  "At most 3 grid axes; flatten only independent dimensions; change the grid only when SM use is clearly "
	  "low. Keep the algorithm as it is.",
	  { "warp_occupancy_pct", "grid_size", "sm_throughput_pct", NULL },
	  P_PROFILE_MAPPING, SCHEMA_PROFILE_TUNE, P_CODE_TUNE, "tune", 1, 1 },
	{ STAGE_TILING, "tiling", "Tensor tiling",
	  "Choose the BLOCK sizes. Use powers of two (multiples of 16 for M/N, at least 8 for K) with grid "
	  "G_i = ceil(d_i / B_i); offer 2 or 3 candidate configurations through @triton.autotune so that "
	  "measurement picks one.",
	  "Keep the grid structure of the previous stage. Keep the algorithm.",
	  { "dram_throughput_pct", "l2_hit_rate_pct", "memory_stall_pct", NULL },
	  P_PROFILE_TILING, SCHEMA_PROFILE_TUNE, P_CODE_TUNE, "tune", 1, 1 },
	{ STAGE_MEMORY, "memory", "Memory optimization",
	  "Improve memory access: coalesced global loads and stores, software pipelining depth (num_stages 2-4), "
	  "num_warps 4 or 8, chosen from the stall and occupancy evidence; offer 3 or 4 configurations through "
	  "@triton.autotune, always including the current one.",
	  "Keep the grid and the BLOCK sizes fixed. A gain under 2% or an unstable one is reverted.",
	  { "memory_stall_pct", "dram_throughput_pct", "l2_hit_rate_pct", NULL },
	  P_PROFILE_MEMORY, SCHEMA_PROFILE_TUNE, P_CODE_TUNE, "tune", 1, 1 },
	/* Not a stage of its own in the method: when the tuning stages run side
	 * by side on the same kernel and more than one of them wins, one code
	 * call brings their changes together (no profile agent: the plans are
	 * the ones that won). */
	{ STAGE_COMBINE, "combine", "Combined tuning",
	  "Bring together the tuning changes that were each measured faster on their own into one kernel.",
	  "Keep every change the current kernel has; add the other changes as they were made; keep the algorithm.",
	  { NULL }, P_CODE_COMBINE, 0, P_CODE_COMBINE, "tune", 1, 0 },
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
