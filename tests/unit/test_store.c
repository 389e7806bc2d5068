/* test_store.c: the store's migrations, and the report's metrics over a store. */
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/report/report.h"
#include "../../src/store/record.h"
#include "../../src/store/store.h"
#include "../../src/util/err.h"
#include "../../src/util/fault.h"
#include "../../src/util/fs.h"
#include "unit.h"

static char *temp_dir(void)
{
	char tmpl[] = "/tmp/egg-unit-store-XXXXXX";
	return strdup(mkdtemp(tmpl));
}

/* Runs `sql` on DIR/egg.db directly, as another program (or an older or
 * newer egg) would. */
static int raw_sql(const char *dir, const char *sql)
{
	sqlite3 *db;
	char *path = fs_join(dir, "egg.db");
	int rc = sqlite3_open(path, &db) == SQLITE_OK && sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
	sqlite3_close(db);
	free(path);
	return rc ? 0 : -1;
}

static void migrations(void)
{
	char *dir = temp_dir();
	struct store *s = store_open(dir);
	json_t *cfg = json_object(), *run;

	CHECK(s && store_schema_version(s) == STORE_SCHEMA_VERSION, "a new store is migrated to the current schema (version %d)",
	      STORE_SCHEMA_VERSION);
	CHECK(s && store_run_create(s, "r1", "bench", cfg) == 0, "a run can be written");
	store_close(s);
	s = store_open(dir);
	run = s ? store_run_get(s, "r1") : NULL;
	CHECK(s && store_schema_version(s) == STORE_SCHEMA_VERSION && run, "reopening migrates nothing again and keeps the rows");
	json_decref(run);
	store_close(s);

	CHECK(raw_sql(dir, "PRAGMA user_version = 7") == 0, "(a newer egg's store is simulated)");
	err_clear();
	s = store_open(dir);
	CHECK(!s && err_kind() == ERR_INFRA && strstr(err_msg(), "schema version 7 is newer than this egg knows (3)"),
	      "a store of a newer schema is refused, saying both versions: %s", err_msg());
	store_close(s);
	fs_remove_tree(dir);
	free(dir);

	/* A migration that fails is rolled back whole: the version stays. */
	dir = temp_dir();
	CHECK(fs_mkdir_p(dir) == 0 && raw_sql(dir, "CREATE TABLE steps (x INTEGER)") == 0,
	      "(a store whose first migration must fail is prepared)");
	err_clear();
	s = store_open(dir);
	CHECK(!s && strstr(err_msg(), "migration 1 failed"), "the failing migration is named: %s", err_msg());
	store_close(s);
	CHECK(raw_sql(dir, "DROP TABLE steps") == 0, "(the obstacle is removed)");
	err_clear();
	s = store_open(dir);
	CHECK(s && store_schema_version(s) == STORE_SCHEMA_VERSION, "nothing of the failed migration stayed: it runs again and succeeds");
	store_close(s);
	fs_remove_tree(dir);
	free(dir);

	/* Version 1 called a task an infrastructure failure stopped 'failed'
	 * (error_kind 'infra'): migration 2 makes it 'stopped', and its run. */
	dir = temp_dir();
	s = store_open(dir);
	store_run_create(s, "old", "bench", cfg);
	store_task_add(s, "old", "t1", "t1.py", "g", "h");
	store_task_add(s, "old", "t2", "t2.py", "g", "h");
	store_close(s);
	CHECK(raw_sql(dir, "UPDATE tasks SET status = 'failed', result = '{\"status\": \"failed\", \"error_kind\": "
			   "\"infra\"}' WHERE task_id = 't1'; UPDATE tasks SET status = 'failed', result = "
			   "'{\"status\": \"failed\", \"error_kind\": \"input\"}' WHERE task_id = 't2';"
			   "UPDATE runs SET status = 'done'; ALTER TABLE runs DROP COLUMN stop_reason;"
			   "PRAGMA user_version = 1") == 0,
	      "(a version-1 store with an infrastructure failure and a bad task is prepared)");
	s = store_open(dir);
	{
		json_t *tasks = s ? store_tasks(s, "old") : NULL, *r = s ? store_run_get(s, "old") : NULL;
		const json_t *t1 = json_array_get(tasks, 0), *t2 = json_array_get(tasks, 1);
		CHECK(s && store_schema_version(s) == STORE_SCHEMA_VERSION &&
		      !strcmp(json_string_value(json_object_get(t1, "status")) ?: "", "stopped") &&
		      !strcmp(json_string_value(json_object_get(json_object_get(t1, "result"), "status")) ?: "", "stopped") &&
		      !strcmp(json_string_value(json_object_get(t2, "status")) ?: "", "failed") &&
		      !strcmp(json_string_value(json_object_get(r, "status")) ?: "", "stopped"),
		      "migration 2: the infrastructure failure is 'stopped' (row and result), the bad task stays "
		      "'failed', the run is 'stopped'");
		json_decref(tasks);
		json_decref(r);
	}
	store_close(s);
	fs_remove_tree(dir);
	free(dir);
	json_decref(cfg);
}

