/* cmd_selfcheck.c: `egg selfcheck`: the evaluation path run on each task with its own Model as the candidate. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../run/discover.h"
#include "../eval/pool.h"
#include "../eval/eval.h"
#include "../report/format.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/timeutil.h"
#include "../util/jsonnum.h"
#include "cli.h"
#include "flags.h"

struct check {
	struct pool *pool;
	struct eval_opts eo;
	const struct strvec *paths;
	json_t **rows;
	size_t next, done;
	int quiet;
	FILE *rows_file;	/* --rows: one JSON line per task as it ends */
	pthread_mutex_t mu;
};

/* A process's peak above what it started with: device memory on a GPU,
 * resident host memory on the CPU. */
static double peak_of(const json_t *m)
{
	double gpu = json_num(m, "gpu_peak_bytes");
	if (!isnan(gpu))
		return gpu;
	return json_num(m, "rss_peak_bytes") - json_num(m, "rss_start_bytes");
}

static int has_flag(const json_t *res, const char *prefix)
{
	size_t i;
	const json_t *f;
	json_array_foreach(json_object_get(res, "flags"), i, f)
		if (json_is_string(f) && !strncmp(json_string_value(f), prefix, strlen(prefix)))
			return 1;
	return 0;
}

/* One row of the table from a verdict. */
static json_t *row_of(const char *path, const json_t *res, double seconds)
{
	const json_t *mem = json_object_get(res, "memory"), *io = json_object_get(res, "io_bytes");
	double in = json_num(io, "inputs"), out = json_num(io, "outputs");
	double ref = peak_of(json_object_get(mem, "reference")), cand = peak_of(json_object_get(mem, "candidate"));
	double top = fmax(isnan(ref) ? 0 : ref, isnan(cand) ? 0 : cand);
	int ok = eval_passed(res);
	json_t *row = json_pack("{s:s, s:b, s:s, s:s?, s:s?}", "task", path, "ok", ok, "result", ok ? "ok" : "fail",
				"stage", json_string_value(json_object_get(res, "stage")),
				"reason", json_string_value(json_object_get(res, "reason")));
	json_object_set_new(row, "input_bytes", isnan(in) ? json_null() : json_real(in));
	json_object_set_new(row, "output_bytes", isnan(out) ? json_null() : json_real(out));
	json_object_set_new(row, "reference_peak_bytes", isnan(ref) ? json_null() : json_real(ref));
	json_object_set_new(row, "candidate_peak_bytes", isnan(cand) ? json_null() : json_real(cand));
	/* Below 64 MB of data a process's fixed overhead (PyTorch, Triton,
	 * the CUDA context) is what its peak measures: no multiple. */
	json_object_set_new(row, "peak_multiple", in + out >= 64e6 && top > 0 ? json_real(top / (in + out)) : json_null());
	json_object_set_new(row, "eval_s", json_real(seconds));
	json_object_set(row, "phases_s", json_object_get(res, "phases_s"));
	json_object_set_new(row, "ill_conditioned", json_boolean(has_flag(res, "ill_conditioned")));
	json_object_set(row, "ran_alone", json_object_get(res, "ran_alone"));
	json_object_set(row, "truth", json_object_get(res, "truth"));
	json_object_set(row, "flags", json_object_get(res, "flags"));
	if (!ok && json_string_length(json_object_get(res, "log")))
		json_object_set(row, "log", json_object_get(res, "log"));
	return row;
}

static json_t *error_row(const char *path, double seconds)
{
	return json_pack("{s:s, s:b, s:s, s:s, s:f}", "task", path, "ok", 0, "result",
			 err_kind() == ERR_INPUT ? "input error" : "infrastructure error", "reason", err_msg(),
			 "eval_s", seconds);
}

static json_t *check_one(struct check *c, const char *path, int device)
{
	struct buf src = BUF_INIT;
	struct eval_opts eo = c->eo;
	struct pool_slot *slot;
	json_t *size, *res, *row;
	long long need = 0;
	double t0 = time_mono_ms();

	eo.device = pool_device_name(c->pool, device);
	eo.lock = pool_device_lock(c->pool, device);
	if (fs_read(path, &src) < 0)
		return error_row(path, 0);
	slot = pool_acquire(c->pool, device);
	size = eval_task_size(slot->worker, eo.device, buf_str(&src));
	pool_release(c->pool, slot);
	need = eval_size_need_bytes(size, eo.device);
	err_clear();
	slot = pool_acquire_for(c->pool, device, need);
	t0 = time_mono_ms();
	res = eval_selfcheck(slot->worker, &eo, buf_str(&src));
	pool_release(c->pool, slot);
	row = res ? row_of(path, res, (time_mono_ms() - t0) / 1000) : error_row(path, (time_mono_ms() - t0) / 1000);
	if (size) {
		json_object_set(row, "param_bytes", json_object_get(size, "param_bytes"));
		json_object_set(row, "need_bytes", json_object_get(size, "need_bytes"));
	}
	json_decref(size);
	json_decref(res);
	buf_release(&src);
	return row;
}

