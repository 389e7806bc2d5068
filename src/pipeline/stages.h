/* stages.h: the pipeline's stages as data: objective, rules, focus metrics,
 * and which agents' prompts improve a kernel in them. */
#ifndef EGG_STAGES_H
#define EGG_STAGES_H

#include <stddef.h>

#include "../agents/prompts.h"
#include "../agents/reply.h"

enum stage_id {
	STAGE_SEED,
	STAGE_REFINE,
	STAGE_MAPPING,
	STAGE_TILING,
	STAGE_MEMORY,
	STAGE_COMBINE,		/* the tuning changes that each won side by side, in one kernel (pipeline.c) */
	STAGE_COUNT,
};

/* The most seeds and the most candidates kept through a stage a run may
 * ask for (--seeds, --top-k): the pipeline's arrays are sized by them. */
#define PIPELINE_MAX_SEEDS 16
#define PIPELINE_MAX_TOP_K 8
/* Refinement rounds per seed and seeds written afresh, at most. */
#define PIPELINE_MAX_REFINE_ROUNDS 8
#define PIPELINE_MAX_FRESH_SEEDS 4

struct stage {
	enum stage_id id;
	const char *name;		/* "seed", "refine", "mapping", "tiling", "memory" */
	const char *title;		/* for tables: "Parallel mapping" */
	const char *objective;		/* what this stage may change, for the prompts */
	const char *rules;		/* constraints the code agent must keep */
	const char *focus[4];		/* metric keys the profile agent should read first */
	/* For the stages that improve a parent (refine and the three tuning
	 * stages): the profile agent's prompt and reply schema, the code
	 * agent's prompt, the kind recorded for their candidates' first
	 * evaluation, and whether the agents see the decisions made so far. */
	enum prompt_id analysis_prompt;
	enum reply_schema analysis_schema;
	enum prompt_id code_prompt;
	const char *step_kind;
	int sees_decisions;
	int tuning;			/* one of the hardware-tuning stages (--stages, --no-hw-tune) */
};

extern const struct stage stages[STAGE_COUNT];
/* The tuning stages' names in order, joined by `sep`, into `out` (n bytes): "mapping,tiling,memory". */
const char *stage_tuning_names(const char *sep, char *out, size_t n);
/* The stage called `name`, or NULL. */
const struct stage *stage_by_name(const char *name);

#endif
