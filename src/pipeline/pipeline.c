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

static void progress(struct pipe *p, const char *stage, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void progress(struct pipe *p, const char *stage, const char *fmt, ...)
{
	char text[256];
	va_list ap;
	if (!p->env->progress)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	p->env->progress(p->env->progress_ctx, stage, text);
}

/* ---- evaluation and profiling (cached by the evaluator) ---- */

/* An evaluation in progress, for its progress lines. */
struct evaluating {
	struct pipe *p;
	const struct cand *c;
	struct beat beat;
};

/* Only an evaluation that takes long says what it is doing (a full-size
 * task on the CPU interpreter: minutes per trial): after BEAT_S, its step,
 * then a line at most every BEAT_S while it lasts (util/beat.h). */
static void eval_progress(void *arg, const char *step_text, double elapsed_s)
{
	struct evaluating *ev = arg;
	if (beat_due(&ev->beat, step_text, elapsed_s) != BEAT_NONE)
		progress(ev->p, ev->c->stage, "%s: %s (%.0f s)", ev->c->id, beat_step(&ev->beat),
			 beat_seconds(&ev->beat));
}

/* Evaluates c's source; NULL (and p->stop) on an infrastructure failure. */
/* The run store refused a write: the task stops here, as an infrastructure
 * failure (what it would do next could not be recorded). 1 when it did. */
static int store_broken(struct pipe *p)
{
	const char *e = p->env->store_rec ? recorder_store_error(p->env->store_rec) : NULL;
	if (!e)
		return 0;
	if (!p->store_stop) {
		snprintf(p->out->stop_reason, sizeof(p->out->stop_reason), "stopped: the run store cannot be written: %s",
			 e);
		p->out->infra = 1;
		p->stop = p->store_stop = 1;
	}
	return 1;
}

static json_t *evaluate(struct pipe *p, const struct cand *c)
{
	double t0 = time_mono_ms(), t1;
	struct pool_slot *slot;
	struct evaluating ev = { p, c, BEAT_INIT };
	struct eval_opts o = p->env->eval;
	json_t *res;
	if (store_broken(p))
		return NULL;
	slot = pool_acquire_for(p->env->pool, p->env->device, eval_need_bytes(p->env->baseline, p->env->eval.device));
	t1 = time_mono_ms();
	o.progress = eval_progress;
	o.progress_arg = &ev;
	beat_begin(&ev.beat, "evaluating", BEAT_HOLD_S);
	res = eval_candidate(slot->worker, &o, p->env->task_source, c->source, p->env->baseline);
	pool_release(p->env->pool, slot);
	p->wait_ms += t1 - t0;
	p->eval_ms += time_mono_ms() - t1;
	if (!res) {
		snprintf(p->out->stop_reason, sizeof(p->out->stop_reason), "evaluation failed: %s", err_msg());
		p->out->infra = 1;
		p->out->no_memory = err_kind() == ERR_NO_MEMORY;
		p->stop = 1;
	}
	return res;
}

static json_t *profile(struct pipe *p, struct cand *c)
{
	struct pool_slot *slot;
	if (c->profile)
		return c->profile;
	if (!p->o->profile) {
		c->profile = json_pack("{s:b, s:s}", "available", 0, "reason", "profiling turned off");
		return c->profile;
	}
	{
		double t0 = time_mono_ms(), t1;
		slot = pool_acquire_for(p->env->pool, p->env->device,
					eval_need_bytes(p->env->baseline, p->env->eval.device));
		t1 = time_mono_ms();
		progress(p, c->stage, "profiling %s", c->id);
		c->profile = profile_candidate(slot->worker, &p->env->eval, p->env->task_source, c->source);
		pool_release(p->env->pool, slot);
		p->wait_ms += t1 - t0;
		p->eval_ms += time_mono_ms() - t1;
	}
	recorder_profile(p->env->rec, c->id, c->profile);
	return c->profile;
}

/* ---- decisions ---- */

/* The log's sentence for each kind of decision: words for people (the run
 * folder's decisions.jsonl, the store). Nothing reads them back: prompts
 * are made from the kinds and fields (decisions_prompt_text). */
static const char *const decision_log[DEC_KIND_COUNT] = {
	[DEC_STOPPED] = "{reason}",
	[DEC_AT_SOL] = "{reason}",
	[DEC_TIMING_DISTRUSTED] = "{candidate} discarded: timed at {kernel_ms} ms, but Nsight Compute measured "
				  "{ncu_ms} ms of GPU time in its kernels; its timing is not trusted",
	[DEC_SEED_EXISTING] = "seed 1 is the existing kernel ({kernel_ms} ms)",
	[DEC_SEED_NO_REPLY] = "seed {seed} discarded: no usable reply",
	[DEC_SEED_DROPPED] = "seed {seed} dropped: still failing after {repairs} repair(s)",
	[DEC_SEEDS_VALID] = "{valid} valid seed(s); fastest {candidate} at {kernel_ms} ms",
	[DEC_NO_VALID_SEED] = "no valid seed: the task fails",
	[DEC_NOT_REFINED_AT_SOL] = "{candidate} not refined: it runs at {sol_pct}% of the roofline bound "
				   "(--stop-at-sol {threshold_pct})",
	[DEC_SELECTED] = "selected {candidate} at {kernel_ms} ms",
	[DEC_NO_PLAN] = "{candidate} kept: the profile agent gave no usable plan",
	[DEC_NO_CHANGE] = "{candidate} kept as is: nothing to change in this stage ({bottleneck})",
	[DEC_NOT_WORTH] = "{candidate} kept as is: not worth optimizing ({bottleneck})",
	[DEC_RULE_NO_CHANGE] = "{candidate} kept as is without a call: the {rule} rule decided ({says}: {figures_text})",
	[DEC_NO_KERNEL] = "{candidate} kept: no usable kernel",
	[DEC_UNCHANGED] = "{candidate} kept: the code agent returned it unchanged (nothing to evaluate)",
	[DEC_INVALID] = "{candidate} rejected: invalid after {repairs} repair(s)",
	[DEC_ACCEPTED] = "{candidate} accepted ({kernel_ms} ms vs {parent_ms} ms)",
	[DEC_NOT_FASTER] = "{candidate} rejected: not faster than its parent ({kernel_ms} ms vs {parent_ms} ms)",
};

/* Records a decision of kind `k` with its fields (stolen; NULL: none). */
static void decide(struct pipe *p, const char *stage, enum decision_kind k, json_t *fields)
{
	json_t *d = decision_new(k, stage, fields, "");
	char *text = decision_render(d, decision_log[k]);
	json_object_set_new(d, "text", json_string(text));
	recorder_decision(p->env->rec, d);
	json_array_append_new(p->decisions, d);
	free(text);
}

/* The fields of a decision about one candidate. */
static json_t *about(const char *candidate)
{
	return json_pack("{s:s}", "candidate", candidate);
}

/* ---- agent calls, counted onto the chain of calls that wait on each other ---- */

static char *code_call(struct pipe *p, enum prompt_id id, struct prompt_vars *v, const char *stage,
		       const char *candidate, enum agent_outcome *oc)
{
	long before = p->env->agents->used.calls;
	char *out;
	if (store_broken(p)) {
		*oc = AGENT_MALFORMED;	/* no call made; stop_for sees the stop */
		return NULL;
	}
	out = agent_code(p->env->agents, id, v, stage, candidate, oc);
	p->chain += (int)(p->env->agents->used.calls - before);
	return out;
}

static json_t *json_call(struct pipe *p, enum prompt_id id, enum reply_schema schema, struct prompt_vars *v,
			 const char *stage, const char *candidate, enum agent_outcome *oc)
{
	long before = p->env->agents->used.calls;
	json_t *out;
	if (store_broken(p)) {
		*oc = AGENT_MALFORMED;	/* no call made; stop_for sees the stop */
		return NULL;
	}
	out = agent_json(p->env->agents, id, schema, v, stage, candidate, oc);
	p->chain += (int)(p->env->agents->used.calls - before);
	return out;
}

/* ---- candidates ---- */

static struct cand *new_cand(struct pipe *p, const char *id, const char *parent, const char *stage, char *source)
{
	struct cand *c;
	if (p->ncands == MAX_CANDS) {
		free(source);
		err_set(ERR_INFRA, "egg's candidate table is full (%d candidates)", MAX_CANDS);
		snprintf(p->out->stop_reason, sizeof(p->out->stop_reason), "stopped: %s", err_msg());
		p->broken = p->stop = 1;
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	p->cands[p->ncands++] = c;
	snprintf(c->id, sizeof(c->id), "%s", id);
	snprintf(c->parent, sizeof(c->parent), "%s", parent ? parent : "");
	c->stage = stage;
	c->source = source;
	c->ms = INFINITY;
	return c;
}

/*
 * After an agent gave nothing usable. A malformed reply (twice) is the
 * caller's to record: returns 0 and the run goes on. An LLM that failed
 * after its retries, a spent budget, or a reply awaited in the spool stops
 * the run here: that is recorded as what it is, and 1 is returned.
 */
static int stop_for(struct pipe *p, enum agent_outcome oc, const char *stage, const char *subject)
{
	struct agents *a = p->env->agents;
	char *why = p->out->stop_reason;
	size_t len = sizeof(p->out->stop_reason);
	if (p->store_stop)
		return 1;
	if (oc == AGENT_MALFORMED || oc == AGENT_OK)
		return 0;
	if (oc == AGENT_WAITING) {
		snprintf(why, len, "stopped: no reply for call %ld (waiting): %s", a->used.calls + 1, err_msg());
		snprintf(p->out->pending_key, sizeof(p->out->pending_key), "%s", a->waiting_key);
		p->out->waiting = 1;
	} else if (oc == AGENT_BUDGET) {
		snprintf(why, len, "stopped: %s", err_msg());
		p->out->budget = 1;
	} else {
		snprintf(why, len, "stopped: LLM unreachable (the %s stage's call for %s): %s", stage, subject, err_msg());
		p->out->infra = 1;
	}
	p->stop = 1;
	decide(p, stage, DEC_STOPPED, json_pack("{s:s, s:s}", "cause", p->out->waiting ? "waiting" : p->out->budget ?
						"budget" : "llm", "reason", why));
	return 1;
}

static void step(struct pipe *p, const struct cand *c, const char *kind, int accepted_known, int accepted,
		 const char *note)
{
	const json_t *e = c->eval;
	double k = json_num(e, "kernel_ms");
	json_t *s = json_pack("{s:s, s:s, s:s, s:s, s:s?, s:s?}", "stage", c->stage, "candidate", c->id, "parent",
			      c->parent, "kind", kind, "verdict", json_string_value(json_object_get(e, "verdict")),
			      "fail_stage", json_string_value(json_object_get(e, "verdict")) && !eval_passed(e)
					    ? json_string_value(json_object_get(e, "stage")) : NULL);
	json_object_set_new(s, "kernel_ms", isnan(k) ? json_null() : json_real(k));
	json_object_set(s, "speedup_eager", json_object_get(e, "speedup_eager") ?: json_null());
	json_object_set(s, "speedup_compile", json_object_get(e, "speedup_compile") ?: json_null());
	json_object_set_new(s, "accepted", accepted_known ? json_boolean(accepted) : json_null());
	if (note)
		json_object_set_new(s, "note", json_string(note));
	if (json_string_value(json_object_get(e, "reason")))
		json_object_set(s, "reason", json_object_get(e, "reason"));
	recorder_step(p->env->rec, s);
	json_decref(s);
}

/*
 * Evaluates c; while it fails and repairs remain, asks for a diagnosis and a
 * fix. c ends valid or not; c's source and id follow the last attempt.
 */
static void validate(struct pipe *p, struct cand *c, int repairs, const char *kind)
{
	char base_id[100];
	snprintf(base_id, sizeof(base_id), "%.99s", c->id);
	for (int attempt = 0;; attempt++) {
		json_t *res = evaluate(p, c);
		if (!res)
			return;
		json_decref(c->eval);
		c->eval = res;
		recorder_candidate(p->env->rec, c->id, c->stage, c->source, res);
		if (eval_passed(res)) {
			const json_t *t = json_object_get(res, "timing");
			c->valid = 1;
			c->ms = json_num(res, "kernel_ms");
			c->cv = t ? json_num(t, "cv") : 0;
			if (isnan(c->cv))
				c->cv = 0;
			step(p, c, attempt ? "repair" : kind, 0, 0, NULL);
			progress(p, c->stage, "%s valid, %.4f ms", c->id, c->ms);
			return;
		}
		step(p, c, attempt ? "repair" : kind, 0, 0, NULL);
		progress(p, c->stage, "%s failed at %s", c->id, json_string_value(json_object_get(res, "stage")));
		if (attempt >= repairs || p->stop)
			return;
		{
			struct prompt_vars v = { 0 };
			enum agent_outcome oc;
			char *plan = NULL, *fixed;
			char new_id[120];
			prompt_set(&v, "kernel", c->source);
			prompt_set(&v, "fail_stage", json_string_value(json_object_get(res, "stage")));
			prompt_set(&v, "fail_reason", json_string_value(json_object_get(res, "reason")) ?: "");
			prompt_set(&v, "error_log", json_string_value(json_object_get(res, "log")) ?: "");
			if (p->o->single_agent) {
				fixed = code_call(p, P_SINGLE_REPAIR, &v, c->stage, c->id, &oc);
			} else {
				json_t *diag = json_call(p, P_DEBUG, SCHEMA_DEBUG, &v, c->stage, c->id, &oc);
				if (!diag) {
					stop_for(p, oc, c->stage, c->id);
					return;
				}
				plan = json_dumps(diag, JSON_INDENT(1));
				json_decref(diag);
				/* The code agent sees the diagnosis, not the raw log. */
				prompt_set(&v, "error_log", NULL);
				prompt_set(&v, "plan", plan);
				fixed = code_call(p, P_CODE_REPAIR, &v, c->stage, c->id, &oc);
			}
			free(plan);
			if (!fixed) {
				stop_for(p, oc, c->stage, c->id);
				return;
			}
			free(c->source);
			c->source = fixed;
			snprintf(new_id, sizeof(new_id), "%s.r%d", base_id, attempt + 1);
			snprintf(c->parent, sizeof(c->parent), "%s", c->id);
			snprintf(c->id, sizeof(c->id), "%s", new_id);
		}
	}
}

static int by_time(const void *a, const void *b)
{
	const struct cand *x = *(struct cand *const *)a, *y = *(struct cand *const *)b;
	return x->ms < y->ms ? -1 : x->ms > y->ms;
}

/* Keeps the K fastest valid candidates of `list` in the pool. */
static void set_pool(struct pipe *p, struct cand **list, int n)
{
	qsort(list, (size_t)n, sizeof(*list), by_time);
	p->npool = 0;
	for (int i = 0; i < n && p->npool < p->o->top_k && p->npool < 8; i++)
		if (list[i]->valid && (i == 0 || list[i] != list[i - 1]))
			p->pool[p->npool++] = list[i];
}

static void stage_row(struct pipe *p, const struct stage *st)
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

/*
 * The second witness: before a candidate may win, Nsight Compute's GPU time
 * of its kernels (the profile the next stage reads anyway) must not exceed
 * its measured time by much. Work hidden from the timer, such as kernels on
 * a stream that does not wait for the timed one, shows up here. Without a
 * profile (CPU, --no-profile, ncu missing) the check passes.
 */
static int timing_confirmed(struct pipe *p, struct cand *c)
{
	double ncu_ms;
	char note[200];
	if (pipeline_timing_plausible(c->ms, profile(p, c), &ncu_ms))
		return 1;
	snprintf(note, sizeof(note), "timed at %.4f ms, but Nsight Compute measured %.4f ms of GPU time in its kernels",
		 c->ms, ncu_ms);
	step(p, c, "selection", 1, 0, note);
	decide(p, c->stage, DEC_TIMING_DISTRUSTED,
	       json_pack("{s:s, s:f, s:f}", "candidate", c->id, "kernel_ms", c->ms, "ncu_ms", ncu_ms));
	c->valid = 0;
	c->ms = INFINITY;
	return 0;
}

/* ---- stages ---- */

/* Calls a skipped stage would have made: a plan and a kernel per candidate. */
static int planned_calls(const struct pipe *p, int stage)
{
	int per = p->o->single_agent ? 1 : 2, n = 0;
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
	decide(p, after, DEC_AT_SOL, json_pack("{s:s, s:f, s:s, s:f, s:i, s:f, s:s}", "candidate", p->pool[0]->id,
						"sol_pct", sol, "after_stage", after, "threshold_pct", p->o->stop_at_sol,
						"skipped_calls", calls, "tokens_saved", calls * per_call, "reason",
						p->out->stop_reason));
}

/*
 * One seed's line of work, on a branch of its own that starts as soon as
 * the seed's reply is in (the next seed's request only needs its approach
 * line): its validation with repairs and the second witness, then, with
 * refinement on, its refinement on a second branch. A seed that is itself at
 * the speed of light (--stop-at-sol) is not refined.
 */
struct seed_line {
	struct cand *seed;
	int index;
	struct pipe *check;	/* validation and witness */
	struct pipe *refine;	/* its refinement, or NULL */
	struct cand *refined;	/* the accepted refinement, or NULL */
	int valid;
	int at_sol;		/* valid and itself at the speed of light: not refined */
};

static struct cand *improve(struct pipe *p, const struct stage *st, struct cand *parent, const char *id);

static void seed_line_run(struct pipe *b, void *arg)
{
	struct seed_line *l = arg;
	char id[128];
	double sol;
	if (!l->seed->valid) {
		validate(b, l->seed, b->o->seed_repairs, "seed");
		if (!l->seed->valid) {
			if (!b->stop)
				decide(b, "seed", DEC_SEED_DROPPED,
				       json_pack("{s:i, s:i}", "seed", l->index, "repairs", b->o->seed_repairs));
			return;
		}
	}
	if (!timing_confirmed(b, l->seed))
		return;
	l->valid = 1;
	if (!b->o->refine || b->stop)
		return;
	sol = json_num(l->seed->eval, "sol_pct");
	l->refine = pipe_fork(b);
	if (b->o->stop_at_sol > 0 && !isnan(sol) && sol >= b->o->stop_at_sol) {
		decide(l->refine, "refine", DEC_NOT_REFINED_AT_SOL,
		       json_pack("{s:s, s:f, s:f}", "candidate", l->seed->id, "sol_pct", sol, "threshold_pct",
				 b->o->stop_at_sol));
		l->at_sol = 1;
		return;
	}
	snprintf(id, sizeof(id), "%.100s.refine", l->seed->id);
	l->refined = improve(l->refine, &stages[STAGE_REFINE], l->seed, id);
}

/*
 * Seeds, and with refinement on, each valid seed's refinement (the method's
 * two steps of algorithm design): the code agent writes seed after seed in
 * order (each told the approaches before it), each seed's line runs beside
 * the next request, and the lines are joined in seed order: first every
 * validation (the seed stage's selection), then every refinement (the
 * refinement stage's selection among the seeds and their refinements).
 * Over 100 lines: writing the seeds in order and joining their lines in
 * order are one piece of logic; split, that order would be hidden.
 */
static void run_seeds(struct pipe *p, int *seeds_at_sol)
{
	const struct stage *st = &stages[STAGE_SEED];
	struct buf approaches = BUF_INIT;
	struct seed_line lines[17];
	struct cand *valid[MAX_CANDS];
	int nvalid = 0, nlines = 0, first = 1;
	char idx[16], count[16];

	memset(lines, 0, sizeof(lines));
	snprintf(count, sizeof(count), "%d", p->o->seeds);
	if (p->o->seed_from_existing && p->env->existing_source && p->env->existing_eval) {
		/* The task's existing kernel (it passed its evaluation) is seed 1;
		 * the model writes the others, told what it does. */
		char approach[200];
		struct cand *c = new_cand(p, "existing", NULL, st->name, xstrdup(p->env->existing_source));
		if (c) {
			const json_t *t = json_object_get(p->env->existing_eval, "timing");
			c->eval = json_incref((json_t *)p->env->existing_eval);
			c->valid = 1;
			c->ms = json_num(c->eval, "kernel_ms");
			c->cv = t && !isnan(json_num(t, "cv")) ? json_num(t, "cv") : 0;
			step(p, c, "seed", 0, 0, "the existing kernel");
			reply_approach(c->source, approach, sizeof(approach));
			buf_addf(&approaches, "(1) the existing kernel: %s", approach);
			decide(p, st->name, DEC_SEED_EXISTING, json_pack("{s:f}", "kernel_ms", c->ms));
			lines[nlines].seed = c;
			lines[nlines].index = 1;
			lines[nlines].check = pipe_fork(p);
			branch_start(lines[nlines].check, seed_line_run, &lines[nlines]);
			nlines++;
			first = 2;
		}
	}
	for (int s = first; s <= p->o->seeds && !p->stop; s++) {
		struct prompt_vars v = { 0 };
		enum agent_outcome oc;
		char *src, id[32], *diversity;
		struct cand *c;
		snprintf(idx, sizeof(idx), "%d", s);
		snprintf(id, sizeof(id), "seed%d", s);
		diversity = agents_seed_diversity(p->o->seeds, approaches.len ? buf_str(&approaches) : NULL);
		prompt_set(&v, "seed_index", idx);
		prompt_set(&v, "seed_count", count);
		prompt_set(&v, "diversity", diversity);
		progress(p, "seed", "writing seed %d of %d", s, p->o->seeds);
		src = code_call(p, P_CODE_SEED, &v, st->name, id, &oc);
		free(diversity);
		if (!src) {
			if (!stop_for(p, oc, st->name, id))
				decide(p, st->name, DEC_SEED_NO_REPLY, json_pack("{s:i}", "seed", s));
			continue;
		}
		{
			/* Remember the approach (a line, never code) for the next seed. */
			char approach[200];
			reply_approach(src, approach, sizeof(approach));
			buf_addf(&approaches, "%s(%d) %s", approaches.len ? "; " : "", s, approach);
		}
		c = new_cand(p, id, NULL, st->name, src);
		if (!c)
			break;
		lines[nlines].seed = c;
		lines[nlines].index = s;
		lines[nlines].check = pipe_fork(p);
		branch_start(lines[nlines].check, seed_line_run, &lines[nlines]);
		nlines++;
	}
	buf_release(&approaches);
	for (int i = 0; i < nlines; i++)
		branch_wait(lines[i].check);
	for (int i = 0; i < nlines; i++) {
		pipe_join(p, lines[i].check);
		if (lines[i].valid)
			valid[nvalid++] = lines[i].seed;
	}
	set_pool(p, valid, nvalid);
	if (nvalid && !p->stop)
		decide(p, st->name, DEC_SEEDS_VALID, json_pack("{s:i, s:s, s:f}", "valid", nvalid, "candidate",
							       p->pool[0]->id, "kernel_ms", p->pool[0]->ms));
	stage_row(p, st);
	{
		/* Every valid seed at the speed of light: the refinement stage did
		 * not run at all (the stop after the seeds says so, pipeline_run). */
		int at_sol = 0;
		for (int i = 0; i < nlines; i++)
			at_sol += lines[i].valid && lines[i].at_sol;
		*seeds_at_sol = nvalid && at_sol == nvalid;
	}
	if (!p->o->refine || !nvalid || *seeds_at_sol) {
		for (int i = 0; i < nlines; i++)
			if (lines[i].refine)
				pipe_discard(lines[i].refine);
		return;
	}
	{
		const struct stage *rs = &stages[STAGE_REFINE];
		for (int i = 0; i < nlines; i++) {
			if (!lines[i].refine)
				continue;
			pipe_join(p, lines[i].refine);
			if (lines[i].refined)
				valid[nvalid++] = lines[i].refined;
		}
		set_pool(p, valid, nvalid);
		/* A refinement that waits for a reply (or stopped) has not been
		 * decided: the selection is written once, when the stage has run. */
		if (p->npool && !p->stop)
			decide(p, rs->name, DEC_SELECTED,
			       json_pack("{s:s, s:f}", "candidate", p->pool[0]->id, "kernel_ms", p->pool[0]->ms));
		stage_row(p, rs);
	}
}

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
static struct cand *judge(struct pipe *p, const struct stage *st, const struct cand *parent, const char *id,
			  char *src, const char *plan)
{
	struct cand *c;
	int better;
	if (same_code(src, parent->source)) {
		decide(p, st->name, DEC_UNCHANGED, about(parent->id));
		free(src);
		return NULL;
	}
	if (!(c = new_cand(p, id, parent->id, st->name, src)))
		return NULL;
	c->plan = plan ? xstrdup(plan) : NULL;
	validate(p, c, p->o->repairs, st->step_kind);
	if (!c->valid) {
		if (!p->stop)
			decide(p, st->name, DEC_INVALID, json_pack("{s:s, s:i}", "candidate", c->id, "repairs", p->o->repairs));
		return NULL;
	}
	better = pipeline_faster(c->ms, c->cv, parent->ms, parent->cv, p->env->eval.iters);
	if (better && !timing_confirmed(p, c))
		return NULL;
	step(p, c, "selection", 1, better, better ? "faster than its parent" : "not faster than its parent");
	decide(p, st->name, better ? DEC_ACCEPTED : DEC_NOT_FASTER,
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
	const struct ask_rule *r = ask_decided(st->id, profile(p, parent), &figures);
	if (!r)
		return 0;
	json_object_foreach(figures, metric, v)
		buf_addf(&text, "%s%s %.2f", text.len ? ", " : "", metric, json_real_value(v));
	progress(p, st->name, "%s kept: the %s rule decided without a call", parent->id, r->name);
	decide(p, st->name, DEC_RULE_NO_CHANGE,
	       json_pack("{s:s, s:s, s:s, s:s, s:o, s:i}", "candidate", parent->id, "rule", r->name, "says", r->says,
			 "figures_text", buf_str(&text), "figures", figures, "calls_saved", p->o->single_agent ? 1 : 2));
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
static struct cand *improve(struct pipe *p, const struct stage *st, struct cand *parent, const char *id)
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
		char *figures = agents_metrics_text(profile(p, parent), st->focus, 4,
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
	progress(p, st->name, "improving %s", parent->id);
	if (p->o->single_agent) {
		src = code_call(p, P_SINGLE_OPTIMIZE, &v, st->name, id, &oc);
	} else {
		analysis = json_call(p, st->analysis_prompt, st->analysis_schema, &v, st->name, parent->id, &oc);
		if (!analysis) {
			if (!stop_for(p, oc, st->name, parent->id))
				decide(p, st->name, DEC_NO_PLAN, about(parent->id));
			goto out;
		}
		if (!strcmp(json_string_value(json_object_get(analysis, "worth_optimizing")) ?: "", "no") ||
		    !strcmp(json_string_value(json_object_get(analysis, "change")) ?: "", "no")) {
			json_t *f = about(parent->id);
			json_object_set(f, "bottleneck", json_object_get(analysis, "bottleneck") ?: json_null());
			decide(p, st->name, json_object_get(analysis, "change") ? DEC_NO_CHANGE : DEC_NOT_WORTH, f);
			goto out;
		}
		plan = json_dumps(analysis, JSON_INDENT(1));
		prompt_set(&v, "plan", plan);
		src = code_call(p, st->code_prompt, &v, st->name, id, &oc);
	}
	if (!src) {
		if (!stop_for(p, oc, st->name, parent->id))
			decide(p, st->name, DEC_NO_KERNEL, about(parent->id));
		goto out;
	}
	accepted = judge(p, st, parent, id, src, plan);
out:
	json_decref(analysis);
	buf_release(&focus);
	free(plan);
	free(metrics);
	free(decisions);
	free(timing);
	return accepted;
}

/* The id of pool member i's candidate in stage `name`: the stage's name,
 * with ".kN" when the pool holds several (--top-k). */
static void line_id(char *out, size_t n, const char *name, int i, int npool)
{
	if (npool > 1)
		snprintf(out, n, "%s.k%d", name, i + 1);
	else
		snprintf(out, n, "%s", name);
}

/* One pool member's improvement in a tuning stage, on a branch of its own. */
struct tune_line {
	const struct stage *st;
	struct cand *parent;
	char id[128];
	struct cand *accepted;
	struct pipe *b;
};

static void tune_line_run(struct pipe *b, void *arg)
{
	struct tune_line *l = arg;
	l->accepted = improve(b, l->st, l->parent, l->id);
}

/* A tuning stage: each kernel in the pool gets one improvement (beside one
 * another when the pool holds several: --top-k); the K fastest of the pool
 * and the accepted ones stay. */
static void run_tuning(struct pipe *p, const struct stage *st)
{
	struct cand *next[16];
	struct tune_line lines[8];
	int n = 0, npool = p->npool;

	memset(lines, 0, sizeof(lines));
	for (int i = 0; i < npool; i++) {
		next[n++] = p->pool[i];
		lines[i].st = st;
		lines[i].parent = p->pool[i];
		line_id(lines[i].id, sizeof(lines[i].id), st->name, i, npool);
	}
	if (npool == 1) {
		lines[0].accepted = improve(p, st, lines[0].parent, lines[0].id);
	} else {
		for (int i = 0; i < npool; i++) {
			lines[i].b = pipe_fork(p);
			branch_start(lines[i].b, tune_line_run, &lines[i]);
		}
		for (int i = 0; i < npool; i++)
			branch_wait(lines[i].b);
		for (int i = 0; i < npool; i++)
			pipe_join(p, lines[i].b);
	}
	for (int i = 0; i < npool; i++)
		if (lines[i].accepted)
			next[n++] = lines[i].accepted;
	set_pool(p, next, n);
	stage_row(p, st);
}

/*
 * Brings the changes of `others` (each accepted on its own against the same
 * parent as `best`, in another tuning stage) into `best`, the fastest of
 * them: one code call, validated, and kept only when faster than `best` by
 * the acceptance rule. Returns the kept candidate, or NULL.
 */
static struct cand *combine(struct pipe *p, struct cand *best, struct cand *const *others, int nothers,
			    const char *id)
{
	const struct stage *st = &stages[STAGE_COMBINE];
	struct prompt_vars v = { 0 };
	struct buf changes = BUF_INIT;
	enum agent_outcome oc;
	char *timing = agents_timing_text(p->env->baseline, p->env->eval.device, best->ms),
	     *decisions = decisions_prompt_text(p->decisions), *src;
	struct cand *kept = NULL;
	double sol = json_num(best->eval, "sol_pct");

	if (p->o->stop_at_sol > 0 && !isnan(sol) && sol >= p->o->stop_at_sol) {
		decide(p, st->name, DEC_NOT_REFINED_AT_SOL, json_pack("{s:s, s:f, s:f}", "candidate", best->id, "sol_pct",
									sol, "threshold_pct", p->o->stop_at_sol));
		goto out;
	}
	for (int i = 0; i < nothers; i++) {
		const struct stage *from = stage_by_name(others[i]->stage);
		buf_addf(&changes, "%d. %s (its kernel ran %.4f ms). The plan it applied (JSON):\n%s\nIts kernel:\n"
				   "```python\n%s\n```\n\n", i + 1, from ? from->title : others[i]->stage, others[i]->ms,
			 others[i]->plan ?: "(none recorded)", others[i]->source);
	}
	prompt_set(&v, "objective", st->objective);
	prompt_set(&v, "rules", st->rules);
	prompt_set(&v, "decisions", decisions);
	prompt_set(&v, "timing", timing);
	prompt_set(&v, "changes", buf_str(&changes));
	prompt_set(&v, "kernel", best->source);
	progress(p, st->name, "combining %s with %d other change(s)", best->id, nothers);
	src = code_call(p, st->code_prompt, &v, st->name, id, &oc);
	if (!src) {
		if (!stop_for(p, oc, st->name, best->id))
			decide(p, st->name, DEC_NO_KERNEL, about(best->id));
		goto out;
	}
	kept = judge(p, st, best, id, src, NULL);
out:
	buf_release(&changes);
	free(decisions);
	free(timing);
	return kept;
}

/* The combination of one pool member's winning tuning changes, on a branch. */
struct combine_line {
	struct cand *best;
	struct cand *others[STAGE_COUNT];
	int nothers;
	char id[128];
	struct cand *kept;
	struct pipe *b;
};

static void combine_line_run(struct pipe *b, void *arg)
{
	struct combine_line *l = arg;
	l->kept = combine(b, l->best, l->others, l->nothers, l->id);
}

/*
 * The tuning stages side by side (the default): each stage's profile agent
 * reads the same kernel, so their plans do not wait for one another; each
 * plan's kernel is written, validated and judged against that kernel beside
 * the others, on branches joined in stage order (the records and the
 * outcome do not depend on which finished first). Each stage's row is the
 * best kernel once its candidates are counted. When more than one stage's
 * change wins for a kernel, one more code call brings them together
 * (combine), kept only when faster again. With --top-k, every pool member
 * gets all of this.
 */
static void run_tuning_together(struct pipe *p)
{
	const struct stage *on[STAGE_COUNT];
	struct tune_line lines[8 * STAGE_COUNT];
	struct combine_line combos[8];
	struct cand *next[8 + 8 * STAGE_COUNT + 8];
	int nst = 0, n = 0, nnext = 0, ncombos = 0, npool = p->npool;

	memset(lines, 0, sizeof(lines));
	memset(combos, 0, sizeof(combos));
	for (int s = 0; s < STAGE_COUNT; s++)
		if (stages[s].tuning && p->o->stage_on[s])
			on[nst++] = &stages[s];
	if (!nst)
		return;
	/* Every line reads its parent's profile (and a rule may decide on it):
	 * taken once here, before the lines share the parent. */
	for (int i = 0; i < npool; i++) {
		next[nnext++] = p->pool[i];
		profile(p, p->pool[i]);
	}
	for (int j = 0; j < nst; j++)
		for (int i = 0; i < npool; i++, n++) {
			lines[n].st = on[j];
			lines[n].parent = p->pool[i];
			line_id(lines[n].id, sizeof(lines[n].id), on[j]->name, i, npool);
			lines[n].b = pipe_fork(p);
			branch_start(lines[n].b, tune_line_run, &lines[n]);
		}
	for (int k = 0; k < n; k++)
		branch_wait(lines[k].b);
	for (int k = 0; k < n; k++) {
		pipe_join(p, lines[k].b);
		if (lines[k].accepted)
			next[nnext++] = lines[k].accepted;
		if ((k + 1) % npool == 0) {
			/* The stage's row: the best once its candidates count. */
			struct cand *upto[8 + 8 * STAGE_COUNT];
			memcpy(upto, next, (size_t)nnext * sizeof(*upto));
			set_pool(p, upto, nnext);
			stage_row(p, lines[k].st);
		}
	}
	/* More than one stage won for a kernel: bring the changes together. */
	for (int i = 0; i < npool && !p->stop; i++) {
		struct combine_line *c = &combos[ncombos];
		for (int k = i; k < n; k += npool) {
			struct cand *a = lines[k].accepted;
			if (!a)
				continue;
			if (!c->best || a->ms < c->best->ms) {
				if (c->best)
					c->others[c->nothers++] = c->best;
				c->best = a;
			} else
				c->others[c->nothers++] = a;
		}
		if (!c->nothers) {
			memset(c, 0, sizeof(*c));
			continue;
		}
		line_id(c->id, sizeof(c->id), stages[STAGE_COMBINE].name, i, npool);
		c->b = pipe_fork(p);
		branch_start(c->b, combine_line_run, c);
		ncombos++;
	}
	for (int k = 0; k < ncombos; k++)
		branch_wait(combos[k].b);
	for (int k = 0; k < ncombos; k++) {
		pipe_join(p, combos[k].b);
		if (combos[k].kept)
			next[nnext++] = combos[k].kept;
	}
	set_pool(p, next, nnext);
	if (ncombos)
		stage_row(p, &stages[STAGE_COMBINE]);
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

	run_seeds(p, &seeds_at_sol);
	if (!p->npool && !p->stop)
		decide(p, "seed", DEC_NO_VALID_SEED, NULL);
	check_sol(p, o->refine && !seeds_at_sol ? "refine" : "seed");
	if (o->tuning_together && p->npool && !p->stop && !p->at_sol)
		run_tuning_together(p);
	for (int s = 0; s < STAGE_COUNT && !o->tuning_together && p->npool && !p->stop && !p->at_sol; s++)
		if (stages[s].tuning && o->stage_on[s]) {
			run_tuning(p, &stages[s]);
			check_sol(p, stages[s].name);
		}
	/* A write the store refused in the last steps (a join's records, the
	 * final decisions) stops the task too: nothing may end as done whose
	 * record is not whole. */
	store_broken(p);
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
