/* beat.h: a long phase's progress lines: each step said when it starts, repeated with its seconds while it lasts. */
#ifndef EGG_BEAT_H
#define EGG_BEAT_H

#include <stdio.h>

/* The most seconds a phase that lasts goes without a line. Ticks come
 * once a second (BEAT_TICK_S), so a repeat is due a tick early; a held
 * phase (an evaluation: a quick one says nothing) speaks after BEAT_HOLD_S,
 * leaving room for the time before its job began. */
#define BEAT_S 10.0
#define BEAT_TICK_S 1.0
#define BEAT_HOLD_S 7.0

/*
 * One phase's lines (a baseline, a split, an evaluation): the caller tells
 * it each step as it starts (the worker's progress lines) and ticks it while
 * it waits (worker.c calls the progress function with no step once a
 * second), each time with the seconds the job has run (the worker's clock:
 * a test gives its own); beat_due says when a line is due. A new step is
 * due at once, the same step again once BEAT_S has passed since the last
 * line; before `hold_s` of the phase nothing is (a quick evaluation says
 * nothing). Seconds that fall back (the phase's next job, on a clock of its
 * own) go on from where the last job's stopped. One thread at a time per
 * beat. `out` and `label` are for beat_progress only (borrowed; out NULL:
 * quiet).
 */
struct beat {
	FILE *out;
	const char *label;
	double hold_s;
	double base_s, last_s;	/* the jobs before this one; this one's latest seconds */
	double said_s;		/* the phase's seconds at the last line */
	char step[200];
};
#define BEAT_INIT { NULL, NULL, 0, 0, 0, 0, "" }

enum beat_line { BEAT_NONE, BEAT_NEW, BEAT_AGAIN };

/* The phase starts, in step `what` (said by the caller, or not). */
void beat_begin(struct beat *b, const char *what, double hold_s);
/* At `job_s` seconds of the job in hand, `step` starts (the same as the
 * last: nothing new) or, NULL, a tick: whether a line is due, and which.
 * A due line counts as said. */
enum beat_line beat_due(struct beat *b, const char *step, double job_s);
/* The step in hand, and the phase's seconds (at the last beat_due). */
const char *beat_step(const struct beat *b);
double beat_seconds(const struct beat *b);
/* A worker_progress_fn (eval/worker.h) for a struct beat: each due line
 * as "egg: LABEL, N s: STEP" on b->out. */
void beat_progress(void *beat, const char *step, double job_s);

#endif