static void *check_thread(void *arg)
{
	struct check *c = arg;
	for (;;) {
		size_t i;
		json_t *row;
		pthread_mutex_lock(&c->mu);
		i = c->next++;
		pthread_mutex_unlock(&c->mu);
		if (i >= c->paths->n)
			return NULL;
		row = check_one(c, c->paths->v[i], (int)(i % (size_t)pool_devices(c->pool)));
		pthread_mutex_lock(&c->mu);
		c->rows[i] = row;
		c->done++;
		if (c->rows_file) {
			char *line = json_dumps(row, JSON_COMPACT);
			fprintf(c->rows_file, "%s\n", line ? line : "{}");
			fflush(c->rows_file);
			free(line);
		}
		if (!c->quiet) {
			char secs[16];
			fprintf(stderr, "[%zu/%zu] %s: %s%s%s (%s s)\n", c->done, c->paths->n, c->paths->v[i],
				json_string_value(json_object_get(row, "result")),
				json_is_true(json_object_get(row, "ok")) ? "" : ": ",
				json_is_true(json_object_get(row, "ok")) ? "" : json_string_value(json_object_get(row, "reason")) ?: "",
				fmt_figure("%.1f", json_num(row, "eval_s"), secs));
		}
		pthread_mutex_unlock(&c->mu);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Counts, medians and maxima over the rows. */
static json_t *summarise(json_t *rows, const struct strvec *devices)
{
	size_t n = json_array_size(rows), i, nsec = 0, nmul = 0;
	double *secs = xcalloc(n + 1, sizeof(double)), *muls = xcalloc(n + 1, sizeof(double));
	double max_s = 0, max_m = 0;
	const char *max_s_task = NULL, *max_m_task = NULL;
	json_t *row, *failed = json_array(), *ill = json_array(), *alone = json_array(), *out;
	int ok = 0;

	json_array_foreach(rows, i, row) {
		double s = json_num(row, "eval_s"), m = json_num(row, "peak_multiple");
		const char *task = json_string_value(json_object_get(row, "task"));
		if (json_is_true(json_object_get(row, "ok")))
			ok++;
		else
			json_array_append_new(failed, json_pack("{s:s, s:s?, s:s?}", "task", task, "result",
								json_string_value(json_object_get(row, "result")), "reason",
								json_string_value(json_object_get(row, "reason"))));
		if (json_is_true(json_object_get(row, "ill_conditioned")))
			json_array_append_new(ill, json_string(task));
		if (json_is_true(json_object_get(row, "ran_alone")))
			json_array_append_new(alone, json_string(task));
		if (!isnan(s) && json_object_get(row, "phases_s")) {
			secs[nsec++] = s;
			if (s >= max_s) {
				max_s = s;
				max_s_task = task;
			}
		}
		if (!isnan(m)) {
			muls[nmul++] = m;
			if (m >= max_m) {
				max_m = m;
				max_m_task = task;
			}
		}
	}
	out = json_pack("{s:i, s:i, s:o, s:o, s:o}", "tasks", (int)n, "ok", ok, "failed", failed,
			"ill_conditioned", ill, "ran_alone", alone);
	json_object_set_new(out, "devices", json_array());
	for (i = 0; i < devices->n; i++)
		json_array_append_new(json_object_get(out, "devices"), json_string(devices->v[i]));
	json_object_set_new(out, "eval_s_median", nsec ? json_real(median(secs, nsec)) : json_null());
	json_object_set_new(out, "eval_s_max", nsec ? json_real(max_s) : json_null());
	json_object_set_new(out, "eval_s_max_task", max_s_task ? json_string(max_s_task) : json_null());
	json_object_set_new(out, "peak_multiple_median", nmul ? json_real(median(muls, nmul)) : json_null());
	json_object_set_new(out, "peak_multiple_max", nmul ? json_real(max_m) : json_null());
	json_object_set_new(out, "peak_multiple_max_task", max_m_task ? json_string(max_m_task) : json_null());
	free(secs);
	free(muls);
	return out;
}

static void print_mb(double bytes)
{
	char mb[16];
	printf(" %9s", fmt_figure("%.1f", bytes / 1e6, mb));
}

static void print_table(const json_t *rows, const json_t *sum)
{
	size_t i;
	const json_t *row;
	char med[16], max[16];
	printf("%-44s %-6s %9s %9s %9s %9s %6s %7s  %s\n", "task", "result", "in MB", "out MB", "ref MB",
	       "cand MB", "x(i+o)", "eval s", "note");
	json_array_foreach(rows, i, row) {
		const char *task = json_string_value(json_object_get(row, "task"));
		size_t len = strlen(task);
		char m[16], secs[16];
		printf("%-44s %-6s", len > 44 ? task + len - 44 : task,
		       json_is_true(json_object_get(row, "ok")) ? "ok" : "FAIL");
		print_mb(json_num(row, "input_bytes"));
		print_mb(json_num(row, "output_bytes"));
		print_mb(json_num(row, "reference_peak_bytes"));
		print_mb(json_num(row, "candidate_peak_bytes"));
		printf(" %6s %7s  %s%s%s\n", fmt_figure("%.2f", json_num(row, "peak_multiple"), m),
		       fmt_figure("%.1f", json_num(row, "eval_s"), secs),
		       json_is_true(json_object_get(row, "ill_conditioned")) ? "ill-conditioned " : "",
		       json_is_true(json_object_get(row, "ran_alone")) ? "ran alone " : "",
		       json_is_true(json_object_get(row, "ok")) ? "" : json_string_value(json_object_get(row, "reason")) ?: "");
	}
	printf("\nselfcheck: %lld/%lld ok; evaluation seconds median %s, max %s (%s)\n",
	       json_integer_value(json_object_get(sum, "ok")), json_integer_value(json_object_get(sum, "tasks")),
	       fmt_figure("%.1f", json_num(sum, "eval_s_median"), med), fmt_figure("%.1f", json_num(sum, "eval_s_max"), max),
	       json_string_value(json_object_get(sum, "eval_s_max_task")) ?: "-");
	if (!isnan(json_num(sum, "peak_multiple_median")))
		printf("peak memory of one process as a multiple of inputs+outputs (tasks over 64 MB): "
		       "median %.2fx, max %.2fx (%s)\n", json_num(sum, "peak_multiple_median"), json_num(sum, "peak_multiple_max"),
		       json_string_value(json_object_get(sum, "peak_multiple_max_task")) ?: "-");
	json_array_foreach(json_object_get(sum, "ill_conditioned"), i, row)
		printf("ill-conditioned: %s\n", json_string_value(row));
	json_array_foreach(json_object_get(sum, "failed"), i, row)
		printf("failed: %s: %s\n", json_string_value(json_object_get(row, "task")),
		       json_string_value(json_object_get(row, "reason")) ?: "?");
}

/* egg selfcheck: every task through the whole evaluation path with its own
 * Model as the candidate. Over 100 lines: options, the device pool with its
 * memory budgets, the worker threads and the summary in one flow. */
/* The workers, one pool over `devices`, each device's memory budget read
 * from its facts. The log folder is optional (NULL when it cannot be made). */
static int start_pool(struct check *c, const struct config *cfg, const struct strvec *devices, int per_device,
		      char *log_dir)
{
	if (fs_mkdir_p(log_dir) < 0)
		log_dir = NULL;
	err_clear();
	c->pool = pool_new(cfg, (const char *const *)devices->v, (int)devices->n, per_device, log_dir);
	for (size_t i = 0; i < devices->n; i++) {
		struct pool_slot *slot = pool_acquire(c->pool, (int)i);
		json_t *facts = eval_device_facts(slot->worker, devices->v[i]);
		long long budget = eval_device_budget(facts, devices->v[i]);

		pool_release(c->pool, slot);
		if (!facts)
			return -1;
		pool_set_memory(c->pool, (int)i, budget);
		json_decref(facts);
	}
	return 0;
}

/* `jobs` threads take the tasks one by one until none is left. */
static void run_checks(struct check *c, int jobs)
{
	pthread_t *threads = xcalloc((size_t)jobs, sizeof(pthread_t));

	for (int t = 0; t < jobs; t++)
		pthread_create(&threads[t], NULL, check_thread, c);
	for (int t = 0; t < jobs; t++)
		pthread_join(threads[t], NULL);
	free(threads);
}

int cmd_selfcheck(const struct command *self, int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	struct check c = { 0 };
	struct strvec paths = STRVEC_INIT, devices = STRVEC_INIT;
	const char *dir = NULL, *device_list = NULL, *rows_path = NULL;
	int jobs = 0, per_device = 0, quiet = 0;
	struct eval_flags ef;
	const struct opt own[] = {
		{ "dir", 0, OPT_STRING, &dir, "DIR", "every *.py under DIR (recursively)" },
		{ "devices", 0, OPT_STRING, &device_list, "LIST", "devices to use, e.g. cuda:0,cuda:1 (default: all GPUs, else cpu)" },
		{ "jobs", 'j', OPT_INT, &jobs, "N", "tasks at once (default: 2 per device)" },
		{ "workers-per-device", 0, OPT_INT, &per_device, "N", "eval workers per device (default 2)" },
		{ "rows", 0, OPT_STRING, &rows_path, "FILE", "also append each task's row to FILE as one JSON line when it ends" },
		{ "quiet", 'q', OPT_FLAG, &quiet, NULL, "no progress lines" },
		OPT_TABLE_END,
	};
	json_t *rows = NULL, *sum = NULL;
	char *log_dir = NULL;
	const struct opt *tables[] = { own, eval_flag_options(&ef, EVAL_FLAGS_SELFCHECK), NULL };
	int code;
	size_t i;

	eval_flags_init(&ef);
	if ((code = cmd_parse(self, tables, argc, argv, &ctx)) >= 0)
		goto out;
	if ((code = cmd_task_paths(self, &ctx.args, dir, &paths)) >= 0)
		goto out;
	if (jobs < 0 || per_device < 0) {
		code = err_usage("--jobs and --workers-per-device must not be negative");
		goto out;
	}
	if (discover_devices(&ctx.cfg, device_list, 1, &devices) < 0 ||
	    eval_flags_apply(&ef, EVAL_FLAGS_SELFCHECK, devices.v[0], &c.eo) < 0) {
		code = err_report();
		goto out;
	}
	log_dir = fs_join(ctx.cfg.store, "logs");
	if (start_pool(&c, &ctx.cfg, &devices, per_device ? per_device : 2, log_dir) < 0) {
		code = err_report();
		goto out;
	}
	if (rows_path && !(c.rows_file = fopen(rows_path, "a"))) {
		err_set(ERR_INPUT, "cannot write '%s': %s", rows_path, strerror(errno));
		code = err_report();
		goto out;
	}
	c.paths = &paths;
	c.rows = xcalloc(paths.n, sizeof(json_t *));
	c.quiet = quiet;
	pthread_mutex_init(&c.mu, NULL);
	jobs = jobs ? jobs : 2 * (int)devices.n;
	if ((size_t)jobs > paths.n)
		jobs = (int)paths.n;
	fprintf(stderr, "egg: selfcheck of %zu task(s) on %s%s, %d at once\n", paths.n, devices.v[0],
		devices.n > 1 ? " and more" : "", jobs);
	run_checks(&c, jobs);
	rows = json_array();
	for (i = 0; i < paths.n; i++)
		json_array_append_new(rows, c.rows[i]);
	sum = summarise(rows, &devices);
	json_object_set_new(sum, "admitted_peak_bytes", json_array());
	for (i = 0; i < devices.n; i++)
		json_array_append_new(json_object_get(sum, "admitted_peak_bytes"),
				      json_integer(pool_peak_memory(c.pool, (int)i)));
	if (ctx.json)
		cmd_print_json(json_pack("{s:O, s:O}", "summary", sum, "tasks", rows));
	else
		print_table(rows, sum);
	if (json_integer_value(json_object_get(sum, "ok")) != (json_int_t)paths.n) {
		err_set(ERR_REJECTED, "selfcheck: %lld of %zu task(s) failed",
			(long long)(paths.n - (size_t)json_integer_value(json_object_get(sum, "ok"))), paths.n);
		code = err_report();
	} else {
		code = EXIT_DONE;
	}
out:
	if (c.rows)
		pthread_mutex_destroy(&c.mu);
	if (c.rows_file)
		fclose(c.rows_file);
	free(c.rows);
	json_decref(rows);
	json_decref(sum);
	pool_free(c.pool);
	free(log_dir);
	strvec_clear(&paths);
	strvec_clear(&devices);
	cmd_ctx_clear(&ctx);
	return code;
}
