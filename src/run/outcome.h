/* outcome.h: a run's outcome, decided once for every command: the counts, the run's status, the exit code and its line. */
#ifndef EGG_OUTCOME_H
#define EGG_OUTCOME_H

#include <math.h>

#include "../util/err.h"
#include "task.h"

/* The run's tasks counted by what became of them. */
struct run_outcome {
	int tasks;
	int found;		/* finished with a kernel (a judged pair: passed) */
	int failed;		/* finished without a pipeline: a bad task */
	int waiting;		/* not finished: replies awaited in the spool */
	int stopped;		/* not finished: an infrastructure failure (the store among them) */
	int no_memory;		/* of those, tasks that cannot fit in their device's memory (their stop's
				 * cause STOP_NO_MEMORY): running them again will not help */
	int key_refused;	/* of those, tasks whose API key the endpoint refused (STOP_KEY): the
				 * user's input, exit 2; running again helps once the key is set */
	const char *first_stop;	/* why the first stopped task stopped, or NULL (borrowed from the run) */
	const char *key_stop;	/* why the first task stopped on a refused key, or NULL: quoted before first_stop */
	const char *run_stop;	/* why the run itself stopped though no task did (run_stop_reason), or NULL */
};

/* Counts `n` tasks; `run_stop`: why the run itself stopped, or NULL. */
void outcome_count(const struct task_state *tasks, int n, const char *run_stop, struct run_outcome *o);
/* The status the store records for the run: "stopped" (a task stopped, or
 * the run's own record could not be written), "waiting" or "done". */
const char *run_outcome_status(const struct run_outcome *o);
/* Whether the run has a verdict: every task finished and its record is whole. */
int run_outcome_finished(const struct run_outcome *o);

/* When a finished run is a success (exit 0). */
enum outcome_rule {
	OUTCOME_ANY_FOUND,	/* a task found a kernel (egg bench, egg optimize --split) */
	OUTCOME_ALL_PASSED,	/* every pair passed (egg eval --batch) */
	OUTCOME_ONE_TASK,	/* the run's one task found a kernel; a bad task is exit 2 (egg optimize) */
};

/* How a command names what its run is made of, for the outcome's line. */
struct outcome_words {
	const char *unit;	/* one of the run's tasks: "task", "subgraph task", "pair" */
	const char *subject;	/* what the run works on: "run ID", "'prog.py'", the task's path */
	const char *resume;	/* the command that goes on ("egg bench --resume ID"), or NULL: the same command again */
	const char *spool;	/* the --llm-spool folder, or NULL */
};

/*
 * The run's exit code (docs/design.md), its one line on stderr when it is
 * not 0: stopped (3, how to go on) before waiting (4, what is awaited and
 * where) before the rule's verdict (1 or, for a bad single task, 2).
 */
int run_outcome_exit(const struct run_outcome *o, const struct task_state *tasks, enum outcome_rule rule,
		     const struct outcome_words *w);
/* Whether the run ends on its user's input by the rule (exit 2: the one
 * task of egg optimize is unusable): its status is then "refused", not
 * "done" (run_exit_code records it), since there is nothing to resume. */
int run_outcome_refused(const struct run_outcome *o, enum outcome_rule rule);
/* The status the store records for a run whose command ended on the
 * pending error of kind `k` before its outcome: "refused" for the user's
 * input (ERR_INPUT: fix it and run again, a new run), "stopped" for an
 * infrastructure failure (resume it), NULL for any other kind (the
 * outcome's status stands). */
const char *run_status_on_error(enum err_kind k);

/*
 * What a whole program's run made of the program (egg optimize --split),
 * as run_whole_program decides it: typed values, not its record read back.
 * The strings are owned (program_verdict_clear).
 */
struct program_verdict {
	int finished;		/* every subgraph task finished, and the program was composed and checked */
	int passed;		/* the composed program passed end to end */
	int unchanged;		/* no kernel went into it: it is the program itself */
	int judged;		/* the user's clock decides on speed (a GPU; EGG_JUDGE_CPU_SPEED=1) */
	int faster;		/* the drop-in's best way beats the original's, clear of the noise */
	int within_noise;	/* not faster, though its median is lower */
	double original_ms, dropin_ms;	/* each side's best way, wall clock per forward; NaN: none ran */
	char *original_way, *dropin_way;	/* which ways those were, or NULL */
	char *reason;		/* why the end-to-end check failed, or NULL */
	char *composed;		/* the composed program (RUN_DIR/program.py), or NULL */
};
#define PROGRAM_VERDICT_INIT { 0, 0, 0, 0, 0, 0, NAN, NAN, NULL, NULL, NULL, NULL }
void program_verdict_clear(struct program_verdict *v);

/* Whether the run gives a drop-in (-o is written, exit 0): the run
 * finished, the program passed end to end with kernels in it, and it is
 * not slower than the original by the user's clock. */
int program_outcome_dropin(const struct run_outcome *o, const struct program_verdict *v);
/*
 * The exit code of `egg optimize --split` with its one line: the composed
 * program without kernels failing is egg's own fault (3); then the run's
 * outcome as egg bench's (stopped, waiting, no kernel found); then kernels
 * found but none in the program, or a drop-in not faster than the original
 * (1); 0 exactly when program_outcome_dropin. `output`: the file -o names,
 * or NULL, for the line.
 */
int program_outcome_exit(const struct run_outcome *o, const struct program_verdict *v, const struct outcome_words *w,
			 const char *output);

#endif
