/* facts.h: what the agents are told about a candidate and its siblings: its
 * timing against the baselines and the roofline, its Nsight Compute metrics,
 * the approaches earlier seeds took. (Prompt wording lives in agents/.) */
#ifndef EGG_FACTS_H
#define EGG_FACTS_H

#include <jansson.h>

/* "0.1234 ms median per call; PyTorch eager ... (1.50x); torch.compile ...",
 * and on a GPU the speed of light and the kernel's share of it. Owned. */
char *agents_timing_text(const json_t *baseline, const char *device, double ms);
/* The metrics of a profile (focus[0..nfocus) first, NULL entries ending it),
 * or why there are none with the kernel's launches per call. Owned. */
char *agents_metrics_text(const json_t *profile, const char *const *focus, int nfocus, long long launches);
/* The current kernel's launch configuration as its evaluation recorded it
 * (eval result "launch_configs": each Triton kernel's last launch, its grid
 * and compile-time values, an autotuned kernel's chosen configuration
 * among them), for the stages that tune it: a line per kernel, or a line
 * saying none was recorded. Owned. */
char *agents_launch_text(const json_t *eval);
/* What a seed request says about the algorithm to choose: with the earlier
 * seeds' approaches (NULL for the first seed), a structurally different one. Owned. */
char *agents_seed_diversity(int seeds, const char *approaches);

#endif
