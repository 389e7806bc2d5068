/* task.c: one task: baseline, pipeline, final kernel, store rows, result summary. */
#include "task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../agents/context.h"
#include "../pipeline/table.h"
#include "../util/beat.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/hash.h"
#include "../util/timeutil.h"

char *task_id_of(const char *path, char **group)
{
	char *copy = xstrdup(path), *slash = strrchr(copy, '/'), *stem, *dot, *id;
	const char *grp = "tasks";
	if (slash) {
		*slash = '\0';
		stem = slash + 1;
		grp = strrchr(copy, '/') ? strrchr(copy, '/') + 1 : copy;
		if (!*grp || !strcmp(grp, "."))
			grp = "tasks";
	} else {
		stem = copy;
	}
	dot = strrchr(stem, '.');
	if (dot)
		*dot = '\0';
	id = xasprintf("%s__%s", grp, stem);
	for (char *p = id; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') && !(*p >= '0' && *p <= '9') &&
		    *p != '_' && *p != '-' && *p != '.')
			*p = '_';
	if (group)
		*group = xstrdup(grp);
	free(copy);
	return id;
}

/* ---- the store sink: recorder events become rows ---- */

struct sink_ctx {
	struct run_shared *rc;
	struct task_state *ts;
};

static int sink_call(void *ctx, json_t *call)
{
	struct sink_ctx *s = ctx;
	return store_add_call(s->rc->store, s->rc->run_id, s->ts->task_id, call);
}

/* agents.on_usage: the live display's figures (agents.c counts). */
static void live_usage(void *ctx, long tokens, double cost_usd)
{
	struct sink_ctx *s = ctx;
	pthread_mutex_lock(&s->rc->mu);
	s->ts->tokens += tokens;
	s->ts->cost += cost_usd;
	pthread_mutex_unlock(&s->rc->mu);
}

static int sink_candidate(void *ctx, const char *id, const char *stage, const char *source, json_t *eval)
{
	struct sink_ctx *s = ctx;
	return store_add_candidate(s->rc->store, s->rc->run_id, s->ts->task_id, id, stage, source, eval);
}

static int sink_profile(void *ctx, const char *id, json_t *profile)
{
	struct sink_ctx *s = ctx;
	return store_add_profile(s->rc->store, s->rc->run_id, s->ts->task_id, id, profile);
}

static int sink_decision(void *ctx, json_t *d)
{
	struct sink_ctx *s = ctx;
	return store_add_decision(s->rc->store, s->rc->run_id, s->ts->task_id, d);
}

static int sink_step(void *ctx, json_t *step)
{
	struct sink_ctx *s = ctx;
	return store_add_step(s->rc->store, s->rc->run_id, s->ts->task_id, step);
}

static void progress(void *ctx, const char *stage, const char *text)
{
	struct sink_ctx *s = ctx;
	pthread_mutex_lock(&s->rc->mu);
	snprintf(s->ts->stage, sizeof(s->ts->stage), "%s", stage);
	pthread_mutex_unlock(&s->rc->mu);
	if (s->rc->print_progress)
		fprintf(stderr, "egg: [%s] %s\n", stage, text);
}

/* The baseline phase's lines (egg optimize): what it does when it starts,
 * each step of the worker's, and a line at least every BEAT_S while one
 * lasts (util/beat.h). */
struct baseline_say {
	struct sink_ctx *sc;
	struct beat beat;
};

static void baseline_progress(void *arg, const char *step, double job_s)
{
	struct baseline_say *b = arg;
	char text[256];
	if (beat_due(&b->beat, step, job_s) == BEAT_NONE)
		return;
	snprintf(text, sizeof(text), "%s (%.0f s)", beat_step(&b->beat), beat_seconds(&b->beat));
	progress(b->sc, "baseline", text);
}

static json_t *failure(const char *task);

/*
 * The task's end: its state and summary from its stop record (the one
 * writer of the record into a result: stop_write), then the store's row.
 * When the store refuses that row the task did not finish, whatever its
 * pipeline found: it is stopped (exit 3, a resume runs it again) with why,
 * and the stop is written in place of the summary when the store takes a
 * smaller write.
 */
