/* decisions.h: the pipeline's decisions as data (a kind and its fields), and the prompts' words for them. */
#ifndef EGG_DECISIONS_H
#define EGG_DECISIONS_H

#include <jansson.h>

/*
 * What the pipeline decided, by kind. A decision is a JSON object:
 * {"stage", "event": "decision", "kind": NAME, the kind's fields, "text"}.
 * The fields are the facts (candidate ids, times in ms, counts, percentages);
 * "text" is the log's sentence for people, made by the pipeline. Prompts are
 * made from the kind and the fields only (decisions_prompt_text), so the
 * log can be reworded without changing a prompt or a reply-cache key.
 */
enum decision_kind {
	DEC_STOPPED,		/* cause ("waiting", "budget", "llm"), reason */
	DEC_AT_SOL,		/* candidate, sol_pct, after_stage, threshold_pct, skipped_calls, tokens_saved */
	DEC_TIMING_DISTRUSTED,	/* candidate, kernel_ms, ncu_ms */
	DEC_SEED_EXISTING,	/* kernel_ms */
	DEC_SEED_NO_REPLY,	/* seed */
	DEC_SEED_DROPPED,	/* seed, repairs */
	DEC_SEEDS_VALID,	/* valid, candidate, kernel_ms */
	DEC_NO_VALID_SEED,	/* - */
	DEC_NOT_REFINED_AT_SOL,	/* candidate, sol_pct, threshold_pct */
	DEC_SELECTED,		/* candidate, kernel_ms */
	DEC_NO_PLAN,		/* candidate */
	DEC_NO_CHANGE,		/* candidate, bottleneck: the profile agent answered "change": "no" */
	DEC_NOT_WORTH,		/* candidate, bottleneck: it answered "worth_optimizing": "no" */
	DEC_RULE_NO_CHANGE,	/* candidate, rule, says, figures (text), and each figure read: a rule on the
				 * profile decided (pipeline/ask.h); no call was made */
	DEC_NO_KERNEL,		/* candidate */
	DEC_UNCHANGED,		/* candidate: the code agent returned the same code */
	DEC_INVALID,		/* candidate, repairs */
	DEC_ACCEPTED,		/* candidate, kernel_ms, parent_ms */
	DEC_NOT_FASTER,		/* candidate, kernel_ms, parent_ms */
	DEC_EXTRA_ROUND,	/* candidate, round, rounds, why: a refinement round beyond the first, given by the
				 * task's effort (the time at stake in a whole program, or --refine-rounds) */
	DEC_FRESH_SEED,		/* seed, best_ms, why: refinement stalled, a new seed with another algorithm */
	DEC_KIND_COUNT
};

/* The kind's stable name ("accepted", "not_faster", ...), as records carry it. */
const char *decision_name(enum decision_kind k);
/* A decision of kind `k` in `stage` with `fields` (stolen; NULL: none) and
 * the log's sentence `text` (NULL: the kind's own, its fields put in).
 * Owned. */
json_t *decision_new(enum decision_kind k, const char *stage, json_t *fields, const char *text);
/*
 * `tmpl` with each {field} of `d` put in its place: a string as it is, a
 * whole number as one, a field ending in _pct to a whole percent, other
 * numbers to 4 decimals, a missing or null field as "not stated". Owned.
 */
char *decision_render(const json_t *d, const char *tmpl);
/* "Decisions so far" for a prompt: "STAGE: WORDS; ..." from the kinds and
 * fields of `decisions` (their "text" is never read), or "none yet". Owned. */
char *decisions_prompt_text(const json_t *decisions);

#endif
