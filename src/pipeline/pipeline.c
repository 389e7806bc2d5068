/* pipeline.c: the EGG state machine (docs/method.md) over agents, evaluator and profiler. */
#include "pipeline.h"
#include "pipe.h"

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

void pipeline_opts_init(struct pipeline_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->seeds = 2;
	o->seed_repairs = 3;
	o->repairs = 1;
	o->refine = 1;
	o->refine_rounds = 1;
	for (int s = 0; s < STAGE_COUNT; s++)
		o->stage_on[s] = stages[s].tuning;
	o->top_k = 1;
	o->profile = 1;
	o->stop_at_sol = 85;
	o->tuning_together = 1;
}

/* ---- stages ---- */

/* Calls a skipped stage would have made: a plan and a kernel per candidate. */
static int planned_calls(const struct pipe *p, int stage)
{
	int per = pipe_calls_per_step(p), n = 0;
	if (stage == STAGE_REFINE) {
		for (int i = 0; i < p->ncands; i++)
			n += p->cands[i]->valid ? per : 0;
		return n;
	}
	return per * (p->npool ? p->npool : 1);
}

/*
 * The early end at the speed of light: once the best kernel is within
 * --stop-at-sol of the roofline bound, the stages still to come are skipped
 * (what more tokens could buy is below the timing noise). It is the task's
 * result, not a stop (the task ran to its end): sol_stop records what the
 * skipped stages would have cost, estimated from the tokens per call so
 * far, and its note says so in a sentence.
 */
static void check_sol(struct pipe *p, const char *after)
{
	const struct agents *a = p->env->agents;
	double sol, per_call;
	int calls = 0;
	json_t *skipped;
	char *note;
	if (p->o->stop_at_sol <= 0 || !p->npool || p->stop || p->at_sol)
		return;
	sol = json_num(p->pool[0]->eval, "sol_pct");
	if (isnan(sol) || sol < p->o->stop_at_sol)
		return;
	skipped = json_array();
	for (int s = stage_by_name(after)->id + 1; s < STAGE_COUNT; s++) {
		if ((s == STAGE_REFINE && !p->o->refine) || (stages[s].tuning && !p->o->stage_on[s]) ||
		    s == STAGE_COMBINE)
			continue;
		json_array_append_new(skipped, json_string(stages[s].name));
		calls += planned_calls(p, s);
	}
	if (!json_array_size(skipped)) {
		json_decref(skipped);
		return;
	}
	p->at_sol = 1;
	per_call = a->used.calls ? (double)usage_tokens(&a->used) / a->used.calls : 0;
	note = xasprintf("at the speed of light: %s runs at %.0f%% of the roofline bound after the %s stage "
			 "(--stop-at-sol %.0f); %d later LLM call(s) skipped, about %.0f tokens saved", p->pool[0]->id, sol,
			 after, p->o->stop_at_sol, calls, calls * per_call);
	p->out->sol_stop = json_pack("{s:s, s:f, s:f, s:o, s:i, s:f, s:f, s:s}", "after_stage", after, "sol_pct", sol,
				     "threshold_pct", p->o->stop_at_sol, "skipped_stages", skipped, "skipped_calls_est",
				     calls, "tokens_per_call", per_call, "tokens_saved_est", calls * per_call, "note", note);
	pipe_decide(p, after, DEC_AT_SOL, json_pack("{s:s, s:f, s:s, s:f, s:i, s:f, s:s}", "candidate", p->pool[0]->id,
						"sol_pct", sol, "after_stage", after, "threshold_pct", p->o->stop_at_sol,
						"skipped_calls", calls, "tokens_saved", calls * per_call, "reason", note));
	free(note);
}