static void finish(struct run_shared *rc, struct task_state *ts, const struct stop *stop, json_t *result)
{
	enum task_status status = stop_task_status(stop);
	pthread_mutex_lock(&rc->mu);
	ts->status = status;
	ts->stop = *stop;
	stop_write(stop, result);
	json_object_set_new(result, "wall_s", json_real((time_mono_ms() - ts->started) / 1000));
	if (json_is_object(json_object_get(result, "time")))
		json_object_set_new(json_object_get(result, "time"), "wall_s",
				    json_real((time_mono_ms() - ts->started) / 1000));
	json_object_set_new(result, "device", json_string(pool_device_name(rc->pool, ts->device)));
	json_decref(ts->result);
	ts->result = result;
	ts->running = 0;
	ts->finished = 1;
	ts->ended = time_mono_ms();
	pthread_mutex_unlock(&rc->mu);
	if (rc->store && store_task_finish(rc->store, rc->run_id, ts->task_id, status, result) < 0) {
		struct stop refused;
		json_t *row = failure(ts->path);
		stop_set(&refused, STOP_STORE, NULL, "stopped: the run store could not record the task's end (%s): %s",
			 task_status_name(status), err_msg());
		err_clear();
		json_object_set(row, "run_dir", json_object_get(result, "run_dir"));
		stop_write(&refused, row);
		pthread_mutex_lock(&rc->mu);
		ts->status = stop_task_status(&refused);
		ts->stop = refused;
		json_decref(ts->result);
		ts->result = row;
		pthread_mutex_unlock(&rc->mu);
		store_task_finish(rc->store, rc->run_id, ts->task_id, ts->status, row);
	}
	err_clear();
}

/* The task ends without a result of its own ({task, found: false}, or
 * `result` when not NULL), stopped for `cause` and `why`. */
static void finish_stopped(struct run_shared *rc, struct task_state *ts, enum stop_cause cause, const char *why,
			   json_t *result)
{
	struct stop s;
	stop_set(&s, cause, NULL, "%s", why);
	finish(rc, ts, &s, result ? result : failure(ts->path));
}

/* The task ends on the pending error: failed when the task is unusable
 * (ERR_INPUT), stopped otherwise; one whose job its device's memory cannot
 * hold says so (STOP_NO_MEMORY), since running it again will not help
 * (outcome.c advises accordingly). `result` as finish_stopped's. */
static void finish_on_error(struct run_shared *rc, struct task_state *ts, json_t *result)
{
	enum err_kind k = err_kind();
	finish_stopped(rc, ts, k == ERR_INPUT ? STOP_INPUT : k == ERR_NO_MEMORY ? STOP_NO_MEMORY : STOP_WORKER, err_msg(),
		       result);
}