/* Writes that fail say so (a failing COMMIT included, rolled back), and so
 * do reads of a store that cannot be read: never an empty result. */
static void failures(void)
{
	char *dir = temp_dir(), *path;
	struct store *s = store_open(dir);
	json_t *cfg = json_object(), *got;
	FILE *f;
	store_run_create(s, "r", "bench", cfg);
	store_task_add(s, "r", "t", "t.py", "g", "h");
	fault_arm("commit");
	err_clear();
	CHECK(store_task_begin(s, "r", "t") < 0 && err_kind() == ERR_INFRA && strstr(err_msg(), "egg.db"),
	      "a COMMIT that fails fails the write, naming the store: %s", err_msg());
	got = store_tasks(s, "r");
	CHECK(got && !strcmp(json_string_value(json_object_get(json_array_get(got, 0), "status")) ?: "", "pending"),
	      "and it was rolled back: the task is still pending");
	json_decref(got);
	CHECK(store_task_begin(s, "r", "t") == 0, "the next COMMIT lands (the fault was armed once)");
	fault_arm("task_finish,run_status");
	CHECK(store_task_finish(s, "r", "t", TASK_DONE, cfg) < 0 && err_kind() == ERR_INFRA,
	      "a task's final write that fails returns -1: %s", err_msg());
	CHECK(store_run_set_status(s, "r", "done", NULL) < 0 && err_kind() == ERR_INFRA,
	      "so does the run's status: %s", err_msg());
	fault_arm("task_finish@3");
	{
		int hits[5];
		for (int i = 0; i < 5; i++)
			hits[i] = fault_hit("task_finish");
		CHECK(!hits[0] && !hits[1] && hits[2] && !hits[3] && !hits[4],
		      "NAME@3 fails the third pass only (%d %d %d %d %d)", hits[0], hits[1], hits[2], hits[3], hits[4]);
	}
	fault_arm(NULL);
	err_clear();
	got = store_run_get(s, "nope");
	CHECK(!got && err_kind() == ERR_INPUT && strstr(err_msg(), "no run 'nope'"), "an unknown run is ERR_INPUT: %s",
	      err_msg());
	store_close(s);
	/* Every page after the first overwritten: the schema still reads, the rows do not. */
	path = fs_join(dir, "egg.db");
	f = fopen(path, "r+b");
	if (f) {
		char junk[4096];
		memset(junk, 0x5a, sizeof(junk));
		fseek(f, 4096, SEEK_SET);
		for (int i = 0; i < 8; i++)
			fwrite(junk, 1, sizeof(junk), f);
		fclose(f);
	}
	unlink(fs_join(dir, "egg.db-wal"));
	err_clear();
	s = store_open(dir);
	got = s ? store_runs(s) : NULL;
	CHECK(!got && err_kind() == ERR_INFRA && strstr(err_msg(), "egg.db"),
	      "a corrupted store's runs are an error naming it, never an empty list: %s", err_msg());
	json_decref(got);
	store_close(s);
	fs_remove_tree(dir);
	free(path);
	free(dir);
	json_decref(cfg);
}

