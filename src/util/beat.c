/* beat.c: a long phase's progress lines (beat.h). */
#include "beat.h"

#include <string.h>

void beat_begin(struct beat *b, const char *what, double hold_s)
{
	b->hold_s = hold_s;
	b->base_s = b->last_s = b->said_s = 0;
	snprintf(b->step, sizeof(b->step), "%s", what ? what : "");
}

enum beat_line beat_due(struct beat *b, const char *step, double job_s)
{
	enum beat_line kind = BEAT_NONE;
	double now;
	if (job_s < b->last_s)	/* a new job of the phase: its own clock */
		b->base_s += b->last_s;
	b->last_s = job_s;
	now = b->base_s + job_s;
	if (step && strncmp(step, b->step, sizeof(b->step) - 1)) {
		snprintf(b->step, sizeof(b->step), "%s", step);
		/* A step held back (a quick phase's) is said once the hold
		 * ends, by a later tick, as a repeat. */
		if (now >= b->hold_s)
			kind = BEAT_NEW;
	}
	/* Repeats; a held phase's first line when its hold ends. */
	if (kind == BEAT_NONE && now >= b->hold_s &&
	    (now - b->said_s >= BEAT_S - BEAT_TICK_S || (b->hold_s > 0 && b->said_s == 0)))
		kind = BEAT_AGAIN;
	if (kind != BEAT_NONE)
		b->said_s = now;
	return kind;
}

const char *beat_step(const struct beat *b)
{
	return b->step;
}

double beat_seconds(const struct beat *b)
{
	return b->base_s + b->last_s;
}

void beat_progress(void *beat, const char *step, double job_s)
{
	struct beat *b = beat;
	const char *label = b->label ? b->label : "egg", *text = b->step;
	size_t n = strlen(label);
	if (beat_due(b, step, job_s) == BEAT_NONE || !b->out)
		return;
	if (!strncmp(text, label, n) && !strncmp(text + n, ": ", 2))	/* "split: tracing" under "split" */
		text += n + 2;
	fprintf(b->out, "egg: %s, %.0f s: %s\n", label, beat_seconds(b), text);
	fflush(b->out);
}
