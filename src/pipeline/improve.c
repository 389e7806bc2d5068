/* improve.c: one improvement step (refinement or a tuning stage): the profile agent's plan, the code agent's kernel, the verdict. */
#include "pipe.h"
#include "accept.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../agents/decisions.h"
#include "ask.h"
#include "../agents/facts.h"
#include "../profile/profile.h"
#include "../util/beat.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/hash.h"
#include "../util/timeutil.h"
#include "../util/jsonnum.h"

/* The next line of s from *at without its trailing blanks: its length; *at
 * moves past it. Returns -1 at the end. */
static long next_line(const char *s, size_t *at, const char **line)
{
	size_t start = *at, end;
	if (!s[start])
		return -1;
	end = start;
	while (s[end] && s[end] != '\n')
		end++;
	*at = s[end] ? end + 1 : end;
	*line = s + start;
	while (end > start && (s[end - 1] == ' ' || s[end - 1] == '\t' || s[end - 1] == '\r'))
		end--;
	return (long)(end - start);
}

/* Whether two kernels are the same code: equal line by line up to trailing
 * blanks, blank lines skipped (indentation, which Python reads, counts). */
static int same_code(const char *a, const char *b)
{
	size_t ia = 0, ib = 0;
	for (;;) {
		const char *la = NULL, *lb = NULL;
		long na, nb;
		while ((na = next_line(a, &ia, &la)) == 0)
			;
		while ((nb = next_line(b, &ib, &lb)) == 0)
			;
		if (na < 0 || nb < 0)
			return na < 0 && nb < 0;
		if (na != nb || memcmp(la, lb, (size_t)na))
			return 0;
	}
}

/*
 * A new kernel `src` (owned) written from `parent` in stage `st`, judged:
 * the same code is no candidate; otherwise it is validated (with repairs)
 * and kept only when valid, faster than `parent` by the acceptance rule,
 * and its timing confirmed. Every outcome is recorded. Returns the kept
 * candidate, or NULL. `plan` (may be NULL) is the plan it was written from.
 */
struct cand *pipe_judge(struct pipe *p, const struct stage *st, const struct cand *parent, const char *id,
			  char *src, const char *plan)
{
	struct cand *c;
	int better;
	if (same_code(src, parent->source)) {
		pipe_decide(p, st->name, DEC_UNCHANGED, pipe_about(parent->id));
		free(src);
		return NULL;
	}
	if (!(c = pipe_new_cand(p, id, parent->id, st->name, src)))
		return NULL;
	c->plan = plan ? xstrdup(plan) : NULL;
	pipe_validate(p, c, p->o->repairs, st->step_kind);
	if (!c->valid) {
		if (!p->stop)
			pipe_decide(p, st->name, DEC_INVALID, json_pack("{s:s, s:i}", "candidate", c->id, "repairs", p->o->repairs));
		return NULL;
	}
	better = pipeline_faster(c->ms, c->cv, parent->ms, parent->cv, p->env->eval.iters);
	if (better && !pipe_timing_confirmed(p, c))
		return NULL;
	pipe_step(p, c, "selection", 1, better, better ? "faster than its parent" : "not faster than its parent");
	pipe_decide(p, st->name, better ? DEC_ACCEPTED : DEC_NOT_FASTER,
	       json_pack("{s:s, s:f, s:f}", "candidate", c->id, "kernel_ms", c->ms, "parent_ms", parent->ms));
	return better ? c : NULL;
}

/*
 * Whether a rule on the parent's profile decides stage `st` without the
 * model (ask.h): then the decision is recorded with the figures it read and
 * the calls it saved, and 1 is returned.
 */
static int rule_decides(struct pipe *p, const struct stage *st, struct cand *parent)
{
	json_t *figures, *v;
	struct buf text = BUF_INIT;
	const char *metric;
	const struct ask_rule *r = ask_decided(st->id, pipe_profile(p, parent), &figures);
	if (!r)
		return 0;
	json_object_foreach(figures, metric, v)
		buf_addf(&text, "%s%s %.2f", text.len ? ", " : "", metric, json_real_value(v));
	pipe_progress(p, st->name, "%s kept: the %s rule decided without a call", parent->id, r->name);
	pipe_decide(p, st->name, DEC_RULE_NO_CHANGE,
	       json_pack("{s:s, s:s, s:s, s:s, s:o, s:i}", "candidate", parent->id, "rule", r->name, "says", r->says,
			 "figures_text", buf_str(&text), "figures", figures, "calls_saved", pipe_calls_per_step(p)));
	buf_release(&text);
	return 1;
}