/* The summary object of one task's run (also `egg optimize --json`). */
static json_t *summary_of(const char *task, const char *device, const char *run_dir, const char *final_path,
			 const json_t *baseline, const struct pipeline_result *r, const struct agents *a)
{
	json_t *s = json_pack("{s:s, s:s, s:s, s:b, s:s?, s:s?}", "task", task, "device", device, "run_dir", run_dir,
			      "found", r->found, "final_kernel", final_path, "candidate", r->id);
	const json_t *e = r->eval;
	json_object_set(s, "kernel_ms", json_object_get(e, "kernel_ms") ?: json_null());
	json_object_set(s, "eager_ms", json_object_get(baseline, "eager_ms") ?: json_null());
	/* The existing kernel, a third baseline (absent without one). */
	if (json_object_get(baseline, "existing_path")) {
		json_object_set(s, "existing_path", json_object_get(baseline, "existing_path"));
		json_object_set(s, "existing_ms", json_object_get(baseline, "existing_ms") ?: json_null());
		json_object_set(s, "speedup_existing", json_object_get(e, "speedup_existing") ?: json_null());
		json_object_set(s, "existing_error", json_object_get(baseline, "existing_error") ?: json_null());
	}
	json_object_set(s, "compile_ms", json_object_get(baseline, "compile_ms") ?: json_null());
	json_object_set(s, "speedup_eager", json_object_get(e, "speedup_eager") ?: json_null());
	json_object_set(s, "speedup_compile", json_object_get(e, "speedup_compile") ?: json_null());
	/* The speed of light (absent without a calibration or a FLOP count). */
	json_object_set(s, "roofline_ms", json_object_get(baseline, "roofline_ms") ?: json_null());
	json_object_set(s, "roofline", json_object_get(baseline, "roofline") ?: json_null());
	json_object_set(s, "sol_pct", json_object_get(e, "sol_pct") ?: json_null());
	if (json_is_number(json_object_get(e, "practical_pct")))
		json_object_set(s, "practical_pct", json_object_get(e, "practical_pct"));
	json_object_set(s, "eager_sol_pct", json_object_get(baseline, "eager_sol_pct") ?: json_null());
	json_object_set(s, "compile_sol_pct", json_object_get(baseline, "compile_sol_pct") ?: json_null());
	json_object_set(s, "stages", r->stage_rows);
	json_object_set_new(s, "usage", usage_json(&a->used));
	/* Where the task's time went (wall_s is set when it finishes): the
	 * sums run over calls and jobs that overlapped, so they may exceed it. */
	json_object_set_new(s, "time", json_pack("{s:f, s:f, s:f, s:i}", "llm_s", r->llm_s, "eval_s", r->eval_s,
						 "device_wait_s", r->device_wait_s, "llm_chain", r->llm_chain));
	stop_write(&r->stop, s);
	return s;
}

/* The task's existing kernel: --existing, else TASK.existing.py beside the
 * task when present; NULL when there is none. Owned. */
static char *existing_path(const struct run_shared *rc, const char *task)
{
	char *beside;
	size_t n = strlen(task);
	if (rc->existing)
		return xstrdup(rc->existing);
	if (n < 3 || strcmp(task + n - 3, ".py"))
		return NULL;
	beside = xasprintf("%.*s.existing.py", (int)(n - 3), task);
	if (fs_exists(beside))
		return beside;
	free(beside);
	return NULL;
}

/*
 * Evaluates the task's existing kernel like any candidate (same rules, same
 * baseline). A pass makes its time a third baseline (`existing_ms` in the
 * baseline, so that every later verdict gets `speedup_existing`); a failure
 * is reported (`existing_error`) and the kernel not used. Returns its
 * evaluation when it passed (owned), else NULL; *source gets its text.
 */
static json_t *evaluate_existing(struct run_shared *rc, struct task_state *ts, struct recorder *rec,
				 const struct eval_opts *eo, const char *task, json_t *baseline, const char *path,
				 struct buf *source)
{
	json_t *res;
	json_object_set_new(baseline, "existing_path", json_string(path));
	if (fs_read(path, source) < 0) {
		json_object_set_new(baseline, "existing_error", json_string(err_msg()));
		err_clear();
		return NULL;
	}
	res = eval_candidate_pooled(rc->pool, ts->device, eo, task, buf_str(source), baseline);
	if (!res) {
		json_object_set_new(baseline, "existing_error", json_sprintf("not evaluated: %s", err_msg()));
		err_clear();
		return NULL;
	}
	recorder_candidate(rec, "existing", "existing", buf_str(source), res);
	if (!eval_passed(res)) {
		json_object_set_new(baseline, "existing_error",
				    json_sprintf("failed at %s: %s", json_string_value(json_object_get(res, "stage")) ?: "?",
						 json_string_value(json_object_get(res, "reason")) ?: "no reason given"));
		json_decref(res);
		return NULL;
	}
	json_object_set(baseline, "existing_ms", json_object_get(res, "kernel_ms"));
	return res;
}

static json_t *failure(const char *task)
{
	return json_pack("{s:s, s:b}", "task", task, "found", 0);
}

/* A verdict as a number-or-null field of a judged pair's summary. */
static void copy_field(json_t *to, const char *key, const json_t *from)
{
	json_object_set(to, key, json_object_get(from, key) ?: json_null());
}

