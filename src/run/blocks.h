/* blocks.h: the coarser cut of a whole program: per residual block, one task for the block or its subgraphs, chosen by what each can win. */
#ifndef EGG_BLOCKS_H
#define EGG_BLOCKS_H

#include <jansson.h>

/* How egg optimize --split cuts the blocks the split found (--cut). */
enum cut_rule {
	CUT_AUTO,	/* per block, by what each cut can win (on a GPU; on the CPU the subgraphs) */
	CUT_FINE,	/* the subgraphs, always */
	CUT_BLOCKS,	/* every block, always */
};

/* --cut's word ("auto", "fine", "blocks") as a rule; -1 for another. */
int cut_rule_of(const char *word);

/*
 * One row per block occurrence of `plan` (its "blocks"), as the program's
 * subgraph rows are: "name", "file", "task", "block": true, "replaces"
 * (the subgraphs' indexes), "share" and "eager_ms" (its subgraphs' in the
 * program), "occurrences", "task_share". Owned.
 */
json_t *blocks_rows(const json_t *plan);

/*
 * Chooses, per distinct block task, between the block and its subgraphs,
 * from the rows' measured figures ("task_eager_ms", "task_compile_ms",
 * "task_roofline_ms": one occurrence in its own task; block rows' from the
 * block's task): what the user runs (the faster of eager and
 * torch.compile) less the roofline bound is what a cut can win; the block
 * is chosen when it can win at least BLOCK_MARGIN times what its
 * subgraphs can together (one kernel across anchors is harder to write
 * than one per anchor). With CUT_FINE or CUT_BLOCKS the rule decides,
 * and on the CPU (`cpu`) CUT_AUTO keeps the subgraphs (interpreter times
 * say nothing of a GPU). A chosen block's rows are appended to `rows`
 * (status "task", "fine_bar_ms": what its subgraphs take run their best
 * way, the bar its kernel must beat too), and the subgraph rows it spans
 * become "in_block" (not optimized on their own; status set by
 * `set_in_block`). Returns the decisions ([{"block", "task",
 * "occurrences", "chosen": "block" | "subgraphs", "block_win_ms",
 * "subgraphs_win_ms", "why"}]), owned.
 */
json_t *blocks_choose(json_t *rows, json_t *block_rows, enum cut_rule rule, int cpu,
		      void (*set_in_block)(json_t *row, const char *block_name));

#endif