/*
 * One improvement of `parent` in stage `st` (refinement or a tuning stage):
 * the profile agent reads the parent's metrics and writes a plan, the code
 * agent applies it, the result is validated (with repairs), and it is
 * accepted only when valid, faster by the acceptance rule, and its timing is
 * confirmed. Returns the accepted candidate, or NULL when the parent stays.
 */
struct cand *pipe_improve(struct pipe *p, const struct stage *st, struct cand *parent, const char *id)
{
	struct prompt_vars v = { 0 };
	enum agent_outcome oc;
	struct buf focus = BUF_INIT;
	char *timing = agents_timing_text(p->env->baseline, p->env->eval.device, parent->ms), *metrics, *decisions,
	     *plan = NULL, *src;
	json_t *analysis = NULL;
	struct cand *accepted = NULL;

	if (st->tuning && !p->o->ask_always && rule_decides(p, st, parent)) {
		free(timing);
		return NULL;
	}
	{
		/* The profile's figures, then how the kernel was launched: a tuning
		 * stage changes grids, block sizes, warps and stages, and must know
		 * which ones the current kernel ran with (its autotuner's choice). */
		char *figures = agents_metrics_text(pipe_profile(p, parent), st->focus, 4,
						    json_integer_value(json_object_get(parent->eval, "triton_launches")));
		char *launch = agents_launch_text(parent->eval);
		metrics = xasprintf("%s\n%s", figures, launch);
		free(figures);
		free(launch);
	}
	decisions = st->sees_decisions ? decisions_prompt_text(p->decisions) : xstrdup("none yet");
	for (int f = 0; f < 4 && st->focus[f]; f++)
		buf_addf(&focus, "%s%s", f ? ", " : "", st->focus[f]);
	prompt_set(&v, "objective", st->objective);
	prompt_set(&v, "rules", st->rules);
	prompt_set(&v, "focus", buf_str(&focus));
	prompt_set(&v, "timing", timing);
	prompt_set(&v, "metrics", metrics);
	prompt_set(&v, "kernel", parent->source);
	prompt_set(&v, "decisions", decisions);
	prompt_set(&v, "stage_title", st->title);
	pipe_progress(p, st->name, "improving %s", parent->id);
	if (p->o->single_agent) {
		src = pipe_code_call(p, P_SINGLE_OPTIMIZE, &v, st->name, id, &oc);
	} else {
		analysis = pipe_json_call(p, st->analysis_prompt, st->analysis_schema, &v, st->name, parent->id, &oc);
		if (!analysis) {
			if (!pipe_stop_for(p, oc, st->name, parent->id))
				pipe_decide(p, st->name, DEC_NO_PLAN, pipe_about(parent->id));
			goto out;
		}
		{
			/* The stage's own question: refinement asks whether a change is
			 * worth making, a tuning stage whether anything should change. */
			int refine = st->analysis_schema == SCHEMA_PROFILE_REFINE;
			const char *answer = json_string_value(json_object_get(analysis, refine ? "worth_optimizing" : "change"));
			if (!strcmp(answer ?: "", "no")) {
				json_t *f = pipe_about(parent->id);
				json_object_set(f, "bottleneck", json_object_get(analysis, "bottleneck") ?: json_null());
				pipe_decide(p, st->name, refine ? DEC_NOT_WORTH : DEC_NO_CHANGE, f);
				goto out;
			}
		}
		plan = json_dumps(analysis, JSON_INDENT(1));
		prompt_set(&v, "plan", plan);
		src = pipe_code_call(p, st->code_prompt, &v, st->name, id, &oc);
	}
	if (!src) {
		if (!pipe_stop_for(p, oc, st->name, parent->id))
			pipe_decide(p, st->name, DEC_NO_KERNEL, pipe_about(parent->id));
		goto out;
	}
	accepted = pipe_judge(p, st, parent, id, src, plan);
out:
	json_decref(analysis);
	buf_release(&focus);
	free(plan);
	free(metrics);
	free(decisions);
	free(timing);
	return accepted;
}