/*
 * The summary of a judged pair (egg eval --batch): egg's verdict, and the
 * fields KernelBench's own eval records carry (compiled, correctness,
 * runtime and ref_runtime in ms), so that its scripts can read it.
 */
static json_t *judged_summary(const struct task_state *ts, const char *device, const char *dir,
			      const json_t *baseline, const json_t *res)
{
	static const char *const from_verdict[] = { "kernel_ms", "speedup_eager", "speedup_compile", "sol_pct", "trials",
						    "correct_trials", "max_abs_err", "flags" };
	static const char *const from_baseline[] = { "eager_ms", "compile_ms", "roofline_ms", "eager_sol_pct",
						     "compile_sol_pct" };
	const char *verdict = json_string_value(json_object_get(res, "verdict")) ?: "fail";
	const char *stage = json_string_value(json_object_get(res, "stage")) ?: "?";
	int pass = !strcmp(verdict, "pass");
	int compiled = pass || json_integer_value(json_object_get(res, "trials_run")) > 0 ||
		       eval_stage_of(res) > EVAL_AT_COMPILE;
	int correct = pass || (json_integer_value(json_object_get(res, "trials")) > 0 &&
			       json_integer_value(json_object_get(res, "correct_trials")) ==
				       json_integer_value(json_object_get(res, "trials")));
	json_t *s = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:s, s:s}", "task", ts->path, "kernel", ts->kernel,
			      "task_id", ts->task_id, "group", ts->group, "device", device, "run_dir", dir, "found",
			      pass, "verdict", verdict, "stage", stage);
	json_object_set(s, "reason", json_object_get(res, "reason") ?: json_null());
	if (pass)
		json_object_set_new(s, "final_kernel", json_string(ts->kernel));
	else
		json_object_set_new(s, "no_kernel", json_sprintf("failed at %s: %s", stage,
								 json_string_value(json_object_get(res, "reason")) ?: "no reason given"));
	for (size_t i = 0; i < sizeof(from_verdict) / sizeof(from_verdict[0]); i++)
		copy_field(s, from_verdict[i], res);
	for (size_t i = 0; i < sizeof(from_baseline) / sizeof(from_baseline[0]); i++)
		copy_field(s, from_baseline[i], baseline);
	json_object_set_new(s, "compiled", json_boolean(compiled));
	json_object_set_new(s, "correctness", json_boolean(correct));
	json_object_set(s, "runtime", pass ? json_object_get(res, "kernel_ms") ?: json_null() : json_real(-1));
	json_object_set(s, "ref_runtime", json_object_get(baseline, "eager_ms") ?: json_null());
	return s;
}

/* A judge-only run's task: the pair's kernel evaluated like any candidate,
 * against the task's baseline (shared by every kernel of one task through
 * the evaluation cache); the verdict is the task's result. */
static void judge_kernel(struct run_shared *rc, struct task_state *ts, struct recorder *rec,
			 const struct eval_opts *eo, const char *task, const json_t *baseline, const char *dir)
{
	struct buf src = BUF_INIT;
	json_t *res, *s;
	pthread_mutex_lock(&rc->mu);
	snprintf(ts->stage, sizeof(ts->stage), "judge");
	pthread_mutex_unlock(&rc->mu);
	if (fs_read(ts->kernel, &src) < 0) {
		s = failure(ts->path);
		json_object_set_new(s, "kernel", json_string(ts->kernel));
		finish_stopped(rc, ts, STOP_INPUT, err_msg(), s);
		return;
	}
	res = eval_candidate_pooled(rc->pool, ts->device, eo, task, buf_str(&src), baseline);
	if (!res) {
		s = failure(ts->path);
		json_object_set_new(s, "kernel", json_string(ts->kernel));
		finish_on_error(rc, ts, s);
		buf_release(&src);
		return;
	}
	recorder_candidate(rec, "kernel", "judge", buf_str(&src), res);
	s = judged_summary(ts, eo->device, dir, baseline, res);
	recorder_write_json(rec, "summary.json", s);
	finish_stopped(rc, ts, STOP_NONE, "", s);
	json_decref(res);
	buf_release(&src);
}