/* A run id's beginning stands for the one run it begins; one that begins
 * several, or none, is ERR_INPUT saying which, or how to list them. */
static void run_prefixes(void)
{
	char *dir = temp_dir();
	struct store *s = store_open(dir);
	json_t *cfg = json_object(), *got;
	store_run_create(s, "20260101-100000-judge-aaaa", "eval-batch", cfg);
	store_run_create(s, "20260101-100000-judge-abcd", "eval-batch", cfg);
	store_run_create(s, "20260102-090000-bench-0000", "bench", cfg);
	got = store_run_get(s, "20260102");
	CHECK_STR(json_string_value(json_object_get(got, "id")) ?: "(none)", "20260102-090000-bench-0000",
		  "a prefix of one run's id finds that run");
	json_decref(got);
	got = store_run_get(s, "20260101-100000-judge-ab");
	CHECK_STR(json_string_value(json_object_get(got, "id")) ?: "(none)", "20260101-100000-judge-abcd",
		  "however long the prefix");
	json_decref(got);
	err_clear();
	got = store_run_get(s, "20260101");
	CHECK(!got && err_kind() == ERR_INPUT && strstr(err_msg(), "ambiguous") &&
	      strstr(err_msg(), "20260101-100000-judge-aaaa") && strstr(err_msg(), "20260101-100000-judge-abcd"),
	      "a prefix of two runs' ids is ERR_INPUT naming both: %s", err_msg());
	err_clear();
	got = store_run_get(s, "2027");
	CHECK(!got && err_kind() == ERR_INPUT && strstr(err_msg(), "egg.db") && strstr(err_msg(), "egg runs"),
	      "an unknown id names the store and 'egg runs': %s", err_msg());
	err_clear();
	got = store_run_get(s, "");
	CHECK(!got && err_kind() == ERR_INPUT, "an empty id finds no run, however many there are");
	store_close(s);
	fs_remove_tree(dir);
	free(dir);
	json_decref(cfg);
}

/* The status a reader gets for run `id` through a store of its own (as
 * another egg reads it): "(none)" when it has none. */
static char *status_read(const char *dir, const char *id)
{
	struct store *s = store_open(dir);
	json_t *run = s ? store_run_get(s, id) : NULL;
	char *out = strdup(json_string_value(json_object_get(run, "status")) ?: "(none)");
	json_decref(run);
	store_close(s);
	return out;
}

/* A run recorded as running is live while its process holds the run's
 * lock, and stopped once that process is gone, however it ended: closed,
 * killed with SIGKILL, or never holding one (an older egg's run). A run
 * another process holds cannot be taken. */
