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

/* A wait outranks an infrastructure stop (the reply may come, and the task
 * goes on where it stopped), which outranks a spent budget. */
const struct stop_cause_info stop_causes[STOP_CAUSE_COUNT] = {
	[STOP_NONE] = { NULL, 0, 0 },
	[STOP_BUDGET] = { "budget", 0, 1 },
	[STOP_LLM] = { "llm", 1, 2 },
	[STOP_WORKER] = { "worker", 1, 2 },
	[STOP_NO_MEMORY] = { "memory", 1, 2 },
	[STOP_STORE] = { "store", 1, 2 },
	[STOP_WAITING] = { "waiting", 0, 3 },
};

void pipeline_opts_init(struct pipeline_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->seeds = 2;
	o->seed_repairs = 3;
	o->repairs = 1;
	o->refine = 1;
	for (int s = 0; s < STAGE_COUNT; s++)
		o->stage_on[s] = stages[s].tuning;
	o->top_k = 1;
	o->profile = 1;
	o->stop_at_sol = 85;
	o->tuning_together = 1;
}

int pipeline_faster(double new_ms, double new_cv, double old_ms, double old_cv, int iters)
{
	double n = iters > 1 ? iters : 1;
	double se_new = 1.2533 * new_cv / sqrt(n), se_old = 1.2533 * old_cv / sqrt(n);
	double margin = 2 * sqrt(se_new * se_new + se_old * se_old);
	if (margin < 0.02 || isnan(margin))
		margin = 0.02;
	return isfinite(new_ms) && new_ms < old_ms * (1 - margin);
}

int pipeline_timing_plausible(double kernel_ms, const json_t *profile, double *ncu_ms)
{
	double ns = json_is_true(json_object_get(profile, "available"))
			    ? json_num(json_object_get(profile, "aggregate"), "duration_ns") : NAN;
	*ncu_ms = ns / 1e6;
	if (isnan(*ncu_ms) || *ncu_ms <= 0 || !isfinite(kernel_ms))
		return 1;
	return *ncu_ms <= 1.25 * kernel_ms + 0.010;
}

static int by_time(const void *a, const void *b)
{
	const struct cand *x = *(struct cand *const *)a, *y = *(struct cand *const *)b;
	return x->ms < y->ms ? -1 : x->ms > y->ms;
}

/* Keeps the K fastest valid candidates of `list` in the pool. */
void pipe_set_pool(struct pipe *p, struct cand **list, int n)
{
	qsort(list, (size_t)n, sizeof(*list), by_time);
	p->npool = 0;
	for (int i = 0; i < n && p->npool < p->o->top_k && p->npool < PIPELINE_MAX_TOP_K; i++)
		if (list[i]->valid && (i == 0 || list[i] != list[i - 1]))
			p->pool[p->npool++] = list[i];
}

void pipe_stage_row(struct pipe *p, const struct stage *st)
{
	const json_t *b = p->env->baseline;
	double ms = p->npool ? p->pool[0]->ms : NAN;
	json_t *row = json_pack("{s:s, s:s}", "stage", st->name, "title", st->title);
	json_object_set_new(row, "kernel_ms", isnan(ms) ? json_null() : json_real(ms));
	json_object_set_new(row, "candidate", p->npool ? json_string(p->pool[0]->id) : json_null());
	json_object_set_new(row, "speedup_eager", b && !isnan(ms) ? json_real(json_num(b, "eager_ms") / ms) : json_null());
	json_object_set_new(row, "speedup_compile",
			    b && !isnan(ms) && !isnan(json_num(b, "compile_ms")) ? json_real(json_num(b, "compile_ms") / ms) : json_null());
	json_array_append_new(p->out->stage_rows, row);
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
 * The early stop at the speed of light: once the best kernel is within
 * --stop-at-sol of the roofline bound, the stages still to come are skipped
 * (what more tokens could buy is below the timing noise); the stop records
 * what they would have cost, estimated from the tokens per call so far.
 */
static void check_sol(struct pipe *p, const char *after)
{
	const struct agents *a = p->env->agents;
	double sol, per_call;
	int calls = 0;
	json_t *skipped;
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
	p->out->sol_stop = json_pack("{s:s, s:f, s:f, s:o, s:i, s:f, s:f}", "after_stage", after, "sol_pct", sol,
				     "threshold_pct", p->o->stop_at_sol, "skipped_stages", skipped, "skipped_calls_est",
				     calls, "tokens_per_call", per_call, "tokens_saved_est", calls * per_call);
	snprintf(p->out->stop_reason, sizeof(p->out->stop_reason),
		 "at the speed of light: %s runs at %.0f%% of the roofline bound after the %s stage (--stop-at-sol %.0f); "
		 "%d later LLM call(s) skipped, about %.0f tokens saved", p->pool[0]->id, sol, after, p->o->stop_at_sol,
		 calls, calls * per_call);
	pipe_decide(p, after, DEC_AT_SOL, json_pack("{s:s, s:f, s:s, s:f, s:i, s:f, s:s}", "candidate", p->pool[0]->id,
						"sol_pct", sol, "after_stage", after, "threshold_pct", p->o->stop_at_sol,
						"skipped_calls", calls, "tokens_saved", calls * per_call, "reason",
						p->out->stop_reason));
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

int pipeline_run(struct pipeline_env *env, const struct pipeline_opts *o, struct pipeline_result *out)
{
	struct pipe *p = xcalloc(1, sizeof(*p));
	int broken, seeds_at_sol = 0;
	memset(out, 0, sizeof(*out));
	out->stage_rows = json_array();
	p->env = env;
	p->o = o;
	p->out = out;
	p->decisions = json_array();

	pipe_run_seeds(p, &seeds_at_sol);
	if (!p->npool && !p->stop)
		pipe_decide(p, "seed", DEC_NO_VALID_SEED, NULL);
	check_sol(p, o->refine && !seeds_at_sol ? "refine" : "seed");
	if (o->tuning_together && p->npool && !p->stop && !p->at_sol)
		pipe_run_tuning_together(p);
	for (int s = 0; s < STAGE_COUNT && !o->tuning_together && p->npool && !p->stop && !p->at_sol; s++)
		if (stages[s].tuning && o->stage_on[s]) {
			pipe_run_tuning(p, &stages[s]);
			check_sol(p, stages[s].name);
		}
	/* A write the store refused in the last steps (a join's records, the
	 * final decisions) stops the task too: nothing may end as done whose
	 * record is not whole. */
	pipe_store_broken(p);
	out->rule_skips = rule_skips(p->decisions);
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
	memset(r, 0, sizeof(*r));
}