/* Already at the speed of light in PyTorch (--stop-at-sol with the skip on):
 * nothing to gain, the task is done without a kernel. Returns 1 when it was. */
static int skipped_at_sol(struct run_shared *rc, struct task_state *ts, const json_t *baseline)
{
	json_t *r;
	char *why;
	if (!rc->po.skip_eager_at_sol || rc->po.stop_at_sol <= 0 ||
	    !(json_number_value(json_object_get(baseline, "eager_sol_pct")) >= rc->po.stop_at_sol))
		return 0;
	r = failure(ts->path);
	why = xasprintf("skipped: PyTorch eager already runs at %.0f%% of the roofline bound (--stop-at-sol %.0f)",
			json_number_value(json_object_get(baseline, "eager_sol_pct")), rc->po.stop_at_sol);
	json_object_set_new(r, "no_kernel", json_string(why));
	json_object_set_new(r, "skipped_at_sol", json_true());
	json_object_set(r, "eager_ms", json_object_get(baseline, "eager_ms"));
	json_object_set(r, "eager_sol_pct", json_object_get(baseline, "eager_sol_pct"));
	json_object_set(r, "roofline_ms", json_object_get(baseline, "roofline_ms"));
	free(why);
	finish_stopped(rc, ts, STOP_NONE, "", r);
	return 1;
}

/* What one task's pipeline run works with and leaves behind. */
struct task_work {
	struct run_shared *rc;
	struct task_state *ts;
	struct recorder *rec;
	struct eval_opts eo;
	const char *task;		/* the task's source */
	const char *dir;		/* its run folder */
	const json_t *facts, *baseline;
	const json_t *existing_eval;	/* the existing kernel's passing evaluation, or NULL */
	const char *existing_source;
	char *recorded_device_text;	/* a resumed task's, from its first pass */
};

/* The run folder's outputs: the final kernel, summary.json, the stage table. */
static json_t *write_outputs(struct task_work *w, const struct pipeline_result *res, const struct agents *agents)
{
	char *final_path = NULL, *path;
	json_t *summary;
	FILE *f;
	if (res->found) {
		final_path = fs_join(w->dir, "final.py");
		if (fs_write_atomic(final_path, res->source, strlen(res->source)) < 0) {
			free(final_path);
			final_path = NULL;
			err_clear();
		}
	}
	summary = summary_of(w->ts->path, w->eo.device, w->dir, final_path, w->baseline, res, agents);
	free(final_path);
	json_object_set_new(summary, "group", json_string(w->ts->group));
	json_object_set_new(summary, "task_id", json_string(w->ts->task_id));
	/* A task that ran to its end without a kernel: why, in its own field
	 * (not a stop: the task is done). */
	if (!res->found && res->stop.cause == STOP_NONE)
		json_object_set_new(summary, "no_kernel",
				    json_sprintf("no seed passed evaluation (the decisions in %s say why each failed)", w->dir));
	if (res->sol_stop)
		json_object_set(summary, "sol_stop", res->sol_stop);
	if (json_array_size(res->rule_skips))
		json_object_set(summary, "rule_skips", res->rule_skips);
	if (json_array_size(res->extras))
		json_object_set(summary, "extras", res->extras);
	if (recorder_failed(w->rec))
		json_object_set_new(summary, "record_error",
				    json_sprintf("some files of the run folder %s could not be written (a full disk?): the "
						 "store holds the whole record", w->dir));
	recorder_write_json(w->rec, "summary.json", summary);
	/* The stage table egg optimize prints, kept with the run. */
	path = fs_join(w->dir, "stages.txt");
	if ((f = fopen(path, "w"))) {
		pipeline_print_table(f, w->ts->path, w->eo.device, w->eo.clock, w->baseline,
				     json_object_get(summary, "stages"));
		pipeline_print_time(f, json_object_get(summary, "time"));
		pipeline_print_usage(f, json_object_get(summary, "usage"));
		fclose(f);
	}
	free(path);
	return summary;
}

/* The device description a resumed task's first pass recorded in its
 * run.json (read before the recorder replays the folder), or NULL. The
 * calibration behind the measured peaks may have been made again since (a
 * fresh machine, a new egg), and a prompt that changed would ask the model
 * again for every call already answered. */
