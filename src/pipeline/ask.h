/* ask.h: when a tuning stage asks the model: rules on the kernel's measured profile under which
 * the stage records "no change" with the figures that decided it, and makes no call. */
#ifndef EGG_ASK_H
#define EGG_ASK_H

#include <jansson.h>

#include "stages.h"

/* One condition: the profile's aggregate figure `metric` (an ncu.h key) is
 * at least `at_least`. */
struct ask_cond {
	const char *metric;
	double at_least;
};

/*
 * A rule: when every condition of `all` holds and at least one of `any`
 * (when it has any), stage `stage` has nothing to decide for the kernel.
 * A figure the profile lacks never holds: without a profile (the CPU,
 * --no-profile, ncu missing) every stage asks.
 */
struct ask_rule {
	enum stage_id stage;
	const char *name;		/* "grid-fills-gpu": records and reports carry it */
	const char *says;		/* what it found, for the log and the prompts that follow */
	struct ask_cond all[3];		/* ended by a NULL metric */
	struct ask_cond any[3];
};

extern const struct ask_rule ask_rules[];
extern const size_t ask_nrules;

/*
 * The rule under which stage `st` need not ask about a kernel whose profile
 * (a profile_candidate result) is `profile`, or NULL when the facts leave
 * something to decide. When a rule decides, *figures (may be NULL) gets the
 * figures it read, {metric: value} (owned).
 */
const struct ask_rule *ask_decided(enum stage_id st, const json_t *profile, json_t **figures);

#endif
