/* shapes.h: a composed program checked at input shapes it was not split at
 * (half and twice the batch, half the length of token ids): where the whole
 * passes there, the drop-in runs its kernels there too; per kernel, whether
 * it generalises, is specialised to the traced shapes, or fails. */
#ifndef EGG_SHAPES_H
#define EGG_SHAPES_H

#include <jansson.h>

#include "task.h"

/*
 * Evaluates the composition of `plan` (split from program `src` into
 * `dir`) with `kernels` ({FILE: kernel path}, the ones the program uses)
 * at other shapes against the program at those shapes, correctness only,
 * its parts run whatever the shape (compositions are written to
 * `scratch`). Only a model spec's program can draw its inputs at other
 * shapes (model_program_at); for any other the result says so. When the
 * whole fails at a shape, the identity composition and each distinct
 * kernel alone (`rows`: the program's subgraph rows, "task" and "used") say
 * whose failure it was. Returns
 *   {"shapes": [{"label", "inputs": [SHAPE...], "verdict": "pass"|"fail"|
 *                "not_checked", "reason"}],
 *    "kernels": [{"name", "task", "verdict": "generalises"|"specialised"|
 *                 "fails"|"not_judged", "why"}],
 *    "checked": [[SHAPE...]...]: the shapes the whole passed at}
 * or {"skipped": why}; owned. NULL on an infrastructure failure (the error
 * set): a failure of egg's own is never reported as a kernel's.
 */
json_t *shapes_check(struct run_shared *rs, const struct eval_opts *eo, const char *src, const json_t *plan,
		     const char *dir, const json_t *rows, const json_t *kernels, const char *scratch, int quiet);

#endif