static void run_liveness(void)
{
	char *dir = temp_dir(), *got;
	struct store *a = store_open(dir), *b = store_open(dir);
	json_t *cfg = json_object(), *run;
	pid_t child = -1;
	int ready[2] = { -1, -1 }, status;
	CHECK(store_run_hold(a, "r1") == 0 && store_run_create(a, "r1", "optimize", cfg) == 0, "a run held and created");
	got = status_read(dir, "r1");
	CHECK_STR(got, "running", "another reader sees it running while its holder lives");
	free(got);
	err_clear();
	CHECK(store_run_hold(b, "r1") < 0 && err_kind() == ERR_INPUT && strstr(err_msg(), "is running in egg process"),
	      "another process cannot take a live run: %s", err_msg());
	err_clear();
	store_close(a);
	run = store_run_get(b, "r1");
	CHECK_STR(json_string_value(json_object_get(run, "status")), "stopped", "its holder gone, the run reads stopped");
	CHECK_STR(json_string_value(json_object_get(run, "stop_reason")), STORE_GONE_REASON, "saying why");
	json_decref(run);
	CHECK(store_run_hold(b, "r1") == 0, "and the next process may go on with it");
	store_close(b);

	/* A holder killed with SIGKILL (after it said it holds the lock). */
	if (pipe(ready) == 0)
		child = fork();
	if (child == 0) {
		struct store *c = store_open(dir);
		char one = 1;
		if (c && store_run_hold(c, "r2") == 0 && store_run_create(c, "r2", "bench", cfg) == 0 &&
		    write(ready[1], &one, 1) == 1)
			pause();
		_exit(1);
	}
	{
		char one = 0;
		close(ready[1]);
		CHECK(read(ready[0], &one, 1) == 1 && one == 1, "a child process holds run r2");
		close(ready[0]);
	}
	got = status_read(dir, "r2");
	CHECK_STR(got, "running", "r2 is running while the child lives");
	free(got);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
	}
	got = status_read(dir, "r2");
	CHECK_STR(got, "stopped", "and stopped once it was killed with SIGKILL");
	free(got);

	/* A run recorded as running with no lock file at all. */
	CHECK(raw_sql(dir, "INSERT INTO runs (id, created, command, status, config) VALUES ('r3', '2026-01-01', 'bench',"
		      " 'running', '{}')") == 0, "a running run without a lock (an older egg's, or its folder lost)");
	got = status_read(dir, "r3");
	CHECK_STR(got, "stopped", "reads stopped: no process holds it");
	free(got);
	fs_remove_tree(dir);
	free(dir);
	json_decref(cfg);
}

/* One task's result as the task runner writes it. */
static void add_task(struct store *s, const char *id, const char *group, const char *status, json_t *result)
{
	store_task_add(s, "run", id, id, group, "hash");
	store_task_begin(s, "run", id);
	store_task_finish(s, "run", id, task_status_of(status), result);
	json_decref(result);
}

static json_t *stage(const char *name, double ms)
{
	return json_pack("{s:s, s:f}", "stage", name, "kernel_ms", ms);
}

