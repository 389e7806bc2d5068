/* stages.h: the pipeline's stages as data: objective, focus metrics, rules. */
#ifndef EGG_STAGES_H
#define EGG_STAGES_H

enum stage_id {
	STAGE_SEED,
	STAGE_REFINE,
	STAGE_MAPPING,
	STAGE_TILING,
	STAGE_MEMORY,
	STAGE_COUNT,
};

struct stage {
	enum stage_id id;
	const char *name;		/* "seed", "refine", "mapping", "tiling", "memory" */
	const char *title;		/* for tables: "Parallel mapping" */
	const char *objective;		/* what this stage may change, for the prompts */
	const char *rules;		/* constraints the code agent must keep */
	const char *focus[4];		/* metric keys the profile agent should read first */
};

extern const struct stage stages[STAGE_COUNT];
/* The stage called `name`, or NULL. */
const struct stage *stage_by_name(const char *name);

#endif
