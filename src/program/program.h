/* program.h: a whole program cut into subgraph tasks and put back together (egg split, egg compose). */
#ifndef EGG_PROGRAM_H
#define EGG_PROGRAM_H

#include <jansson.h>

#include "../eval/eval.h"
#include "../eval/worker.h"

/*
 * The plan of a split program (DIR/plan.json):
 *   {"program": FILE, "program_sha256": HEX (of its text; absent in older plans),
 *    "plan_version": 2 (absent in older plans), "inputs": [NAME...],
 *    "output_tree": the program's output over value names ({"value": NAME},
 *                   {"tuple": [TREE...]}, {"list": [...]}, {"dict": [[KEY, TREE]...]},
 *                   {"const": VALUE}); an older plan has "output", an
 *                   expression over v['NAME'], instead,
 *    "measured_on": DEVICE or null, "eager_ms": MS or null,
 *    "subgraphs": [{"name", "file", "ops", "inputs", "outputs", "params": {PART_KEY: PROGRAM_KEY},
 *                   "share", "eager_ms", "glue", "notes", "input_shapes"}]}
 * `name` says what a subgraph computes ("conv1+bn1+relu"); a glue subgraph
 * (views alone) stays PyTorch and is no task.
 * "blocks": the coarser cut, residual blocks of several subgraphs each as
 * one task: the fields of a subgraph, and "replaces" (the indexes of the
 * consecutive subgraphs it spans) and "anchors"; absent in older plans.
 */

/*
 * Splits the program `task_source` with the worker (on o->device; with
 * `measure`, each subgraph's share of the eager time is measured there) and
 * writes each subgraph's task file and plan.json into `dir` (created).
 * Returns the plan (owned, without the files' texts), or NULL: ERR_INPUT
 * when the program cannot be split (the message names the construct and
 * its line), ERR_INFRA when the worker failed (ERR_NO_MEMORY: measuring it
 * cannot fit in the device's memory, refused up front). o->progress, when
 * set, is told the split's steps (tracing, measuring) and its ticks.
 */
json_t *program_split(struct worker *w, const struct eval_opts *o, const char *task_path, const char *task_source,
		      int measure, const char *dir);
/* The task file a subgraph of the plan is optimized as: its "task" (the
 * first occurrence's file, for a repeated subgraph), else its own "file".
 * Borrowed. */
const char *program_task_of(const json_t *sg);
/* DIR/plan.json (owned), or NULL with ERR_INPUT. */
json_t *program_load_plan(const char *dir);
/* Whether `plan` was split from the program whose text is `source` (its
 * "program_sha256"); a plan without one (an older egg's) fits any. */
int program_plan_fits(const json_t *plan, const char *source);
/* The kernels beside the plan's task files, its subgraphs' and its
 * blocks' (DIR/STEM.kernel.py for DIR/STEM.py, a repeat's being its
 * task's): {FILE: PATH} (owned). */
json_t *program_kernels_in_dir(const json_t *plan, const char *dir);

/* How egg compose puts a program together. */
struct compose_opts {
	int keep_torch;		/* a subgraph without a kernel runs its own PyTorch (else an error) */
	int any_shape;		/* the kernels run at any input shape (the check at other shapes, shapes.c) */
};

/*
 * Writes `out_path`: one self-contained file defining ModelNew with
 * Model's constructor and parameters (the program's source first, as it
 * is), whose forward runs the subgraphs in order, each through its kernel
 * (`kernels`: {FILE: kernel path}, borrowed) or, without one, through its
 * subgraph's PyTorch code when co->keep_torch (glue always); a block with
 * a kernel in `kernels` runs in place of the subgraphs it spans. A subgraph
 * without a kernel and without keep_torch: NULL with ERR_INPUT naming it.
 * What the runtime reads is data: one JSON document (_EGG_PLAN) read by
 * json.loads, and the sources as string literals; the forward is
 * straight-line code over the plan's value names (each checked to be an
 * identifier: ERR_INPUT otherwise). The code that loads and binds the
 * parts is the worker's egg_worker/program/compose_runtime.py
 * (launch_worker_dir), copied in; without it, NULL with ERR_INFRA naming
 * the path.
 * Returns {"out", "parts": [{"name", "file", "kind": "kernel"|"torch"|"glue",
 * "kernel"}], "kernel_parts", "torch_parts"} (owned).
 */
json_t *program_compose(const char *task_source, const json_t *plan, const char *dir, const json_t *kernels,
			const struct compose_opts *co, const char *out_path);

#endif
