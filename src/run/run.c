/* run.c: opening, resuming, scheduling and summarising a run of tasks. */
#include "run.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../agents/agents.h"
#include "../report/report.h"
#include "../store/store.h"
#include "../util/beat.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/hash.h"
#include "../util/timeutil.h"

struct run {
	struct run_shared shared;
	const struct config *cfg;
	struct strvec devices;
	char *id;
	char *runs_dir;
	struct budget budget;
	struct task_state *tasks;
	int ntasks;
	int resumed;
	json_t *known;		/* a resumed run's tasks, from the store */
	char *stop_reason;	/* why the run stopped though no task did (run_mark_stopped), or NULL */
	/* execution */
	int next;		/* next task to start */
	int quiet;
	int done_flag;
	pthread_mutex_t queue_mu;
	double t0;
};

/* A run id: UTC time plus a random suffix, e.g. 20261129-101500-3f9a. */
char *run_new_id(const char *hint)
{
	char stamp[32], rnd[8];
	time_t t = time(NULL);
	struct tm tm;
	FILE *f = fopen("/dev/urandom", "rb");
	unsigned v = (unsigned)time_mono_ms();
	if (f) {
		if (fread(&v, sizeof(v), 1, f) != 1)
			v ^= (unsigned)t;
		fclose(f);
	}
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(rnd, sizeof(rnd), "%04x", v & 0xffff);
	return hint ? xasprintf("%s-%s-%s", stamp, hint, rnd) : xasprintf("%s-%s", stamp, rnd);
}

/* What a new and a resumed run both need: store, LLM, cache, workers. */
static struct run *open_common(const struct config *cfg, const struct run_opts *o, const char *id)
{
	struct run *r = xcalloc(1, sizeof(*r));
	char *dir;
	r->cfg = cfg;
	r->id = xstrdup(id);
	for (size_t i = 0; i < o->devices->n; i++)
		strvec_push(&r->devices, o->devices->v[i]);
	pthread_mutex_init(&r->budget.lock, NULL);
	r->budget.max_tokens = o->run_max_tokens;
	r->budget.max_cost = o->run_max_cost;
	pthread_mutex_init(&r->shared.mu, NULL);
	pthread_mutex_init(&r->queue_mu, NULL);
	r->shared.cfg = cfg;
	r->shared.run_id = r->id;
	r->shared.budget = &r->budget;
	r->shared.po = o->po;
	r->shared.existing = o->existing;
	r->shared.judge_only = o->judge_only;
	r->shared.eo = o->eo;
	r->shared.task_max_tokens = o->task_max_tokens;
	r->shared.task_max_cost = o->task_max_cost;
	r->runs_dir = xasprintf("%s/runs/%s", cfg->store, r->id);
	r->shared.runs_dir = r->runs_dir;
	/* A judge-only run asks no model anything. */
	if ((!o->judge_only && !(r->shared.llm = llm_new(cfg, cfg->cache))) || !(r->shared.store = store_open(cfg->store)))
		goto fail;
	/* An endpoint that takes no connection is said before any baseline
	 * is measured (a spool run never uses the network). The reply cache
	 * cannot say up front that it holds every reply the run will ask. */
	if (r->shared.llm && !cfg->llm_spool && llm_check_reachable(r->shared.llm) < 0)
		goto fail;
	if (cfg->cache) {
		dir = fs_join(cfg->store, "eval-cache");
		r->shared.cache = evcache_open(dir);
		free(dir);
		if (!r->shared.cache)
			goto fail;
	}
	/* The run is live while this process holds its lock (store.h): a
	 * reader tells a run whose process is gone from one that runs. */
	if (fs_mkdir_p(r->runs_dir) < 0 || store_run_hold(r->shared.store, r->id) < 0)
		goto fail;
	r->shared.pool = pool_new(cfg, (const char *const *)r->devices.v, (int)r->devices.n,
				  o->workers_per_device > 0 ? o->workers_per_device : 2, r->runs_dir);
	return r;
fail:
	run_close(r);
	return NULL;
}

struct run *run_open(const struct config *cfg, const struct run_opts *o)
{
	char *id = run_new_id(o->id_hint);
	struct run *r = open_common(cfg, o, id);
	free(id);
	if (r && store_run_create(r->shared.store, r->id, o->command, (json_t *)o->config) < 0) {
		run_close(r);
		return NULL;
	}
	return r;
}

struct run *run_resume(const struct config *cfg, const struct run_opts *o, const char *id)
{
	struct run *r = open_common(cfg, o, id);
	if (!r)
		return NULL;
	r->resumed = r->shared.resumed = 1;
	if (!(r->known = store_tasks(r->shared.store, id)) ||
	    store_run_set_status(r->shared.store, id, "running", NULL) < 0) {
		run_close(r);
		return NULL;
	}
	return r;
}