static char *recorded_device_text(const struct run_shared *rc, const char *dir, const char *device)
{
	char *path, *text = NULL;
	json_t *recorded;
	if (!rc->resumed)
		return NULL;
	path = fs_join(dir, "run.json");
	recorded = json_load_file(path, 0, NULL);
	free(path);
	if (recorded && !strcmp(json_string_value(json_object_get(recorded, "device")) ?: "", device) &&
	    json_string_value(json_object_get(recorded, "device_text")))
		text = xstrdup(json_string_value(json_object_get(recorded, "device_text")));
	json_decref(recorded);
	return text;
}

/* The EGG pipeline on the task, its agents set up from the run's settings;
 * the task ends with the pipeline's outcome. */
static void run_pipeline(struct task_work *w, struct sink_ctx *sc)
{
	struct run_shared *rc = w->rc;
	struct task_state *ts = w->ts;
	struct agents agents;
	struct pipeline_env env;
	struct pipeline_result res = { 0 };
	char *device_text = w->recorded_device_text ? xstrdup(w->recorded_device_text)
						     : agents_task_device_text(w->facts, w->eo.device, w->baseline);
	char *precision_note = agents_precision_note(
		w->eo.precision, json_is_true(json_object_get(json_object_get(w->baseline, "work"), "half")),
		json_object_get(w->baseline, "tolerance"), w->eo.atol, w->eo.rtol);
	json_t *summary, *run;

	run = json_pack("{s:s, s:s, s:s, s:s, s:s, s:O, s:O}", "egg", EGG_VERSION, "task", ts->path, "device",
			w->eo.device, "device_text", device_text, "model", rc->cfg->model, "baseline", w->baseline,
			"device_facts", w->facts);
	recorder_write_json(w->rec, "run.json", run);
	json_decref(run);
	memset(&agents, 0, sizeof(agents));
	agents.llm = rc->llm;
	agents.rec = w->rec;
	agents.device_facts = device_text;
	agents.precision_note = precision_note;
	agents.task_source = w->task;
	agents.task_name = ts->task_id;
	agents.max_tokens = rc->task_max_tokens;
	agents.max_cost = rc->task_max_cost;
	agents.run_budget = rc->budget;
	agents.on_usage = live_usage;
	agents.usage_ctx = sc;
	agents.on_note = progress;
	agents.note_ctx = sc;
	memset(&env, 0, sizeof(env));
	env.pool = rc->pool;
	env.device = ts->device;
	env.eval = w->eo;
	env.baseline = w->baseline;
	env.agents = &agents;
	env.rec = env.store_rec = w->rec;
	env.task_source = w->task;
	env.existing_source = w->existing_eval ? w->existing_source : NULL;
	env.existing_eval = w->existing_eval;
	env.progress = progress;
	env.progress_ctx = sc;
	pipeline_run(&env, ts->po ? ts->po : &rc->po, &res);	/* egg's own failure is its stop (STOP_EGG) */
	summary = write_outputs(w, &res, &agents);
	finish(rc, ts, &res.stop, summary);
	pipeline_result_clear(&res);
	free(precision_note);
	free(device_text);
}

/* torch.compile's own output code for the task (the baseline's
 * "compile_code"), written beside its records as torch_compile.py and taken
 * out of the baseline (the prompts carry its summary). */
static void keep_compile_code(struct recorder *rec, json_t *baseline)
{
	if (!json_is_string(json_object_get(baseline, "compile_code")))
		return;
	recorder_write_text(rec, "torch_compile.py", json_string_value(json_object_get(baseline, "compile_code")));
	json_object_del(baseline, "compile_code");
}

