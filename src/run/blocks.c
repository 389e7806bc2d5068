/* blocks.c: the coarser cut of a whole program: per residual block, one task for the block or its subgraphs (blocks.h). */
#include "blocks.h"

#include <math.h>
#include <string.h>

#include "../program/program.h"
#include "../util/buf.h"
#include "../util/jsonnum.h"

/* A block must be able to win this many times what its subgraphs can. */
#define BLOCK_MARGIN 1.1

int cut_rule_of(const char *word)
{
	static const char *const words[] = { [CUT_AUTO] = "auto", [CUT_FINE] = "fine", [CUT_BLOCKS] = "blocks" };
	for (size_t i = 0; word && i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(word, words[i]))
			return (int)i;
	return -1;
}

json_t *blocks_rows(const json_t *plan)
{
	json_t *rows = json_array();
	const json_t *b, *sgs = json_object_get(plan, "subgraphs");
	size_t i, k;
	json_array_foreach(json_object_get(plan, "blocks"), i, b) {
		double share = 0, eager = 0;
		int known = 1;
		const json_t *x;
		json_array_foreach(json_object_get(b, "replaces"), k, x) {
			const json_t *sg = json_array_get(sgs, (size_t)json_integer_value(x));
			known &= !isnan(json_num(sg, "share")) && !isnan(json_num(sg, "eager_ms"));
			share += json_num(sg, "share");
			eager += json_num(sg, "eager_ms");
		}
		json_array_append_new(rows, json_pack("{s:O, s:s, s:s, s:b, s:O, s:o, s:o, s:O, s:o, s:s, s:n}",
						       "name", json_object_get(b, "name"),
						       "file", json_string_value(json_object_get(b, "file")),
						       "task", program_task_of(b), "block", 1,
						       "replaces", json_object_get(b, "replaces"),
						       "share", known ? json_real(share) : json_null(),
						       "eager_ms", known ? json_real(eager) : json_null(),
						       "occurrences", json_object_get(b, "occurrences") ?: json_null(),
						       "task_share", json_null(), "status", "task", "why"));
	}
	/* A block task's share: its occurrences' summed. */
	for (i = 0; i < json_array_size(rows); i++) {
		json_t *row = json_array_get(rows, i);
		double sum = 0;
		int known = 1;
		const json_t *o;
		json_array_foreach(rows, k, o)
			if (!strcmp(json_string_value(json_object_get(o, "task")),
				    json_string_value(json_object_get(row, "task")))) {
				known &= !isnan(json_num(o, "share"));
				sum += json_num(o, "share");
			}
		json_object_set_new(row, "task_share", known ? json_real(sum) : json_null());
	}
	return rows;
}

/* What the user runs for a row's task, one occurrence: the faster of its
 * eager and torch.compile times; NAN when not measured. */
static double bar_of(const json_t *row)
{
	double e = json_num(row, "task_eager_ms"), c = json_num(row, "task_compile_ms");
	return isnan(c) ? e : isnan(e) ? c : fmin(e, c);
}

/* What a row's task can win, one occurrence: its bar less its bound
 * (its bar alone without a bound). */
static double win_of(const json_t *row)
{
	double bar = bar_of(row), bound = json_num(row, "task_roofline_ms");
	return bound > 0 ? fmax(0, bar - bound) : bar;
}

/* The row of the first occurrence of `row`'s task, where its task's
 * baseline is measured (a repeat has none of its own). */
static const json_t *first_of(const json_t *rows, const json_t *row)
{
	const char *task = json_string_value(json_object_get(row, "task"));
	const json_t *o;
	size_t i;
	json_array_foreach(rows, i, o)
		if (task && !strcmp(json_string_value(json_object_get(o, "file")) ?: "", task))
			return o;
	return row;
}

/* The subgraph rows block row `b` spans that compute (not glue), summed:
 * their bar and what they can win, each by its task's baseline. */
