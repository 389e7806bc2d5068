/* outcome.h: a run's outcome, decided once for every command: the counts, the run's status, the exit code and its line. */
#ifndef EGG_OUTCOME_H
#define EGG_OUTCOME_H

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
	const char *first_stop;	/* why the first stopped task stopped, or NULL (borrowed from the run) */
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

#endif