/* Registers one task (id: its own, or the task's GROUP__STEM made unique);
 * a resumed run's finished task stays finished. 0, or -1 (the store). */
static int add_task(struct run *r, const char *path, const char *kernel, char *id, char *group, const char *run_dir)
{
	struct task_state *ts;
	char hex[65] = "";
	struct buf src = BUF_INIT;
	size_t k;
	json_t *t;
	r->tasks = xrealloc(r->tasks, (size_t)(r->ntasks + 1) * sizeof(*r->tasks));
	ts = &r->tasks[r->ntasks];
	memset(ts, 0, sizeof(*ts));
	ts->task_id = id;
	ts->group = group;
	for (int j = 0; j < r->ntasks; j++)
		if (!strcmp(r->tasks[j].task_id, ts->task_id)) {
			char *dup = ts->task_id;
			ts->task_id = xasprintf("%s_%d", dup, r->ntasks);
			free(dup);
			break;
		}
	ts->path = xstrdup(path);
	ts->kernel = kernel ? xstrdup(kernel) : NULL;
	ts->run_dir = run_dir ? xstrdup(run_dir) : NULL;
	if (fs_read(path, &src) == 0)
		hash_hex(src.data ? src.data : "", src.len, hex);
	err_clear();
	buf_release(&src);
	if (store_task_add(r->shared.store, r->id, ts->task_id, ts->path, ts->group, hex) < 0) {
		run_end_on_error(r);
		free(ts->task_id);
		free(ts->group);
		free(ts->path);
		free(ts->kernel);
		free(ts->run_dir);
		memset(ts, 0, sizeof(*ts));
		return -1;
	}
	r->ntasks++;
	/* Finished tasks of a resumed run stay finished; tasks that were
	 * stopped (infrastructure), waiting or interrupted run again. */
	json_array_foreach(r->known, k, t) {
		enum task_status st = task_status_of(json_string_value(json_object_get(t, "status")));
		if (strcmp(ts->task_id, json_string_value(json_object_get(t, "task_id")) ?: ""))
			continue;
		if (task_status_judged(st)) {
			ts->finished = 1;
			ts->status = st;
			ts->result = json_incref(json_object_get(t, "result"));
			stop_read(ts->result, &ts->stop);
		}
	}
	return 0;
}

int run_add_tasks(struct run *r, const struct strvec *paths, const char *run_dir)
{
	for (size_t i = 0; i < paths->n; i++) {
		char *group, *id = task_id_of(paths->v[i], &group);
		if (add_task(r, paths->v[i], NULL, id, group, run_dir) < 0)
			return -1;
	}
	return 0;
}

int run_add_pairs(struct run *r, const struct strvec *tasks, const struct strvec *kernels)
{
	for (size_t i = 0; i < tasks->n && i < kernels->n; i++) {
		char *group, *task_id = task_id_of(tasks->v[i], &group), *kid = task_id_of(kernels->v[i], NULL);
		const char *stem = strstr(kid, "__") ? strstr(kid, "__") + 2 : kid;
		char *id = xasprintf("%s__%s", task_id, stem);
		free(task_id);
		free(kid);
		if (add_task(r, tasks->v[i], kernels->v[i], id, group, NULL) < 0)
			return -1;
	}
	return 0;
}

int run_set_task_opts(struct run *r, const char *path, const struct pipeline_opts *po, const char *why)
{
	for (int i = 0; i < r->ntasks; i++) {
		struct task_state *ts = &r->tasks[i];
		if (strcmp(ts->path, path))
			continue;
		free(ts->po);
		free(ts->po_why);
		ts->po = xmalloc(sizeof(*ts->po));
		*ts->po = *po;
		ts->po_why = why ? xstrdup(why) : NULL;
		ts->po->effort_why = ts->po_why;
		return 0;
	}
	return -1;
}

static void *task_thread(void *arg)
{
	struct run *r = arg;
	for (;;) {
		struct task_state *ts = NULL;
		pthread_mutex_lock(&r->queue_mu);
		while (r->next < r->ntasks && r->tasks[r->next].finished)
			r->next++;
		if (r->next < r->ntasks)
			ts = &r->tasks[r->next++];
		pthread_mutex_unlock(&r->queue_mu);
		if (!ts)
			return NULL;
		ts->device = pool_place_task(r->shared.pool);
		task_run(&r->shared, ts);
		pool_unplace_task(r->shared.pool, ts->device);
	}
}