void task_run(struct run_shared *rc, struct task_state *ts)
{
	struct buf task = BUF_INIT, existing_src = BUF_INIT;
	struct sink_ctx sc = { rc, ts };
	struct baseline_say say = { &sc, BEAT_INIT };
	struct recorder_sink sink = { sink_call, sink_candidate, sink_profile, sink_decision, sink_step, &sc };
	struct task_work w = { rc, ts, NULL, rc->eo, NULL, NULL, NULL, NULL, NULL, NULL, NULL };
	struct pool_slot *slot;
	json_t *facts = NULL, *baseline = NULL, *existing_eval = NULL;
	char *existing = existing_path(rc, ts->path);
	char *dir = ts->run_dir ? xstrdup(ts->run_dir) : fs_join(rc->runs_dir, ts->task_id);

	pthread_mutex_lock(&rc->mu);
	ts->running = 1;
	ts->started = time_mono_ms();
	snprintf(ts->stage, sizeof(ts->stage), "baseline");
	ts->tokens = 0;
	ts->cost = 0;
	pthread_mutex_unlock(&rc->mu);
	if (rc->store && store_task_begin(rc->store, rc->run_id, ts->task_id) < 0) {
		char *why = xasprintf("stopped: the run store cannot be written: %s", err_msg());
		err_clear();
		finish_stopped(rc, ts, STOP_STORE, why, NULL);
		free(why);
		goto out;
	}
	w.eo.device = pool_device_name(rc->pool, ts->device);
	w.eo.lock = pool_device_lock(rc->pool, ts->device);
	w.eo.cache = rc->cache;
	w.eo.cache_verdicts = 1;
	if (fs_read(ts->path, &task) < 0) {
		finish_stopped(rc, ts, STOP_INPUT, err_msg(), NULL);
		goto out;
	}
	w.recorded_device_text = recorded_device_text(rc, dir, w.eo.device);
	if (!(w.rec = recorder_open(dir, rc->store ? &sink : NULL))) {
		finish_stopped(rc, ts, STOP_STORE, err_msg(), NULL);
		goto out;
	}
	/* The task's own progress lines, not whatever its run's options carry. */
	w.eo.progress = NULL;
	w.eo.progress_arg = NULL;
	if (rc->print_progress) {
		char *what = xasprintf("measuring the baselines (eager, torch.compile) of '%s' on %s", ts->path,
				       w.eo.device);
		progress(&sc, "baseline", what);
		beat_begin(&say.beat, what, 0);
		free(what);
		w.eo.progress = baseline_progress;
		w.eo.progress_arg = &say;
	}
	slot = pool_acquire(rc->pool, ts->device);
	worker_set_progress(slot->worker, w.eo.progress, w.eo.progress_arg);	/* the worker's start */
	facts = eval_device_facts(slot->worker, w.eo.device);
	worker_set_progress(slot->worker, NULL, NULL);
	if (facts)
		pool_set_memory(rc->pool, ts->device, eval_device_budget(facts, w.eo.device));
	baseline = facts ? eval_baseline(slot->worker, &w.eo, buf_str(&task)) : NULL;
	pool_release(rc->pool, slot);
	w.eo.progress = NULL;
	w.eo.progress_arg = NULL;
	if (!baseline) {
		finish_on_error(rc, ts, NULL);
		goto out;
	}
	keep_compile_code(w.rec, baseline);
	if (ts->kernel) {
		judge_kernel(rc, ts, w.rec, &w.eo, buf_str(&task), baseline, dir);
		goto out;
	}
	if (skipped_at_sol(rc, ts, baseline))
		goto out;
	if (existing) {
		pthread_mutex_lock(&rc->mu);
		snprintf(ts->stage, sizeof(ts->stage), "existing");
		pthread_mutex_unlock(&rc->mu);
		existing_eval = evaluate_existing(rc, ts, w.rec, &w.eo, buf_str(&task), baseline, existing, &existing_src);
	}
	w.task = buf_str(&task);
	w.dir = dir;
	w.facts = facts;
	w.baseline = baseline;
	w.existing_eval = existing_eval;
	w.existing_source = buf_str(&existing_src);
	run_pipeline(&w, &sc);
out:
	recorder_close(w.rec);
	json_decref(facts);
	json_decref(baseline);
	json_decref(existing_eval);
	buf_release(&existing_src);
	free(existing);
	free(w.recorded_device_text);
	free(dir);
	buf_release(&task);
}
