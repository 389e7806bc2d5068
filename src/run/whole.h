/* whole.h: a whole program in one run: split it, optimize the subgraphs worth it, compose, verify end to end. */
#ifndef EGG_WHOLE_H
#define EGG_WHOLE_H

#include <jansson.h>

#include "run.h"

struct whole_opts {
	double min_share;	/* subgraphs below this share of the eager time are not optimized (0.02) */
	int progress;		/* enum run_progress of the subgraph tasks */
};

/*
 * `egg optimize TASK.py --split` on an open (or resumed) run: splits the
 * program into RUN_DIR/split (a resumed run keeps its split), registers the
 * subgraphs worth optimizing as the run's tasks (share >= min_share; one
 * already at the speed of light in PyTorch is skipped by its task, and said
 * so), runs them, composes RUN_DIR/program.py from the kernels that passed
 * and beat their subgraph's eager time (the others stay PyTorch), and
 * evaluates it against the program end to end (the rule against PyTorch
 * compute waived when parts stay PyTorch). When the whole fails although
 * its parts passed, kernels are added one by one in order of share, each
 * kept only when the whole still passes.
 *
 * Returns the program summary (owned; also RUN_DIR/program.json, which the
 * reports read): {"task", "split_dir", "composed", "subgraphs": [{"name",
 * "file", "share", "eager_ms", "status", "why", "kernel_ms",
 * "speedup_eager", "sol_pct", "roofline_ms", "used"}], "end_to_end":
 * {verdict, stage, reason, kernel_ms, eager_ms, compile_ms, speedup_eager,
 * speedup_compile, allow_torch}, "amdahl": {"parts_speedup",
 * "bound_speedup"}, "finished": bool}; NULL with the error (ERR_INPUT: the
 * program cannot be split). When a subgraph task has not finished
 * (waiting, stopped) there is no composition yet: "finished" is false.
 */
json_t *run_whole_program(struct run *r, const char *task_path, const struct whole_opts *wo);

#endif