/* The decisions a rule made without a call, as the result's rule_skips. */
static json_t *rule_skips(const json_t *decisions)
{
	json_t *out = json_array();
	const json_t *d;
	size_t i;
	json_array_foreach(decisions, i, d) {
		if (strcmp(json_string_value(json_object_get(d, "kind")) ?: "", decision_name(DEC_RULE_NO_CHANGE)))
			continue;
		json_array_append_new(out, json_pack("{s:O, s:O, s:O, s:O, s:O}", "stage", json_object_get(d, "stage"),
						     "rule", json_object_get(d, "rule"), "candidate",
						     json_object_get(d, "candidate"), "calls_saved",
						     json_object_get(d, "calls_saved"), "figures", json_object_get(d, "figures")));
	}
	return out;
}

/* The decision that judged candidate `id`, from index `from` on, or NULL. */
static const json_t *judged(const json_t *decisions, size_t from, const char *id)
{
	for (size_t i = from; i < json_array_size(decisions); i++) {
		const json_t *d = json_array_get(decisions, i);
		const char *kind = json_string_value(json_object_get(d, "kind")) ?: "";
		if (!strcmp(json_string_value(json_object_get(d, "candidate")) ?: "", id) &&
		    (!strcmp(kind, decision_name(DEC_ACCEPTED)) || !strcmp(kind, decision_name(DEC_NOT_FASTER)) ||
		     !strcmp(kind, decision_name(DEC_INVALID)) || !strcmp(kind, decision_name(DEC_UNCHANGED)) ||
		     !strcmp(kind, decision_name(DEC_NO_KERNEL)) || !strcmp(kind, decision_name(DEC_NOT_WORTH))))
			return d;
	}
	return NULL;
}

/* The extra rounds and fresh seeds in the decisions, each with what it
 * gained: a round the speedup of its accepted kernel over its parent; a
 * fresh seed the speedup of the selection after it over the best before
 * it, when its line won. */
static json_t *extras(const json_t *decisions)
{
	json_t *out = json_array();
	const json_t *d;
	size_t i;
	json_array_foreach(decisions, i, d) {
		const char *kind = json_string_value(json_object_get(d, "kind")) ?: "";
		double gained = NAN;
		if (!strcmp(kind, decision_name(DEC_EXTRA_ROUND))) {
			char id[160];
			const char *parent = json_string_value(json_object_get(d, "candidate")) ?: "";
			const json_t *j;
			snprintf(id, sizeof(id), "%.*s.refine%lld", (int)strcspn(parent, "."), parent,
				 json_integer_value(json_object_get(d, "round")));
			j = judged(decisions, i + 1, id);
			if (j && !strcmp(json_string_value(json_object_get(j, "kind")), decision_name(DEC_ACCEPTED)))
				gained = json_num(j, "parent_ms") / json_num(j, "kernel_ms");
			json_array_append_new(out, json_pack("{s:s, s:s, s:O, s:O, s:o}", "kind", "round", "candidate", id,
							     "round", json_object_get(d, "round"), "why",
							     json_object_get(d, "why"), "gained",
							     isnan(gained) ? json_null() : json_real(gained)));
		} else if (!strcmp(kind, decision_name(DEC_FRESH_SEED))) {
			char seed[32];
			snprintf(seed, sizeof(seed), "seed%lld", json_integer_value(json_object_get(d, "seed")));
			for (size_t k = i + 1; k < json_array_size(decisions); k++) {
				const json_t *s = json_array_get(decisions, k);
				const char *c = json_string_value(json_object_get(s, "candidate")) ?: "";
				if (strcmp(json_string_value(json_object_get(s, "kind")) ?: "", decision_name(DEC_SELECTED)))
					continue;
				if (!strncmp(c, seed, strlen(seed)) && (c[strlen(seed)] == '.' || !c[strlen(seed)]))
					gained = json_num(d, "best_ms") / json_num(s, "kernel_ms");
				break;
			}
			json_array_append_new(out, json_pack("{s:s, s:s, s:O, s:O, s:o}", "kind", "fresh_seed", "candidate",
							     seed, "seed", json_object_get(d, "seed"), "why",
							     json_object_get(d, "why"), "gained",
							     isnan(gained) ? json_null() : json_real(gained)));
		}
	}
	return out;
}

