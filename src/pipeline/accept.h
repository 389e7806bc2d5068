/* accept.h: the rules by which a candidate's time is believed and beats
 * another's (defined in cand.c, where candidates are timed). */
#ifndef EGG_PIPELINE_ACCEPT_H
#define EGG_PIPELINE_ACCEPT_H

#include <jansson.h>

/* The acceptance rule: `new_ms` replaces `old_ms` when it is faster by more
 * than max(2%, 2 * sqrt(se_new^2 + se_old^2)), where se = 1.2533 * cv /
 * sqrt(iters) is the relative standard error of a median of `iters` timed
 * calls whose coefficient of variation is cv. */
int pipeline_faster(double new_ms, double new_cv, double old_ms, double old_cv, int iters);

/*
 * Whether a candidate's measured time is plausible next to the GPU time
 * Nsight Compute measured in its kernels for one forward call (the profile's
 * aggregate duration_ns): implausible when ncu's time exceeds kernel_ms by
 * more than 25% + 10 us, as when work runs on a stream the timer does not
 * wait for. 1 (plausible) when the profile has no duration. *ncu_ms gets
 * ncu's time in ms, or NAN.
 */
int pipeline_timing_plausible(double kernel_ms, const json_t *profile, double *ncu_ms);

#endif
