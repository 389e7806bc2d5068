/* model.h: a model spec as a program: a torchvision, timm or transformers
 * model (or one's own, or a KernelBench file in another mode or dtype)
 * written as a KernelBench-form program that egg split, compose and eval
 * take like any other. */
#ifndef EGG_MODEL_H
#define EGG_MODEL_H

/*
 * What the user gave: `program` is a KernelBench file, or a model:
 * MODULE:CALLABLE (torchvision.models:resnet50) or FILE.py:CALLABLE, which
 * builds the module (with random weights: nothing is downloaded).
 *   kwargs: a JSON object of keyword arguments for the callable, or NULL;
 *   inputs: the example inputs, "32x3x224x224" or "8x1024:int64:50257,..."
 *           (SHAPE[:float|int64|int32|bool[:HIGH]], HIGH the bound of an
 *           integer input, default 2), or MODULE:FN / FILE.py:FN returning them;
 *   mode:   "eval" or "train", NULL: eval for a model, a KernelBench file's own (train);
 *   dtype:  "fp32", "bf16" or "fp16" (parameters, buffers and floating inputs), NULL: fp32.
 */
struct model_spec {
	const char *program, *kwargs, *inputs, *mode, *dtype;
};

/* Whether `arg` names a model (MODULE:CALLABLE or FILE.py:CALLABLE) rather than a file. */
int model_is_ref(const char *arg);
/* Whether `m` needs a program of egg's own: a model, or a KernelBench file
 * with a mode or dtype. */
int model_spec_wanted(const struct model_spec *m);
/*
 * Writes the program of `m` into `dir` (created) as NAME.py, NAME from the
 * callable (or the file) and a non-default dtype and mode ("resnet50_bf16").
 * Its runtime is the worker's egg_worker/program/model_runtime.py. Returns
 * the path (owned), or NULL: ERR_INPUT for a bad spec (one line naming
 * the flag), ERR_INFRA when the runtime or the file cannot be written.
 */
char *model_write_program(const struct model_spec *m, const char *dir);
/*
 * Before anything starts: that the FILE.py of a FILE.py:NAME spec (the
 * model, or --inputs) exists and defines NAME (its first dotted part) at
 * its top level, read with Python's ast by `PYTHON -I WORKER/egg-worker.py
 * names FILE` (the file is not run). 0 when it does, when `ref` names a
 * module (importing it is the worker's), or when the check cannot run;
 * -1 with ERR_INPUT, one line beginning "WHAT 'REF': " that says what is
 * wrong (no file, a syntax error, no such name: the nearest one offered).
 */
int model_check_ref(const char *ref, const char *what, const char *python);
/* Whether `program_source` is a program model_write_program wrote (its
 * inputs drawn from EGG_MODEL, so that egg can draw them at other shapes). */
int model_program_is_spec(const char *program_source);
/*
 * The program at other input shapes: `program_source` (a model spec's)
 * with every input's first dimension `batch` and, when `length` > 0, the
 * second dimension of every input that is not floating point (token ids,
 * masks) `length`. Owned.
 */
char *model_program_at(const char *program_source, long batch, long length);
/* The folder under the store for the program of `m`:
 * STORE/programs/HASH, HASH from the spec (owned). */
char *model_program_dir(const struct model_spec *m, const char *store);

#endif
