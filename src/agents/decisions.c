/* decisions.c: decision records: each kind's name, the words the prompts use for it, and its log sentence. */
#include "decisions.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/err.h"
#include "../util/template.h"

/*
 * Each kind of decision, in one row: its stable name (records carry it),
 * what a later prompt says about it, and the log's sentence. The prompt
 * words are prompt text: changing them changes prompts (and so reply-cache
 * keys). The log's sentence is for people (the run folder's
 * decisions.jsonl, the store): nothing reads it back, prompts are made from
 * the kinds and fields (decisions_prompt_text).
 */
static const struct {
	const char *name;
	const char *prompt;
	const char *log;
} kinds[DEC_KIND_COUNT] = {
	[DEC_STOPPED] = { "stopped", "the search stopped ({cause})",
		"{reason}" },
	[DEC_AT_SOL] = { "at_sol", "{candidate} reached {sol_pct}% of the roofline bound: later stages skipped",
		"{reason}" },
	[DEC_TIMING_DISTRUSTED] = { "timing_distrusted",
				    "{candidate} discarded: timed at {kernel_ms} ms but its kernels took {ncu_ms} ms of "
				    "GPU time under Nsight Compute",
		"{candidate} discarded: timed at {kernel_ms} ms, but Nsight Compute measured "
		  "{ncu_ms} ms of GPU time in its kernels; its timing is not trusted" },
	[DEC_SEED_EXISTING] = { "seed_existing", "seed 1 is the user's existing kernel ({kernel_ms} ms)",
		"seed 1 is the existing kernel ({kernel_ms} ms)" },
	[DEC_SEED_NO_REPLY] = { "seed_no_reply", "seed {seed} gave no usable reply",
		"seed {seed} discarded: no usable reply" },
	[DEC_SEED_DROPPED] = { "seed_dropped", "seed {seed} still failed after {repairs} repair(s)",
		"seed {seed} dropped: still failing after {repairs} repair(s)" },
	[DEC_SEEDS_VALID] = { "seeds_valid", "{valid} seed(s) passed; the fastest, {candidate}, runs in {kernel_ms} ms",
		"{valid} valid seed(s); fastest {candidate} at {kernel_ms} ms" },
	[DEC_NO_VALID_SEED] = { "no_valid_seed", "no seed passed",
		"no valid seed: the task fails" },
	[DEC_NOT_REFINED_AT_SOL] = { "not_refined_at_sol",
				     "{candidate} left as it is at {sol_pct}% of the roofline bound",
		"{candidate} not refined: it runs at {sol_pct}% of the roofline bound "
		  "(--stop-at-sol {threshold_pct})" },
	[DEC_SELECTED] = { "selected", "{candidate} is the best so far ({kernel_ms} ms)",
		"selected {candidate} at {kernel_ms} ms" },
	[DEC_NO_PLAN] = { "no_plan", "{candidate} unchanged: no usable plan came back",
		"{candidate} kept: the profile agent gave no usable plan" },
	[DEC_NO_CHANGE] = { "no_change", "{candidate} unchanged: no change needed here ({bottleneck})",
		"{candidate} kept as is: nothing to change in this stage ({bottleneck})" },
	[DEC_NOT_WORTH] = { "not_worth", "{candidate} unchanged: judged not worth optimizing ({bottleneck})",
		"{candidate} kept as is: not worth optimizing ({bottleneck})" },
	[DEC_RULE_NO_CHANGE] = { "rule_no_change", "{candidate} unchanged: {says}",
		"{candidate} kept as is without a call: the {rule} rule decided ({says}: {figures_text})" },
	[DEC_NO_KERNEL] = { "no_kernel", "{candidate} unchanged: no usable kernel came back",
		"{candidate} kept: no usable kernel" },
	[DEC_UNCHANGED] = { "unchanged", "{candidate} unchanged: the new code was the same code",
		"{candidate} kept: the code agent returned it unchanged (nothing to evaluate)" },
	[DEC_INVALID] = { "invalid", "{candidate} failed its checks after {repairs} repair(s)",
		"{candidate} rejected: invalid after {repairs} repair(s)" },
	[DEC_ACCEPTED] = { "accepted", "{candidate} kept: {kernel_ms} ms against its parent's {parent_ms} ms",
		"{candidate} accepted ({kernel_ms} ms vs {parent_ms} ms)" },
	[DEC_NOT_FASTER] = { "not_faster",
			     "{candidate} dropped: {kernel_ms} ms against its parent's {parent_ms} ms is not faster",
		"{candidate} rejected: not faster than its parent ({kernel_ms} ms vs {parent_ms} ms)" },
	[DEC_EXTRA_ROUND] = { "extra_round", "refinement round {round} of {rounds} on {candidate}",
		"refinement round {round} of {rounds} on {candidate}: {why}" },
	[DEC_FRESH_SEED] = { "fresh_seed",
			     "refinement stalled at {best_ms} ms: seed {seed} is written with another algorithm",
		"seed {seed} written afresh: refinement stalled at {best_ms} ms ({why})" },
};

const char *decision_name(enum decision_kind k)
{
	return (unsigned)k < DEC_KIND_COUNT ? kinds[k].name : "?";
}

json_t *decision_new(enum decision_kind k, const char *stage, json_t *fields, const char *text)
{
	json_t *d = json_pack("{s:s, s:s, s:s}", "stage", stage, "event", "decision", "kind", decision_name(k));
	if (fields)
		json_object_update_missing(d, fields);
	json_decref(fields);
	if (text || (unsigned)k >= DEC_KIND_COUNT) {
		json_object_set_new(d, "text", json_string(text ? text : ""));
	} else {
		char *line = decision_render(d, kinds[k].log);
		json_object_set_new(d, "text", json_string(line));
		free(line);
	}
	return d;
}

struct field_ctx {
	const json_t *d;
	char num[64];
};

static const char *field(const char *name, void *arg)
{
	struct field_ctx *c = arg;
	const json_t *v = json_object_get(c->d, name);
	size_t n = strlen(name);
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v))
		snprintf(c->num, sizeof(c->num), "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v) && n > 4 && !strcmp(name + n - 4, "_pct"))
		snprintf(c->num, sizeof(c->num), "%.0f", json_real_value(v));
	else if (json_is_real(v))
		snprintf(c->num, sizeof(c->num), "%.4f", json_real_value(v));
	else
		return "not stated";
	return c->num;
}

char *decision_render(const json_t *d, const char *tmpl)
{
	struct buf out = BUF_INIT;
	struct field_ctx c = { d, "" };
	if (template_expand(tmpl, field, &c, &out) < 0) {
		/* Every field a template names is a field of its kind: a miss is
		 * egg's own bug, said in the text rather than lost. */
		buf_reset(&out);
		buf_addf(&out, "(%s)", err_msg());
		err_clear();
	}
	return buf_detach(&out);
}

char *decisions_prompt_text(const json_t *decisions)
{
	struct buf t = BUF_INIT;
	const json_t *d;
	size_t i;
	if (!json_array_size(decisions))
		return xstrdup("none yet");
	json_array_foreach(decisions, i, d) {
		const char *name = json_string_value(json_object_get(d, "kind")) ?: "";
		const char *tmpl = "{kind}";
		char *words;
		for (int k = 0; k < DEC_KIND_COUNT; k++)
			if (!strcmp(name, kinds[k].name))
				tmpl = kinds[k].prompt;
		words = decision_render(d, tmpl);
		buf_addf(&t, "%s%s: %s", i ? "; " : "", json_string_value(json_object_get(d, "stage")) ?: "?", words);
		free(words);
	}
	return buf_detach(&t);
}
