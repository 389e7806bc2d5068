/* prompts.h: the prompt templates, one per agent and mode, and their rendering. */
#ifndef EGG_PROMPTS_H
#define EGG_PROMPTS_H

#include "../util/buf.h"

enum prompt_id {
	P_CODE_SEED,
	P_CODE_REFINE,
	P_CODE_TUNE,
	P_CODE_REPAIR,
	P_CODE_COMBINE,		/* tuning changes made side by side, brought into one kernel */
	P_PROFILE_REFINE,
	P_PROFILE_MAPPING,
	P_PROFILE_TILING,
	P_PROFILE_MEMORY,
	P_DEBUG,
	/* --single-agent: the code agent reads the evidence itself. */
	P_SINGLE_OPTIMIZE,
	P_SINGLE_REPAIR,
	P_COUNT,
};

struct prompt_template {
	enum prompt_id id;
	const char *name;	/* "code.seed", recorded with every call */
	const char *system;
	const char *user;
};

extern const struct prompt_template prompt_templates[P_COUNT];

/* A name/value list the templates draw their {names} from. */
struct prompt_vars {
	const char *names[24];
	const char *values[24];
	int n;
};

void prompt_set(struct prompt_vars *v, const char *name, const char *value);
/* Renders a template's system and user parts. Returns 0, or -1 when the
 * template names a variable that was not set (a programming error). */
int prompt_render(enum prompt_id id, const struct prompt_vars *v, struct buf *system, struct buf *user);

#endif