static void fmt_time(char *out, size_t n, double s)
{
	if (s < 0 || isnan(s))
		snprintf(out, n, "?");
	else
		snprintf(out, n, "%d:%02d:%02d", (int)(s / 3600), (int)fmod(s / 60, 60), (int)fmod(s, 60));
}

/* Progress on stderr: a redrawn block on a terminal, plain lines otherwise. */
static void *progress_thread(void *arg)
{
	struct run *b = arg;
	int tty = isatty(2), drawn = 0, reported = 0;
	double last_plain = 0;
	for (;;) {
		int done = 0, failed = 0, waiting = 0, stopped = 0, running = 0, finished_now = 0, stop;
		long tokens = 0;
		double cost = 0, elapsed = (time_mono_ms() - b->t0) / 1000, eta;
		char el[32], et[32];
		struct buf out = BUF_INIT;
		pthread_mutex_lock(&b->shared.mu);
		for (int i = 0; i < b->ntasks; i++) {
			const struct task_state *t = &b->tasks[i];
			tokens += t->tokens;
			cost += t->cost;
			if (t->finished) {
				finished_now++;
				failed += t->status == TASK_FAILED;
				waiting += t->status == TASK_WAITING;
				stopped += t->status == TASK_STOPPED;
				done += t->status == TASK_DONE;
			} else if (t->running) {
				running++;
			}
		}
		eta = finished_now ? elapsed / finished_now * (b->ntasks - finished_now) : NAN;
		fmt_time(el, sizeof(el), elapsed);
		fmt_time(et, sizeof(et), eta);
		buf_addf(&out, "egg: run %s: %d/%d done, %d running, %d failed, %d waiting, %d stopped; %ld tokens, $%.4f; "
			 "elapsed %s, ETA %s\n", b->shared.run_id, done, b->ntasks, running, failed, waiting, stopped, tokens,
			 cost, el, et);
		for (int i = 0; i < b->ntasks; i++) {
			const struct task_state *t = &b->tasks[i];
			if (t->running)
				buf_addf(&out, "  %-40.40s [%s] %-10s %7ld tokens $%.4f %5.0f s\n", t->task_id,
					 pool_device_name(b->shared.pool, t->device), t->stage, t->tokens, t->cost,
					 (time_mono_ms() - t->started) / 1000);
		}
		stop = b->done_flag;
		pthread_mutex_unlock(&b->shared.mu);
		if (!b->quiet) {
			if (tty) {
				for (int i = 0; i < drawn; i++)
					fputs("\033[1A\033[2K", stderr);
				fputs(buf_str(&out), stderr);
				drawn = 0;
				for (const char *p = buf_str(&out); *p; p++)
					drawn += *p == '\n';
			} else if (finished_now != reported || elapsed - last_plain >= BEAT_S || stop) {
				/* Plain lines: the summary line only, on change or every BEAT_S. */
				fprintf(stderr, "%.*s", (int)(strchr(buf_str(&out), '\n') - buf_str(&out) + 1), buf_str(&out));
				last_plain = elapsed;
				reported = finished_now;
			}
		}
		buf_release(&out);
		if (stop)
			return NULL;
		time_sleep_ms(tty ? 500 : 1000);
	}
}

/*
 * STORE/runs/RUN_ID/devices.json: per device, the evaluation jobs it served,
 * the most GPU memory its admission let run at once (what a multi-GPU run is
 * judged by), the worker processes started and the jobs run again after a
 * lost worker (a killed Slurm step, say). Written after every execution; a resumed run's file
 * describes its last execution.
 */
static void write_device_use(struct run *r)
{
	json_t *devs = json_array();
	char *path, *text;
	for (int d = 0; d < pool_devices(r->shared.pool); d++)
		json_array_append_new(devs, json_pack("{s:s, s:s, s:I, s:I, s:I, s:I}", "device",
						      pool_device_name(r->shared.pool, d), "lock",
						      pool_device_lock(r->shared.pool, d), "jobs",
						      (json_int_t)pool_jobs(r->shared.pool, d), "admitted_peak_bytes",
						      (json_int_t)pool_peak_memory(r->shared.pool, d), "worker_starts",
						      (json_int_t)pool_worker_starts(r->shared.pool, d), "jobs_retried",
						      (json_int_t)pool_worker_retries(r->shared.pool, d)));
	text = json_dumps(devs, JSON_INDENT(1));
	path = xasprintf("%s/devices.json", r->runs_dir);
	if (text && fs_mkdir_p(r->runs_dir) == 0)
		fs_write_atomic_nosync(path, text, strlen(text));
	free(text);
	free(path);
	json_decref(devs);
}