/* ---- the phases ---- */

/* Whether the task has a kernel to improve and may go on. */
static int improving(const struct pipe *p)
{
	return p->npool && !p->stop && !p->at_sol;
}

static int always(const struct pipe *p)
{
	(void)p;
	return 1;
}

static int side_by_side(const struct pipe *p)
{
	return p->o->tuning_together && improving(p);
}

static int one_by_one(const struct pipe *p)
{
	return !p->o->tuning_together && improving(p);
}

/* The seeds, their repairs and their refinement (seed.c, improve.c), then
 * the speed-of-light check after the last of them that ran. */
static void seeds_phase(struct pipe *p)
{
	int seeds_at_sol = 0;
	pipe_run_seeds(p, &seeds_at_sol);
	if (!p->npool && !p->stop)
		pipe_decide(p, "seed", DEC_NO_VALID_SEED, NULL);
	check_sol(p, p->o->refine && !seeds_at_sol ? "refine" : "seed");
}

/* The tuning stages one after the other, each on the last one's kernel
 * (--sequential-tuning), the speed-of-light check after each. */
static void tuning_one_by_one(struct pipe *p)
{
	for (int s = 0; s < STAGE_COUNT && improving(p); s++)
		if (stages[s].tuning && p->o->stage_on[s]) {
			pipe_run_tuning(p, &stages[s]);
			check_sol(p, stages[s].name);
		}
}

/*
 * A task's phases, in order: each runs when its condition holds on the
 * task's state and options when its turn comes. The stages inside a phase
 * are the stage table's (stages.c); each phase's file says how it runs
 * (seed.c, improve.c, tune.c).
 */
static const struct phase {
	const char *what;
	int (*wanted)(const struct pipe *p);
	void (*run)(struct pipe *p);
} phases[] = {
	{ "seeds, their repairs and refinement", always, seeds_phase },
	{ "the tuning stages side by side on one kernel, winning changes combined", side_by_side,
	  pipe_run_tuning_together },
	{ "the tuning stages one after the other (--sequential-tuning)", one_by_one, tuning_one_by_one },
};

int pipeline_run(struct pipeline_env *env, const struct pipeline_opts *o, struct pipeline_result *out)
{
	struct pipe *p = xcalloc(1, sizeof(*p));
	int broken;
	memset(out, 0, sizeof(*out));
	out->stage_rows = json_array();
	p->env = env;
	p->o = o;
	p->out = out;
	p->decisions = json_array();

	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
		if (phases[i].wanted(p))
			phases[i].run(p);
	/* A write the store refused in the last steps (a join's records, the
	 * final decisions) stops the task too: nothing may end as done whose
	 * record is not whole. */
	pipe_store_broken(p);
	out->rule_skips = rule_skips(p->decisions);
	out->extras = extras(p->decisions);
	out->llm_chain = p->chain;
	out->llm_s = env->agents->used.llm_ms / 1000;
	out->eval_s = p->eval_ms / 1000;
	out->device_wait_s = p->wait_ms / 1000;
	if (p->npool) {
		struct cand *best = p->pool[0];
		out->found = 1;
		out->source = xstrdup(best->source);
		out->id = xstrdup(best->id);
		out->eval = json_incref(best->eval);
	}
	for (int i = 0; i < p->ncands; i++)
		cand_free(p->cands[i]);
	json_decref(p->decisions);
	broken = p->broken;
	free(p);
	return broken ? -1 : 0;
}

void pipeline_result_clear(struct pipeline_result *r)
{
	free(r->source);
	free(r->id);
	json_decref(r->eval);
	json_decref(r->stage_rows);
	json_decref(r->sol_stop);
	json_decref(r->rule_skips);
	json_decref(r->extras);
	memset(r, 0, sizeof(*r));
}
