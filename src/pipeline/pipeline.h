/* pipeline.h: the EGG method for one task: seeds, repairs, refinement, three tuning stages. */
#ifndef EGG_PIPELINE_H
#define EGG_PIPELINE_H

#include "accept.h"
#include "io.h"

/* The defaults: 2 seeds, 3 repairs per seed, 1 per later candidate,
 * refinement and the three tuning stages side by side, top 1, ncu on, stop
 * at 85% of the speed of light. */
void pipeline_opts_init(struct pipeline_opts *o);

/*
 * Runs the method. Returns 0 when it ran to its end or stopped gracefully
 * (budget, infrastructure, a reply awaited: the result's stop says why); -1 when
 * egg itself failed (its stop is STOP_EGG; the result still holds the best
 * kernel found before). Every step lands in env->rec.
 */
int pipeline_run(struct pipeline_env *env, const struct pipeline_opts *o, struct pipeline_result *out);
void pipeline_result_clear(struct pipeline_result *r);

#endif
