/* cmd_bench.c: `egg bench`: many tasks at once, crash-safe and resumable, over all devices. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../bench/discover.h"
#include "../bench/runner.h"
#include "../llm/spool.h"
#include "../report/report.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/hash.h"
#include "../util/timeutil.h"
#include "cli.h"
#include "optimize.h"

struct bench_flags {
	const char *dir, *resume, *devices;
	int jobs, llm_concurrency, workers_per_device, cpu_workers, run_max_tokens;
	double run_max_cost;
};

struct bench {
	struct run_ctx rc;
	struct task_state *tasks;
	int ntasks;
	int next;		/* next task to start */
	int jobs;
	int quiet;
	int done_flag;
	pthread_mutex_t queue_mu;
	double t0;
};

static void *task_thread(void *arg)
{
	struct bench *b = arg;
	for (;;) {
		struct task_state *ts = NULL;
		pthread_mutex_lock(&b->queue_mu);
		while (b->next < b->ntasks && b->tasks[b->next].finished)
			b->next++;
		if (b->next < b->ntasks)
			ts = &b->tasks[b->next++];
		pthread_mutex_unlock(&b->queue_mu);
		if (!ts)
			return NULL;
		ts->device = pool_place_task(b->rc.pool);
		runner_task(&b->rc, ts);
		pool_unplace_task(b->rc.pool, ts->device);
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
	struct bench *b = arg;
	int tty = isatty(2), drawn = 0, reported = 0;
	double last_plain = 0;
	for (;;) {
		int done = 0, failed = 0, waiting = 0, running = 0, finished_now = 0, stop;
		long tokens = 0;
		double cost = 0, elapsed = (time_mono_ms() - b->t0) / 1000, eta;
		char el[32], et[32];
		struct buf out = BUF_INIT;
		pthread_mutex_lock(&b->rc.mu);
		for (int i = 0; i < b->ntasks; i++) {
			const struct task_state *t = &b->tasks[i];
			tokens += t->tokens;
			cost += t->cost;
			if (t->finished) {
				finished_now++;
				if (!strcmp(t->status, "failed"))
					failed++;
				else if (!strcmp(t->status, "waiting"))
					waiting++;
				else
					done++;
			} else if (t->running) {
				running++;
			}
		}
		eta = finished_now ? elapsed / finished_now * (b->ntasks - finished_now) : NAN;
		fmt_time(el, sizeof(el), elapsed);
		fmt_time(et, sizeof(et), eta);
		buf_addf(&out, "egg bench %s: %d/%d done, %d running, %d failed, %d waiting; %ld tokens, $%.4f; elapsed %s, ETA %s\n",
			 b->rc.run_id, done, b->ntasks, running, failed, waiting, tokens, cost, el, et);
		for (int i = 0; i < b->ntasks; i++) {
			const struct task_state *t = &b->tasks[i];
			if (t->running)
				buf_addf(&out, "  %-40.40s [%s] %-10s %7ld tokens $%.4f %5.0f s\n", t->task_id,
					 pool_device_name(b->rc.pool, t->device), t->stage, t->tokens, t->cost,
					 (time_mono_ms() - t->started) / 1000);
		}
		pthread_mutex_unlock(&b->rc.mu);
		stop = b->done_flag;
		if (!b->quiet) {
			if (tty) {
				for (int i = 0; i < drawn; i++)
					fputs("\033[1A\033[2K", stderr);
				fputs(buf_str(&out), stderr);
				drawn = 0;
				for (const char *p = buf_str(&out); *p; p++)
					drawn += *p == '\n';
			} else if (finished_now != reported || elapsed - last_plain >= 15 || stop) {
				/* Plain lines: the summary line only, on change or every 15 s. */
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

int cmd_bench(const struct command *self, int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	struct optimize_flags fl;
	struct bench_flags bf = { 0 };
	struct bench b;
	struct strvec paths = STRVEC_INIT, devices = STRVEC_INIT, all_args = STRVEC_INIT;
	struct store *store = NULL;
	struct llm *llm = NULL;
	struct budget budget;
	struct gate gate;
	json_t *config = NULL, *run = NULL, *stored = NULL, *report = NULL;
	char *run_id = NULL, *runs_dir = NULL;
	pthread_t *threads = NULL, prog;
	int code, started_progress = 0;
	struct opt own[48];
	const struct opt bench_own[] = {
		{ "dir", 0, OPT_STRING, &bf.dir, "DIR", "run every *.py task under DIR (recursively)" },
		{ "resume", 0, OPT_STRING, &bf.resume, "RUN", "finish an interrupted run" },
		{ "jobs", 'j', OPT_INT, &bf.jobs, "N", "tasks in flight at once (default 2 per device)" },
		{ "llm-concurrency", 0, OPT_INT, &bf.llm_concurrency, "N", "LLM requests in flight at once (default 8)" },
		{ "devices", 0, OPT_STRING, &bf.devices, "LIST", "devices to use, e.g. cuda:0,cuda:1 (default: all GPUs, else cpu)" },
		{ "cpu-workers", 0, OPT_INT, &bf.cpu_workers, "N", "without GPUs: N CPU devices (default 1)" },
		{ "workers-per-device", 0, OPT_INT, &bf.workers_per_device, "N", "eval workers per device, compiling in parallel (default 2)" },
		{ "run-max-tokens", 0, OPT_INT, &bf.run_max_tokens, "N", "token budget for the whole run" },
		{ "run-max-cost", 0, OPT_DOUBLE, &bf.run_max_cost, "USD", "cost budget for the whole run" },
	};
	int nown = 0;

	memset(&b, 0, sizeof(b));
	optimize_flags_init(&fl);
	for (size_t i = 0; i < sizeof(bench_own) / sizeof(bench_own[0]); i++)
		own[nown++] = bench_own[i];
	for (const struct opt *o = bench_pipeline_options(&fl); o->type != OPT_END; o++)
		own[nown++] = *o;
	own[nown] = (struct opt)OPT_TABLE_END;

	/* A resumed run takes its original arguments first, then the new ones. */
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--resume") && i + 1 < argc) {
			struct config tmp;
			config_init(&tmp);
			for (int j = 0; j < argc; j++)
				if (!strcmp(argv[j], "--store") && j + 1 < argc)
					tmp.flag_values[4] = argv[j + 1];
			if (config_resolve(&tmp) == 0 && (store = store_open(tmp.store))) {
				stored = store_run_get(store, argv[i + 1]);
				store_close(store);
				store = NULL;
			}
			config_free(&tmp);
			if (!stored) {
				err_clear();
				code = err_usage("no run '%s' to resume in the store", argv[i + 1]);
				goto out;
			}
			{
				size_t k;
				json_t *a;
				json_array_foreach(json_object_get(json_object_get(stored, "config"), "argv"), k, a)
					strvec_push(&all_args, json_string_value(a));
			}
		}
	for (int i = 0; i < argc; i++)
		strvec_push(&all_args, argv[i]);
	code = cmd_parse(self, own, CMD_WITH_CONFIG | CMD_WITH_JSON, (int)all_args.n, all_args.v, &ctx);
	if (code) {
		code = code == 1 ? EXIT_DONE : code;
		goto out;
	}
	for (size_t i = 0; i < ctx.args.n; i++)
		strvec_push(&paths, ctx.args.v[i]);
	if (bf.dir) {
		if (!fs_is_dir(bf.dir)) {
			code = err_usage("'%s' is not a folder", bf.dir);
			goto out;
		}
		discover_tasks(bf.dir, &paths);
	}
	if (!paths.n) {
		code = err_usage("bench needs TASK.py files or --dir DIR");
		goto out;
	}
	if (discover_devices(&ctx.cfg, bf.devices, bf.cpu_workers, &devices) < 0) {
		code = err_report();
		goto out;
	}
	if (optimize_flags_apply(&fl, devices.v[0], &b.rc.po, &b.rc.eo) < 0) {
		code = err_report();
		goto out;
	}
	llm = llm_new(&ctx.cfg, ctx.cfg.cache);
	if (!llm || !(store = store_open(ctx.cfg.store))) {
		code = err_report();
		goto out;
	}
	if (bf.resume) {
		run_id = xstrdup(bf.resume);
		store_run_set_status(store, run_id, "running");
	} else {
		json_t *args = json_array();
		run_id = optimize_run_id(NULL);
		for (int i = 0; i < argc; i++)
			json_array_append_new(args, json_string(argv[i]));
		config = json_pack("{s:o, s:s?, s:s, s:o}", "argv", args, "model", ctx.cfg.model, "provider",
				   ctx.cfg.provider, "options", optimize_flags_json(&fl, &b.rc.po, &b.rc.eo));
		if (store_run_create(store, run_id, "bench", config) < 0) {
			code = err_report();
			goto out;
		}
	}
	/* Tasks: register (a resumed run already has them: INSERT OR IGNORE). */
	b.tasks = xcalloc(paths.n, sizeof(*b.tasks));
	{
		json_t *known;
		size_t k;
		json_t *t;
		for (size_t i = 0; i < paths.n; i++) {
			struct task_state *ts = &b.tasks[b.ntasks];
			char hex[65] = "";
			struct buf src = BUF_INIT;
			ts->task_id = runner_task_id(paths.v[i], &ts->group);
			for (int j = 0; j < b.ntasks; j++)
				if (!strcmp(b.tasks[j].task_id, ts->task_id)) {
					char *dup = ts->task_id;
					ts->task_id = xasprintf("%s_%zu", dup, i);
					free(dup);
					break;
				}
			ts->path = paths.v[i];
			if (fs_read(paths.v[i], &src) == 0)
				hash_hex(src.data ? src.data : "", src.len, hex);
			err_clear();
			buf_release(&src);
			store_task_add(store, run_id, ts->task_id, ts->path, ts->group, hex);
			b.ntasks++;
		}
		known = store_tasks(store, run_id);
		json_array_foreach(known, k, t) {
			for (int j = 0; j < b.ntasks; j++) {
				const char *st = json_string_value(json_object_get(t, "status"));
				const json_t *r = json_object_get(t, "result");
				const char *kind = json_string_value(json_object_get(r, "error_kind"));
				if (strcmp(b.tasks[j].task_id, json_string_value(json_object_get(t, "task_id"))))
					continue;
				/* Finished tasks stay finished, except infrastructure failures,
				 * which a resume retries. */
				if (st && (!strcmp(st, "done") || (!strcmp(st, "failed") && !(kind && !strcmp(kind, "infra"))))) {
					b.tasks[j].finished = 1;
					snprintf(b.tasks[j].status, sizeof(b.tasks[j].status), "%s", st);
					b.tasks[j].result = json_incref((json_t *)r);
				}
			}
		}
		json_decref(known);
	}
	runs_dir = xasprintf("%s/runs/%s", ctx.cfg.store, run_id);
	if (fs_mkdir_p(runs_dir) < 0) {
		code = err_report();
		goto out;
	}
	if (ctx.cfg.cache) {
		char *dir = fs_join(ctx.cfg.store, "eval-cache");
		b.rc.cache = evcache_open(dir);
		free(dir);
		if (!b.rc.cache) {
			code = err_report();
			goto out;
		}
	}
	b.rc.cfg = &ctx.cfg;
	b.rc.store = store;
	b.rc.run_id = run_id;
	b.rc.runs_dir = runs_dir;
	b.rc.pool = pool_new(&ctx.cfg, (const char *const *)devices.v, (int)devices.n,
			     bf.workers_per_device > 0 ? bf.workers_per_device : 2, runs_dir);
	b.rc.llm = llm;
	memset(&budget, 0, sizeof(budget));
	pthread_mutex_init(&budget.lock, NULL);
	budget.max_tokens = bf.run_max_tokens;
	budget.max_cost = bf.run_max_cost;
	b.rc.budget = &budget;
	gate_init(&gate, bf.llm_concurrency > 0 ? bf.llm_concurrency : 8);
	b.rc.llm_gate = &gate;
	b.rc.task_max_tokens = fl.max_tokens;
	b.rc.task_max_cost = fl.max_cost;
	pthread_mutex_init(&b.rc.mu, NULL);
	pthread_mutex_init(&b.queue_mu, NULL);
	b.quiet = fl.quiet;
	b.jobs = bf.jobs > 0 ? bf.jobs : 2 * (int)devices.n;
	b.t0 = time_mono_ms();
	if (!fl.quiet)
		fprintf(stderr, "egg: bench run %s: %d task(s) on %zu device(s) (%s%s), %d job(s)\n", run_id, b.ntasks,
			devices.n, devices.v[0], devices.n > 1 ? ", ..." : "", b.jobs);
	pthread_create(&prog, NULL, progress_thread, &b);
	started_progress = 1;
	threads = xcalloc((size_t)b.jobs, sizeof(*threads));
	for (int i = 0; i < b.jobs; i++)
		pthread_create(&threads[i], NULL, task_thread, &b);
	for (int i = 0; i < b.jobs; i++)
		pthread_join(threads[i], NULL);
	b.done_flag = 1;
	pthread_join(prog, NULL);
	started_progress = 0;
	{
		int waiting = 0;
		for (int i = 0; i < b.ntasks; i++)
			waiting += !strcmp(b.tasks[i].status, "waiting");
		store_run_set_status(store, run_id, waiting ? "waiting" : "done");
	}
	report = report_compute(store, run_id);
	if (report && !fl.quiet && !ctx.json)
		report_print_text(stderr, report);
	if (ctx.json && report)
		cmd_print_json(json_incref(report));
	{
		int found = 0, infra = 0, waiting = 0;
		for (int i = 0; i < b.ntasks; i++) {
			found += json_is_true(json_object_get(b.tasks[i].result, "found"));
			infra += !strcmp(b.tasks[i].error_kind, "infra");
			waiting += !strcmp(b.tasks[i].status, "waiting");
		}
		if (infra == b.ntasks) {
			err_set(ERR_INFRA, "every task failed on infrastructure; resume with 'egg bench --resume %s'", run_id);
			code = err_report();
		} else if (waiting) {
			json_t *pending = spool_pending(ctx.cfg.llm_spool);
			err_set(ERR_WAITING, "%d task(s) wait for %zu reply(ies) in %s/pending; write each to %s/replies/KEY.txt "
				"and run 'egg bench --resume %s'", waiting, json_array_size(pending), ctx.cfg.llm_spool,
				ctx.cfg.llm_spool, run_id);
			json_decref(pending);
			code = err_report();
		} else if (!found) {
			err_set(ERR_REJECTED, "no task of run %s found a valid kernel", run_id);
			code = err_report();
		} else {
			code = EXIT_DONE;
		}
	}
out:
	if (started_progress) {
		b.done_flag = 1;
		pthread_join(prog, NULL);
	}
	for (int i = 0; i < b.ntasks; i++) {
		free(b.tasks[i].task_id);
		free(b.tasks[i].group);
		json_decref(b.tasks[i].result);
	}
	free(b.tasks);
	free(threads);
	pool_free(b.rc.pool);
	json_decref(report);
	json_decref(config);
	json_decref(run);
	json_decref(stored);
	store_close(store);
	llm_free(llm);
	free(run_id);
	evcache_close(b.rc.cache);
	free(runs_dir);
	strvec_clear(&paths);
	strvec_clear(&devices);
	strvec_clear(&all_args);
	cmd_ctx_clear(&ctx);
	return code;
}