static double at(const json_t *obj, const char *path)
{
	char buf[128], *save = NULL;
	const json_t *v = obj;
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k && v; k = strtok_r(NULL, ".", &save))
		v = json_is_array(v) ? json_array_get(v, (size_t)atoi(k)) : json_object_get(v, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static int near(double got, double want)
{
	return fabs(got - want) < 1e-9;
}

static void report_metrics(void)
{
	char *dir = temp_dir();
	struct store *s = store_open(dir);
	json_t *cfg = json_object(), *rep;
	const json_t *all, *l1, *l2;

	store_run_create(s, "run", "bench", cfg);
	/* level1/a: 2x over eager, 1x over compile; refine 10 -> 5 ms, mapping 5 -> 4 ms. */
	add_task(s, "a", "level1", "done",
		 json_pack("{s:b, s:f, s:f, s:[o, o, o], s:{s:i, s:i, s:f}, s:f}", "found", 1, "speedup_eager", 2.0,
			   "speedup_compile", 1.0, "stages", stage("seed", 10), stage("refine", 5), stage("mapping", 4),
			   "usage", "prompt_tokens", 100, "completion_tokens", 40, "cost_usd", 0.01, "wall_s", 10.0));
	/* level1/b: slower than eager (0.5x), compile 0.25x; refinement gained nothing. */
	add_task(s, "b", "level1", "done",
		 json_pack("{s:b, s:f, s:f, s:[o, o], s:{s:i, s:i, s:f}, s:f}", "found", 1, "speedup_eager", 0.5,
			   "speedup_compile", 0.25, "stages", stage("seed", 8), stage("refine", 8), "usage",
			   "prompt_tokens", 200, "completion_tokens", 80, "cost_usd", 0.03, "wall_s", 30.0));
	/* level2/c: no valid kernel; a stray speedup must not count. */
	add_task(s, "c", "level2", "done",
		 json_pack("{s:b, s:f, s:{s:i, s:i, s:f}}", "found", 0, "speedup_eager", 3.0, "usage", "prompt_tokens",
			   100, "completion_tokens", 0, "cost_usd", 0.0));
	/* level2/d: an unusable task file (a verdict: it counts). */
	add_task(s, "d", "level2", "failed", json_pack("{s:b, s:s}", "found", 0, "error_kind", "input"));
	/* level2/e, f: not finished (an infrastructure stop, a wait): in no rate or average. */
	add_task(s, "e", "level2", "stopped",
		 json_pack("{s:b, s:s, s:s, s:{s:i}}", "found", 0, "error_kind", "infra", "stop_reason",
			   "evaluation failed: the job lost its eval worker twice", "usage", "prompt_tokens", 5000));
	add_task(s, "f", "level2", "waiting", json_pack("{s:b, s:s}", "found", 0, "pending_key", "abc"));

	rep = report_compute(s, "run");
	all = json_object_get(rep, "all");
	l1 = json_object_get(json_object_get(rep, "groups"), "level1");
	l2 = json_object_get(json_object_get(rep, "groups"), "level2");
	CHECK(at(all, "tasks") == 6 && at(all, "finished") == 4 && at(all, "failed") == 1 && at(all, "success") == 2 &&
	      at(all, "stopped") == 1 && at(all, "waiting") == 1,
	      "counts: 6 tasks, 4 finished, 1 failed, 2 with a kernel, 1 stopped, 1 waiting");
	CHECK(near(at(all, "success_rate"), 0.5), "success rate is over the finished tasks (2 of 4)");
	CHECK(near(at(all, "fast_0"), 0.5) && near(at(all, "fast_1"), 0.25) && near(at(all, "fast_1_5"), 0.25) &&
	      near(at(all, "fast_2"), 0.0),
	      "fast_p is the share of all finished tasks correct and more than p times faster (0.5, 0.25, 0.25, 0: "
	      "2x is not > 2)");
	{
		const json_t *nf = json_object_get(all, "not_finished");
		CHECK(json_array_size(nf) == 2 &&
		      !strcmp(json_string_value(json_object_get(json_array_get(nf, 0), "status")), "stopped") &&
		      strstr(json_string_value(json_object_get(json_array_get(nf, 0), "because")), "lost its eval worker") &&
		      !strcmp(json_string_value(json_object_get(json_array_get(nf, 1), "status")), "waiting"),
		      "the tasks not finished are listed with why");
	}
	CHECK(near(at(all, "speedup_eager.mean"), 1.25) && near(at(all, "speedup_eager.geomean"), 1.0) &&
	      at(all, "speedup_eager.n") == 2,
	      "speedup over eager: mean 1.25, geomean 1.0, over the 2 correct kernels only");
	CHECK(near(at(all, "speedup_compile.mean"), 0.625) && near(at(all, "speedup_compile.geomean"), 0.5),
	      "speedup over torch.compile: mean 0.625, geomean 0.5");
	CHECK(near(at(all, "prompt_tokens_per_task"), 100) && near(at(all, "completion_tokens_per_task"), 30) &&
	      near(at(all, "cost_per_task"), 0.01) && near(at(all, "wall_s_per_task"), 10),
	      "per-task tokens, cost and wall time average over the finished tasks");
	CHECK(json_array_size(json_object_get(all, "stages")) == 2 &&
	      !strcmp(json_string_value(json_object_get(json_array_get(json_object_get(all, "stages"), 0), "stage")),
		      "refine") &&
	      near(at(all, "stages.0.gain_mean"), 1.5) && near(at(all, "stages.0.gain_geomean"), sqrt(2.0)) &&
	      at(all, "stages.0.n") == 2,
	      "refinement's gain over its parent: mean 1.5 (2x and 1x), geomean 1.414");
	CHECK(near(at(all, "stages.1.gain_mean"), 1.25) && at(all, "stages.1.n") == 1 &&
	      near(at(all, "stages.1.cumulative"), sqrt(2.0) * 1.25),
	      "mapping's gain 1.25 on the one task that ran it; cumulative is the product of geomeans");
	CHECK(l1 && l2 && at(l1, "success") == 2 && near(at(l1, "fast_1"), 0.5) && at(l2, "success") == 0 &&
	      near(at(l2, "fast_0"), 0.0) && at(l2, "speedup_eager.n") == 0,
	      "groups get their own metrics (level1: 2 of 2, fast_1 0.5; level2: none)");
	json_decref(rep);
	err_clear();
	rep = report_compute(s, "nope");
	CHECK(!rep && err_kind() == ERR_INPUT, "an unknown run is the user's input error");
	store_close(s);
	fs_remove_tree(dir);
	free(dir);
	json_decref(cfg);
}

/* The prompt cache's figures in every form of the report: the tokens written
 * to it, and a saving that is negative (a task that only wrote the cache)
 * said as a cost, never as "saving $-0.0033". */
static void report_cache_forms(void)
{
	char *dir = temp_dir(), *text = NULL, *csv;
	size_t len = 0;
	struct store *s = store_open(dir);
	json_t *cfg = json_object(), *rep;
	FILE *f;

	store_run_create(s, "run", "bench", cfg);
	add_task(s, "a", "g", "done",
		 json_pack("{s:b, s:{s:i, s:i, s:i, s:i, s:f, s:f}}", "found", 0, "usage", "prompt_tokens", 1200,
			   "completion_tokens", 50, "cached_prompt_tokens", 0, "cache_write_tokens", 1100, "cost_usd",
			   0.0045, "cache_saved_usd", -0.0033));
	rep = report_compute(s, "run");
	CHECK(at(rep, "tasks.0.cache_write_tokens") == 1100 && near(at(rep, "tasks.0.cache_saved_usd"), -0.0033) &&
	      near(at(rep, "all.cache_write_tokens_per_task"), 1100) && near(at(rep, "all.cache_saved_usd_per_task"), -0.0033),
	      "the JSON carries the cache-write tokens per task and per finished task, and the negative saving");
	f = open_memstream(&text, &len);
	report_print_text(f, rep);
	fclose(f);
	CHECK(strstr(text, "(0 cached, 1100 written to the cache)") &&
	      strstr(text, "the prompt cache costing $0.0033 more") && !strstr(text, "$-"),
	      "the text shows the tokens written and the cache's extra cost as a cost");
	csv = report_csv(rep);
	CHECK(strstr(csv, ",cached_prompt_tokens,cache_write_tokens,") && strstr(csv, ",0,1100,"),
	      "the CSV has a cache_write_tokens column with the task's figure");
	free(csv);
	free(text);
	json_decref(rep);
	store_close(s);
	fs_remove_tree(dir);
	free(dir);
	json_decref(cfg);
}

/* A sink that refuses its second write and every one after, as a full store would. */
static int refusals;
static int refusing_decision(void *ctx, json_t *d)
{
	(void)ctx;
	(void)d;
	if (++refusals < 2)
		return 0;
	err_set(ERR_INFRA, "store: database or disk is full (write %d)", refusals);
	return -1;
}

static void recorder_keeps_the_store_error(void)
{
	char tmpl[] = "/tmp/egg-unit-rec-XXXXXX";
	char *dir = mkdtemp(tmpl), *run;
	struct recorder_sink sink = { NULL, NULL, NULL, refusing_decision, NULL, NULL };
	struct recorder *r;
	json_t *d = json_pack("{s:s}", "text", "x");
	run = fs_join(dir, "run");
	r = recorder_open(run, &sink);
	recorder_decision(r, d);
	CHECK(recorder_store_error(r) == NULL, "while the store takes every write, there is no store error");
	recorder_decision(r, d);
	recorder_decision(r, d);
	CHECK_STR(recorder_store_error(r) ?: "(none)", "store: database or disk is full (write 2)",
		  "the first refused write is kept, with its message");
	CHECK(!recorder_failed(r) && err_kind() == ERR_NONE,
	      "the folder's own writes still went through, and the error is not left pending");
	recorder_close(r);
	fs_remove_tree(dir);
	free(run);
	json_decref(d);
}

void suite_store(void)
{
	migrations();
	failures();
	run_prefixes();
	run_liveness();
	report_metrics();
	report_cache_forms();
	recorder_keeps_the_store_error();
}
