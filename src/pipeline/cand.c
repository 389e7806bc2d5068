/* cand.c: a candidate's life in the pipeline: evaluated, profiled, validated with its repairs, recorded. */
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
		pipe_progress(ev->p, ev->c->stage, "%s: %s (%.0f s)", ev->c->id, beat_step(&ev->beat),
			 beat_seconds(&ev->beat));
}

/* Evaluates c's source; NULL (and p->stop) on an infrastructure failure. */
static json_t *evaluate(struct pipe *p, const struct cand *c)
{
	double t0 = time_mono_ms(), t1;
	struct pool_slot *slot;
	struct evaluating ev = { p, c, BEAT_INIT };
	struct eval_opts o = p->env->eval;
	json_t *res;
	if (pipe_store_broken(p))
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
		struct stop s;
		stop_set(&s, err_kind() == ERR_NO_MEMORY ? STOP_NO_MEMORY : STOP_WORKER, NULL, "evaluation failed: %s",
			 err_msg());
		pipe_stop(p, &s);
	}
	return res;
}

json_t *pipe_profile(struct pipe *p, struct cand *c)
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
		pipe_progress(p, c->stage, "profiling %s", c->id);
		c->profile = profile_candidate(slot->worker, &p->env->eval, p->env->task_source, c->source);
		pool_release(p->env->pool, slot);
		p->wait_ms += t1 - t0;
		p->eval_ms += time_mono_ms() - t1;
	}
	recorder_profile(p->env->rec, c->id, c->profile);
	return c->profile;
}

/* ---- candidates ---- */

struct cand *pipe_new_cand(struct pipe *p, const char *id, const char *parent, const char *stage, char *source)
{
	struct cand *c;
	if (p->ncands == MAX_CANDS) {
		struct stop s;
		free(source);
		err_set(ERR_INFRA, "egg's candidate table is full (%d candidates)", MAX_CANDS);
		stop_set(&s, STOP_EGG, NULL, "stopped: %s", err_msg());
		pipe_stop(p, &s);
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

void pipe_step(struct pipe *p, const struct cand *c, const char *kind, int accepted_known, int accepted,
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
void pipe_validate(struct pipe *p, struct cand *c, int repairs, const char *kind)
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
			pipe_step(p, c, attempt ? "repair" : kind, 0, 0, NULL);
			pipe_progress(p, c->stage, "%s valid, %.4f ms", c->id, c->ms);
			return;
		}
		pipe_step(p, c, attempt ? "repair" : kind, 0, 0, NULL);
		pipe_progress(p, c->stage, "%s failed at %s", c->id, json_string_value(json_object_get(res, "stage")));
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
				fixed = pipe_code_call(p, P_SINGLE_REPAIR, &v, c->stage, c->id, &oc);
			} else {
				json_t *diag = pipe_json_call(p, P_DEBUG, SCHEMA_DEBUG, &v, c->stage, c->id, &oc);
				if (!diag) {
					pipe_stop_for(p, oc, c->stage, c->id);
					return;
				}
				plan = json_dumps(diag, JSON_INDENT(1));
				json_decref(diag);
				/* The code agent sees the diagnosis, not the raw log. */
				prompt_set(&v, "error_log", NULL);
				prompt_set(&v, "plan", plan);
				fixed = pipe_code_call(p, P_CODE_REPAIR, &v, c->stage, c->id, &oc);
			}
			free(plan);
			if (!fixed) {
				pipe_stop_for(p, oc, c->stage, c->id);
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

/*
 * The second witness: before a candidate may win, Nsight Compute's GPU time
 * of its kernels (the profile the next stage reads anyway) must not exceed
 * its measured time by much. Work hidden from the timer, such as kernels on
 * a stream that does not wait for the timed one, shows up here. Without a
 * pipe_profile (CPU, --no-profile, ncu missing) the check passes.
 */
int pipe_timing_confirmed(struct pipe *p, struct cand *c)
{
	double ncu_ms;
	char note[200];
	if (pipeline_timing_plausible(c->ms, pipe_profile(p, c), &ncu_ms))
		return 1;
	snprintf(note, sizeof(note), "timed at %.4f ms, but Nsight Compute measured %.4f ms of GPU time in its kernels",
		 c->ms, ncu_ms);
	pipe_step(p, c, "selection", 1, 0, note);
	pipe_decide(p, c->stage, DEC_TIMING_DISTRUSTED,
	       json_pack("{s:s, s:f, s:f}", "candidate", c->id, "kernel_ms", c->ms, "ncu_ms", ncu_ms));
	c->valid = 0;
	c->ms = INFINITY;
	return 0;
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
