/* context.h: what every agent is told about the target and the precision rules. */
#ifndef EGG_CONTEXT_H
#define EGG_CONTEXT_H

#include <jansson.h>

/* The target as the prompts describe it: for a GPU its name, SMs, shared
 * memory and registers per SM, L2, total memory (never a figure that
 * changes between starts: resumed runs find their replies by the prompt), the
 * data-sheet peaks when the name is known, and the driver; for the CPU
 * what the interpreter does and does not do. Owned. */
char *agents_device_text(const json_t *facts, const char *device);
/* agents_device_text plus what the task moves (its input and output bytes)
 * and, on a GPU, the device memory PyTorch's own forward peaked at: the
 * scale a kernel's workspaces are judged by. Owned. */
char *agents_task_device_text(const json_t *facts, const char *device, const json_t *baseline);
/* What torch.compile makes of the task (the baseline's "compile_summary",
 * which the worker reads from Inductor's output code): each launch in
 * order, generated kernel or library call, the operations it covers and
 * its device time where measured, then the task's roofline bound against
 * torch.compile's time; NULL when the baseline has no summary. Part of
 * agents_task_device_text. Owned. */
char *agents_compile_text(const json_t *baseline);
/* The precision rule for a run's precision ("fp32" or "tf32"), or for a
 * task that computes in fp16/bf16 (`half`: the rule follows its dtypes),
 * and the tolerance in force: `tolerance` is the baseline's list of what
 * the evaluator applies to each output ([{"dtype", "atol", "rtol",
 * "exact"}]), `atol` and `rtol` (>= 0: the run's --atol, --rtol) in place
 * of its defaults; without either the prompt says the evaluator's default
 * applies, never a figure of its own. Owned. */
char *agents_precision_note(const char *precision, int half, const json_t *tolerance, double atol, double rtol);

#endif