static void spanned(const json_t *rows, const json_t *b, double *bar, double *win)
{
	const json_t *x;
	size_t k;
	*bar = *win = 0;
	json_array_foreach(json_object_get(b, "replaces"), k, x) {
		const json_t *sg = json_array_get(rows, (size_t)json_integer_value(x));
		if (!strcmp(json_string_value(json_object_get(sg, "status")) ?: "", "glue"))
			continue;
		sg = first_of(rows, sg);
		*bar += bar_of(sg);
		*win += win_of(sg);
	}
}

/* The decision for one distinct block task (its first occurrence `b`). */
static int choose_one(enum cut_rule rule, int cpu, double bwin, double fwin, struct buf *why)
{
	if (rule == CUT_FINE || rule == CUT_BLOCKS) {
		buf_addf(why, "--cut %s", rule == CUT_FINE ? "fine" : "blocks");
		return rule == CUT_BLOCKS;
	}
	if (cpu) {
		buf_adds(why, "on the CPU interpreter times say nothing of a GPU: the subgraphs (--cut blocks to try the "
			      "block)");
		return 0;
	}
	if (isnan(bwin) || isnan(fwin)) {
		buf_adds(why, "not measured: the subgraphs");
		return 0;
	}
	buf_addf(why, "the block can win %.4f ms over what the user runs (torch.compile's time less its roofline "
		      "bound), its subgraphs %.4f ms together: ", bwin, fwin);
	if (bwin >= BLOCK_MARGIN * fwin && bwin > 0) {
		buf_addf(why, "the block (%.2fx theirs; a kernel across its anchors keeps what crosses them on chip)",
			 fwin > 0 ? bwin / fwin : INFINITY);
		return 1;
	}
	buf_addf(why, "the subgraphs (the block would need %.1fx theirs)", BLOCK_MARGIN);
	return 0;
}

json_t *blocks_choose(json_t *rows, json_t *block_rows, enum cut_rule rule, int cpu,
		      void (*set_in_block)(json_t *row, const char *block_name))
{
	json_t *decisions = json_array(), *b, *o, *x;
	size_t i, k, j;
	json_array_foreach(block_rows, i, b) {
		const char *task = json_string_value(json_object_get(b, "task"));
		double fbar, fwin, bwin = win_of(b);
		struct buf why = BUF_INIT;
		int chosen;
		if (strcmp(task, json_string_value(json_object_get(b, "file"))))
			continue;	/* a repeat: its first occurrence decided */
		spanned(rows, b, &fbar, &fwin);
		chosen = choose_one(rule, cpu, isnan(bar_of(b)) ? NAN : bwin, fwin, &why);
		json_array_append_new(decisions, json_pack("{s:O, s:s, s:O, s:s, s:o, s:o, s:s}", "block",
							   json_object_get(b, "name"), "task", task, "occurrences",
							   json_object_get(b, "occurrences") ?: json_null(), "chosen",
							   chosen ? "block" : "subgraphs", "block_win_ms",
							   isnan(bwin) ? json_null() : json_real(bwin), "subgraphs_win_ms",
							   isnan(fwin) ? json_null() : json_real(fwin), "why", buf_str(&why)));
		buf_release(&why);
		if (!chosen)
			continue;
		/* Every occurrence of the chosen block task takes its subgraphs' place. */
		json_array_foreach(block_rows, k, o) {
			if (strcmp(json_string_value(json_object_get(o, "task")), task))
				continue;
			spanned(rows, o, &fbar, &fwin);
			json_object_set_new(o, "fine_bar_ms", isnan(fbar) ? json_null() : json_real(fbar));
			json_array_foreach(json_object_get(o, "replaces"), j, x) {
				json_t *sg = json_array_get(rows, (size_t)json_integer_value(x));
				if (strcmp(json_string_value(json_object_get(sg, "status")) ?: "", "glue"))
					set_in_block(sg, json_string_value(json_object_get(o, "name")));
			}
		}
	}
	/* The chosen blocks' rows join the program's (after its subgraphs). */
	json_array_foreach(block_rows, i, b)
		if (json_object_get(b, "fine_bar_ms"))
			json_array_append(rows, b);
	return decisions;
}
