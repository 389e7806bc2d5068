/* whole.h: a whole program in one run: split it, optimize the subgraphs worth it, compose, verify end to end. */
#ifndef EGG_WHOLE_H
#define EGG_WHOLE_H

#include <jansson.h>

#include "blocks.h"
#include "run.h"

/* What became of a subgraph of the program (its row's "status", by name). */
enum subgraph_outcome {
	SG_GLUE,		/* views only: stays PyTorch */
	SG_SKIPPED,		/* under --min-share, or beyond --max-subgraphs */
	SG_TASK,		/* a task of the run, not yet judged */
	SG_WAITING,		/* its task waits for replies */
	SG_STOPPED,		/* its task stopped on an infrastructure failure */
	SG_AT_SOL,		/* PyTorch already at the speed of light: no kernel sought */
	SG_NO_KERNEL,		/* its task found no kernel */
	SG_SLOWER,		/* its kernel passed but is not faster than eager */
	SG_OPTIMIZED,		/* its kernel passed and is faster */
	SG_FAILS_IN_PROGRAM,	/* its kernel passed alone but the whole failed with it */
	SG_NOT_TRIED,		/* the whole failed, and it was beyond the kernels tried one by one */
	SG_IN_BLOCK,		/* a block chosen for the coarser cut runs it (blocks.h): no task of its own */
	SG_UNKNOWN,		/* a name this egg does not know (an older record) */
};
/* "glue", "skipped", "task", "waiting", "stopped", "at_sol", "no_kernel",
 * "slower", "optimized", "fails_in_program", "not_tried", "in_block": the stable names
 * records and reports carry; the "why" beside them is prose for people. */
const char *subgraph_outcome_name(enum subgraph_outcome oc);
enum subgraph_outcome subgraph_outcome_of(const char *name);

/* The Amdahl line of a program's subgraph rows: {"parts_speedup",
 * "best_speedup" (against the faster of eager and torch.compile, each part
 * compiled at its task's ratio or the program's `compile_ratio`),
 * "bound_speedup", "basis", ...}, from each row's times, "used" and
 * outcome name (never its "why"). Owned. */
json_t *whole_amdahl(const json_t *rows, double compile_ratio, int cpu);

/* Whether the drop-in's best way ({"wall_ms", "wall_rounds_ms"}) beats the
 * original's clear of the noise: its slowest round is faster than the
 * original's fastest (a way without rounds counts its one figure). */
int whole_clearly_faster(const json_t *original, const json_t *dropin);

struct whole_opts {
	double min_share;	/* subgraphs below this share of the eager time are not optimized (0.02) */
	int max_tasks;		/* --max-subgraphs: at most this many distinct tasks, most time left after torch.compile first (0: all) */
	int progress;		/* enum run_progress of the subgraph tasks */
	int program_calls;	/* the model calls spread over the tasks by time at stake (effort.h); 0: every task
				 * what the flags give */
	enum cut_rule cut;	/* the blocks or their subgraphs (--cut) */
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
 * "file", "task" (the task it is optimized as: a repeated subgraph's is its
 * first occurrence's, whose kernel serves it), "occurrences", "task_share",
 * "share", "eager_ms", "status", "why", "kernel_ms",
 * "speedup_eager", "sol_pct", "roofline_ms", "used"}], "end_to_end":
 * {verdict, stage, reason, kernel_ms, eager_ms, compile_ms, speedup_eager,
 * speedup_compile, allow_torch}, "amdahl": {"parts_speedup",
 * "bound_speedup"}, "finished": bool, "unchanged": true and "why_unchanged"
 * when no kernel went into the program (its end-to-end speedups are null:
 * the program against itself)}; NULL with the error (ERR_INPUT: the
 * program cannot be split; ERR_INFRA: program.json could not be written,
 * and the run is stopped, run_mark_stopped). When a subgraph task has not finished
 * (waiting, stopped) there is no composition yet: "finished" is false.
 * *v (PROGRAM_VERDICT_INIT before) gets what the run decided, as typed
 * values (outcome.h): outcome.c makes the exit code and whether -o is
 * written from them, never from the record.
 */
json_t *run_whole_program(struct run *r, const char *task_path, const struct whole_opts *wo,
			  struct program_verdict *v);

#endif