void run_execute(struct run *r, int jobs, enum run_progress progress)
{
	pthread_t *threads, board;
	struct run_outcome o;
	if (jobs <= 0)
		jobs = 2 * (int)r->devices.n;
	r->shared.print_progress = progress == RUN_EVENTS;
	r->quiet = progress != RUN_BOARD;
	if (r->shared.llm)
		llm_set_quiet(r->shared.llm, progress == RUN_QUIET);
	if (r->shared.llm)
		llm_set_wait_notices(r->shared.llm, progress == RUN_EVENTS);
	r->t0 = time_mono_ms();
	r->done_flag = 0;
	if (progress == RUN_BOARD)
		pthread_create(&board, NULL, progress_thread, r);
	threads = xcalloc((size_t)jobs, sizeof(*threads));
	for (int i = 0; i < jobs; i++)
		pthread_create(&threads[i], NULL, task_thread, r);
	for (int i = 0; i < jobs; i++)
		pthread_join(threads[i], NULL);
	pthread_mutex_lock(&r->shared.mu);
	r->done_flag = 1;
	pthread_mutex_unlock(&r->shared.mu);
	if (progress == RUN_BOARD)
		pthread_join(board, NULL);
	free(threads);
	write_device_use(r);
	run_outcome_of(r, &o);
	if (store_run_set_status(r->shared.store, r->id, run_outcome_status(&o), NULL) < 0) {
		char *why = xasprintf("the run store could not record the end of run %s: %s", r->id, err_msg());
		err_clear();
		run_mark_stopped(r, why);
		free(why);
	}
}

void run_mark_stopped(struct run *r, const char *why)
{
	if (!r->stop_reason)
		r->stop_reason = xstrdup(why);
	/* Once more, as stopped and why: a store that refused a write may take
	 * the next (a lock freed, a page freed); when it does not, the run stays
	 * "running" there, unfinished, and a resume finishes it. */
	store_run_set_status(r->shared.store, r->id, "stopped", r->stop_reason);
	err_clear();
}

const char *run_stop_reason(const struct run *r)
{
	return r->stop_reason;
}

void run_outcome_of(const struct run *r, struct run_outcome *o)
{
	outcome_count(r->tasks, r->ntasks, r->stop_reason, o);
}

/* The store records the run's end as `status` ("refused" or "stopped") and
 * why; the pending error is cleared. A refused run the store does not take
 * stays "running" there, and reads stopped (its process gone): the user's
 * input error is still the one line said. */
static void record_end(struct run *r, const char *status, const char *why)
{
	if (!strcmp(status, "stopped"))
		run_mark_stopped(r, why);
	else
		store_run_set_status(r->shared.store, r->id, status, why);
	err_clear();
}

void run_end_on_error(struct run *r)
{
	enum err_kind k = err_kind();
	const char *status = run_status_on_error(k);
	char *why;
	if (!r || !status)
		return;
	why = xstrdup(err_msg());
	record_end(r, status, why);
	err_set(k, "%s", why);
	free(why);
}

int run_exit_code(struct run *r, enum outcome_rule rule, const struct outcome_words *w)
{
	struct run_outcome o;
	run_outcome_of(r, &o);
	if (run_outcome_refused(&o, rule))
		record_end(r, run_status_on_error(ERR_INPUT), r->tasks[0].stop.reason);
	return run_outcome_exit(&o, r->tasks, rule, w);
}

struct run_shared *run_shared(struct run *r)
{
	return &r->shared;
}

const char *run_dir(const struct run *r)
{
	return r->runs_dir;
}

const char *run_id(const struct run *r)
{
	return r->id;
}

int run_task_count(const struct run *r)
{
	return r->ntasks;
}

const struct task_state *run_task(const struct run *r, int i)
{
	return &r->tasks[i];
}

json_t *run_report(struct run *r)
{
	json_t *rep = report_compute(r->shared.store, r->id);
	if (rep)
		report_attach_program(rep, r->runs_dir);
	return rep;
}

void run_close(struct run *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->ntasks; i++) {
		free(r->tasks[i].task_id);
		free(r->tasks[i].group);
		free(r->tasks[i].path);
		free(r->tasks[i].run_dir);
		free(r->tasks[i].kernel);
		free(r->tasks[i].po);
		free(r->tasks[i].po_why);
		json_decref(r->tasks[i].result);
	}
	free(r->tasks);
	pool_free(r->shared.pool);
	evcache_close(r->shared.cache);
	store_close(r->shared.store);
	llm_free(r->shared.llm);
	json_decref(r->known);
	free(r->stop_reason);
	pthread_mutex_destroy(&r->shared.mu);
	pthread_mutex_destroy(&r->queue_mu);
	pthread_mutex_destroy(&r->budget.lock);
	strvec_clear(&r->devices);
	free(r->runs_dir);
	free(r->id);
	free(r);
}
