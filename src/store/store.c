/* store.c: SQLite-backed run store with schema migrations. */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fault.h"
#include "../util/fs.h"
#include "../util/timeutil.h"

struct store {
	sqlite3 *db;
	char *path;		/* DIR/egg.db, for messages */
	char *dir;		/* DIR */
	int held_fd;		/* the run lock this process holds (store_run_hold), or -1 */
	char *held_run;		/* its run */
	pthread_mutex_t lock;
};

/* Migration i brings the schema from version i to i+1. Never edit one that
 * has shipped; append a new one. */
static const char *const migrations[] = {
	"CREATE TABLE runs (id TEXT PRIMARY KEY, created TEXT NOT NULL, command TEXT NOT NULL,"
	"  status TEXT NOT NULL, config TEXT NOT NULL, finished TEXT);"
	"CREATE TABLE tasks (run_id TEXT NOT NULL REFERENCES runs(id), task_id TEXT NOT NULL, path TEXT NOT NULL,"
	"  grp TEXT NOT NULL, source_hash TEXT NOT NULL, status TEXT NOT NULL, result TEXT,"
	"  started REAL, finished REAL, ord INTEGER NOT NULL, PRIMARY KEY (run_id, task_id));"
	"CREATE TABLE llm_calls (run_id TEXT, task_id TEXT, seq INTEGER, template TEXT, stage TEXT,"
	"  candidate TEXT, prompt_tokens INTEGER, completion_tokens INTEGER, latency_ms REAL, cost_usd REAL,"
	"  cached INTEGER, outcome TEXT, data TEXT, PRIMARY KEY (run_id, task_id, seq));"
	"CREATE TABLE candidates (run_id TEXT, task_id TEXT, cand_id TEXT, stage TEXT, source TEXT,"
	"  verdict TEXT, kernel_ms REAL, eval TEXT, seq INTEGER, PRIMARY KEY (run_id, task_id, seq));"
	"CREATE TABLE profiles (run_id TEXT, task_id TEXT, cand_id TEXT, data TEXT, seq INTEGER,"
	"  PRIMARY KEY (run_id, task_id, seq));"
	"CREATE TABLE decisions (run_id TEXT, task_id TEXT, seq INTEGER, data TEXT,"
	"  PRIMARY KEY (run_id, task_id, seq));"
	"CREATE TABLE steps (run_id TEXT, task_id TEXT, seq INTEGER, data TEXT,"
	"  PRIMARY KEY (run_id, task_id, seq));",
	/* 2: a task an infrastructure failure stopped is 'stopped', no longer
	 * 'failed' with error_kind 'infra' (it never had a verdict); so is its run. */
	"UPDATE tasks SET status = 'stopped', result = json_set(result, '$.status', 'stopped')"
	"  WHERE status = 'failed' AND json_extract(result, '$.error_kind') = 'infra';"
	"UPDATE runs SET status = 'stopped' WHERE status = 'done'"
	"  AND id IN (SELECT run_id FROM tasks WHERE status = 'stopped');",
	/* 3: why a run stopped when none of its tasks did (its own end, or its
	 * program's record, could not be written). */
	"ALTER TABLE runs ADD COLUMN stop_reason TEXT;",
};
#define NMIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

static const char *const task_status_names[] = {
	[TASK_PENDING] = "pending", [TASK_RUNNING] = "running", [TASK_DONE] = "done",
	[TASK_FAILED] = "failed", [TASK_WAITING] = "waiting", [TASK_STOPPED] = "stopped",
};

const char *task_status_name(enum task_status st)
{
	return (unsigned)st < sizeof(task_status_names) / sizeof(task_status_names[0]) ? task_status_names[st] : "?";
}

enum task_status task_status_of(const char *name)
{
	for (size_t i = 0; name && i < sizeof(task_status_names) / sizeof(task_status_names[0]); i++)
		if (!strcmp(name, task_status_names[i]))
			return (enum task_status)i;
	return TASK_PENDING;
}

int task_status_judged(enum task_status st)
{
	return st == TASK_DONE || st == TASK_FAILED;
}

static int fail(struct store *s, const char *what)
{
	err_set(ERR_INFRA, "store '%s': %s: %s", s->path, what, sqlite3_errmsg(s->db));
	return -1;
}

/* A read that failed: NULL with the error (`out`, the rows so far, freed). */
static json_t *read_failed(struct store *s, const char *what, json_t *out)
{
	fail(s, what);
	json_decref(out);
	return NULL;
}

/* A write refused at the fault point `name` (fault.h), as SQLite refuses on a full disk. */
static int faulted(struct store *s, const char *name)
{
	if (!fault_hit(name))
		return 0;
	err_set(ERR_INFRA, "store '%s': %s: database or disk is full (fault point EGG_FAULT=%s)", s->path, name, name);
	return 1;
}

static int exec(struct store *s, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		err_set(ERR_INFRA, "store '%s': %s", s->path, msg ? msg : "error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* Ends a transaction: COMMIT, or ROLLBACK when `rc` (the work's result)
 * failed or the COMMIT itself does (a full disk, a lock not granted in
 * time). Returns 0, or -1 with the error: a transaction that did not land
 * never reports success. */
static int end_transaction(struct store *s, int rc)
{
	if (!rc && !faulted(s, "commit") && exec(s, "COMMIT") == 0)
		return 0;
	if (sqlite3_get_autocommit(s->db) == 0) {
		char *keep = xstrdup(err_msg());
		enum err_kind kind = err_kind();
		exec(s, "ROLLBACK");
		err_set(kind, "%s", keep);
		free(keep);
	}
	return -1;
}

/* One integer a PRAGMA reads back; -1 when it cannot be read. */
static long pragma_int(struct store *s, const char *pragma)
{
	sqlite3_stmt *st;
	long v = 0;
	if (sqlite3_prepare_v2(s->db, pragma, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = (long)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

int store_schema_version(struct store *s)
{
	return (int)pragma_int(s, "PRAGMA user_version");
}

static int migrate(struct store *s)
{
	int v = store_schema_version(s);
	if (v > NMIGRATIONS) {
		err_set(ERR_INFRA, "store: schema version %d is newer than this egg knows (%d)", v, NMIGRATIONS);
		return -1;
	}
	while (v < NMIGRATIONS) {
		char pragma[64];
		if (exec(s, "BEGIN IMMEDIATE") < 0)
			return -1;
		/* The version as it is now that the lock is held: another egg may
		 * have migrated while this one waited for it. */
		if ((v = store_schema_version(s)) >= NMIGRATIONS) {
			exec(s, "ROLLBACK");
			break;
		}
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v + 1);
		if (end_transaction(s, exec(s, migrations[v]) < 0 || exec(s, pragma) < 0 ? -1 : 0) < 0) {
			err_prefix("store: migration %d failed", v + 1);
			return -1;
		}
		v++;
	}
	return 0;
}

int store_exists(const char *dir)
{
	char *path = fs_join(dir, "egg.db");
	int yes = fs_exists(path);
	free(path);
	return yes;
}

struct store *store_open(const char *dir)
{
	struct store *s;
	char *path;
	if (fs_mkdir_p(dir) < 0)
		return NULL;
	s = xcalloc(1, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	path = fs_join(dir, "egg.db");
	s->path = xstrdup(path);
	s->dir = xstrdup(dir);
	s->held_fd = -1;
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK) {
		err_set(ERR_INFRA, "cannot open the store '%s': %s", path, s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto bad;
	}
	sqlite3_busy_timeout(s->db, 30000);
	/* Another egg opening the same store at the same moment holds the lock
	 * that switching to WAL or migrating needs, and the busy handler does
	 * not cover those: try again for up to 30 s. */
	for (int tries = 0;; tries++) {
		if (exec(s, "PRAGMA journal_mode=WAL") == 0 && exec(s, "PRAGMA synchronous=NORMAL") == 0 &&
		    exec(s, "PRAGMA foreign_keys=ON") == 0 && migrate(s) == 0)
			break;
		if (tries >= 600 || !strstr(err_msg(), "locked")) {
			err_prefix("cannot prepare the store '%s'", path);
			goto bad;
		}
		err_clear();
		time_sleep_ms(50);
	}
	{
		/* A fault point for the tests: the store as if its disk held only
		 * N pages, or +N pages more than it holds when opened (SQLite then
		 * refuses writes as on a full disk). */
		const char *pages = getenv("EGG_FAULT_STORE_PAGES");
		if (pages && *pages) {
			char sql[64];
			long n = strtol(pages + (*pages == '+'), NULL, 10);
			if (*pages == '+')
				n += pragma_int(s, "PRAGMA page_count");
			snprintf(sql, sizeof(sql), "PRAGMA max_page_count=%ld", n);
			exec(s, sql);
			err_clear();
		}
	}
	free(path);
	return s;
bad:
	free(path);
	sqlite3_close(s->db);
	pthread_mutex_destroy(&s->lock);
	free(s->path);
	free(s->dir);
	free(s);
	return NULL;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	sqlite3_close(s->db);
	if (s->held_fd >= 0)
		close(s->held_fd);	/* the run is no longer live: its status says how it ended */
	pthread_mutex_destroy(&s->lock);
	free(s->path);
	free(s->dir);
	free(s->held_run);
	free(s);
}

const char *store_path(const struct store *s)
{
	return s->path;
}

/* ---- a tiny statement helper: "s" text, "i" int64, "d" double, "j" JSON (serialised), "n" null ---- */

static int run_stmt(struct store *s, const char *sql, const char *types, ...)
{
	sqlite3_stmt *st;
	va_list ap;
	int rc, i = 1;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return fail(s, "prepare");
	va_start(ap, types);
	for (const char *t = types; *t; t++, i++) {
		switch (*t) {
		case 's': {
			const char *v = va_arg(ap, const char *);
			if (v)
				sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
			else
				sqlite3_bind_null(st, i);
			break;
		}
		case 'i':
			sqlite3_bind_int64(st, i, va_arg(ap, long long));
			break;
		case 'd':
			sqlite3_bind_double(st, i, va_arg(ap, double));
			break;
		case 'j': {
			json_t *v = va_arg(ap, json_t *);
			char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;
			if (text)
				sqlite3_bind_text(st, i, text, -1, free);
			else
				sqlite3_bind_null(st, i);
			break;
		}
		default:
			sqlite3_bind_null(st, i);
		}
	}
	va_end(ap);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : fail(s, "write");
}

/* Every write holds the store's lock: threads share one connection, so a
 * transaction of one thread must not swallow another's statements. */
#define LOCKED(s, expr) ({ int rc_; pthread_mutex_lock(&(s)->lock); rc_ = (expr); pthread_mutex_unlock(&(s)->lock); rc_; })

int store_run_create(struct store *s, const char *run_id, const char *command, json_t *config)
{
	char now[32];
	time_iso8601(now, sizeof(now));
	return LOCKED(s, run_stmt(s, "INSERT INTO runs (id, created, command, status, config) VALUES (?, ?, ?, 'running', ?)",
				  "sssj", run_id, now, command, config));
}

int store_run_set_status(struct store *s, const char *run_id, const char *status, const char *stop_reason)
{
	char now[32];
	time_iso8601(now, sizeof(now));
	if (strcmp(status, "running") && faulted(s, "run_status"))
		return -1;
	return LOCKED(s, run_stmt(s, "UPDATE runs SET status = ?, finished = ?, stop_reason = ? WHERE id = ?", "ssss",
				  status, strcmp(status, "running") ? now : NULL, stop_reason, run_id));
}

/*
 * A run is live while the process that runs it holds an exclusive flock on
 * DIR/runs/RUN/run.lock. The kernel lets go of it however that process
 * ends (Ctrl-C, SIGKILL, a crash), and a pid reused since cannot hold it
 * (nor does a reader need to be on the holder's host, as a pid test would):
 * a run recorded as running whose lock nobody holds was left by a process
 * that is gone.
 */
static char *run_lock_path(const struct store *s, const char *run_id)
{
	return xasprintf("%s/runs/%s/run.lock", s->dir, run_id);
}

/* What another egg's lock file says of its holder ("pid N on HOST"), for messages. */
static void lock_holder(int fd, char *out, size_t n)
{
	char text[160] = "";
	ssize_t got = pread(fd, text, sizeof(text) - 1, 0);
	long pid = 0;
	char host[128] = "";
	snprintf(out, n, "another egg process");
	if (got > 0 && sscanf(text, "%ld %127s", &pid, host) == 2)
		snprintf(out, n, "egg process %ld on %s", pid, host);
}

int store_run_hold(struct store *s, const char *run_id)
{
	char *path = run_lock_path(s, run_id), *dir = xasprintf("%s/runs/%s", s->dir, run_id), host[128] = "?";
	int fd = -1, rc = -1;
	if (fs_mkdir_p(dir) < 0)
		goto out;
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		err_set(ERR_INFRA, "cannot open the run lock '%s': %s", path, strerror(errno));
		goto out;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int held = errno == EWOULDBLOCK;
		char holder[200];
		lock_holder(fd, holder, sizeof(holder));
		if (held)
			err_set(ERR_INPUT, "run %s is running in %s: let it finish (or stop it) before going on with it",
				run_id, holder);
		else
			err_set(ERR_INFRA, "cannot lock the run lock '%s'", path);
		close(fd);
		goto out;
	}
	gethostname(host, sizeof(host) - 1);
	if (ftruncate(fd, 0) == 0)
		dprintf(fd, "%ld %s\n", (long)getpid(), host);
	if (s->held_fd >= 0)
		close(s->held_fd);
	free(s->held_run);
	s->held_fd = fd;
	s->held_run = xstrdup(run_id);
	rc = 0;
out:
	free(path);
	free(dir);
	return rc;
}

/* Whether a process runs `run_id` now (its lock is held). This process's
 * own run is live without a test (on a file system that maps flock onto
 * POSIX locks, closing a second descriptor would drop the held lock); a run
 * without a lock file has no live process; a lock that cannot be tested
 * counts as held (the status stays as recorded). */
static int run_live(const struct store *s, const char *run_id)
{
	char *path;
	int fd, live;
	if (s->held_run && !strcmp(s->held_run, run_id))
		return 1;
	path = run_lock_path(s, run_id);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return errno != ENOENT;
	live = flock(fd, LOCK_SH | LOCK_NB) < 0;
	close(fd);
	return live;
}

/* A run recorded as running whose process is gone is stopped (the record
 * stays as it is: a resume writes the run's status again). */
static void status_as_live(const struct store *s, json_t *run)
{
	const char *id = json_string_value(json_object_get(run, "id"));
	if (!id || strcmp(json_string_value(json_object_get(run, "status")) ?: "", "running") || run_live(s, id))
		return;
	json_object_set_new(run, "status", json_string("stopped"));
	if (json_object_get(run, "stop_reason") && !json_string_value(json_object_get(run, "stop_reason")))
		json_object_set_new(run, "stop_reason", json_string(STORE_GONE_REASON));
}

static json_t *column_json(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	json_t *j = t ? json_loads((const char *)t, 0, NULL) : NULL;
	return j ? j : json_null();
}

static json_t *column_text(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	return t ? json_string((const char *)t) : json_null();
}

/* The run `run_id` names exactly; NULL when none, with `*failed` set (and
 * ERR_INFRA) when the store could not be read. */
static json_t *run_exact(struct store *s, const char *run_id, int *failed)
{
	sqlite3_stmt *st;
	json_t *out = NULL;
	int rc;
	if (sqlite3_prepare_v2(s->db, "SELECT id, created, command, status, config, finished, stop_reason FROM runs"
				      " WHERE id = ?", -1, &st, NULL) != SQLITE_OK) {
		*failed = 1;
		return read_failed(s, "cannot read its runs", NULL);
	}
	sqlite3_bind_text(st, 1, run_id, -1, SQLITE_TRANSIENT);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		out = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "id", column_text(st, 0), "created",
				column_text(st, 1), "command", column_text(st, 2), "status", column_text(st, 3), "config",
				column_json(st, 4), "finished", column_text(st, 5), "stop_reason", column_text(st, 6));
		status_as_live(s, out);
	} else if (rc != SQLITE_DONE) {
		*failed = 1;
		out = read_failed(s, "cannot read its runs", NULL);
	}
	sqlite3_finalize(st);
	return out;
}

/* The ids that begin with `prefix`, newest first; NULL with ERR_INFRA. */
static json_t *ids_with_prefix(struct store *s, const char *prefix)
{
	sqlite3_stmt *st;
	json_t *out = json_array();
	int rc;
	if (sqlite3_prepare_v2(s->db, "SELECT id FROM runs WHERE substr(id, 1, length(?1)) = ?1"
				      " ORDER BY created DESC, id DESC", -1, &st, NULL) != SQLITE_OK)
		return read_failed(s, "cannot read its runs", out);
	sqlite3_bind_text(st, 1, prefix, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(out, column_text(st, 0));
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return read_failed(s, "cannot read its run ids", out);
	return out;
}

/* ERR_INPUT for a prefix that fits several runs: the newest few of them. */
static void ambiguous(struct store *s, const char *prefix, const json_t *ids)
{
	struct buf b = BUF_INIT;
	size_t i, shown = 3;
	const json_t *id;
	json_array_foreach(ids, i, id)
		if (i < shown)
			buf_addf(&b, "%s%s", i ? ", " : "", json_string_value(id));
	if (json_array_size(ids) > shown)
		buf_addf(&b, " and %zu more", json_array_size(ids) - shown);
	err_set(ERR_INPUT, "run '%s' is ambiguous in the store '%s': %zu runs begin with it (%s); give more of the id",
		prefix, s->path, json_array_size(ids), buf_str(&b));
	buf_release(&b);
}

json_t *store_run_get(struct store *s, const char *run_id)
{
	int failed = 0;
	json_t *out = run_exact(s, run_id, &failed), *ids;
	if (out || failed)
		return out;
	/* Not an id: the beginning of one run's id stands for that run. */
	if (!(ids = ids_with_prefix(s, run_id)))
		return NULL;
	if (*run_id && json_array_size(ids) == 1)
		out = run_exact(s, json_string_value(json_array_get(ids, 0)), &failed);
	else if (*run_id && json_array_size(ids) > 1)
		ambiguous(s, run_id, ids);
	else
		err_set(ERR_INPUT, "no run '%s' in the store '%s' ('egg runs' lists its runs)", run_id, s->path);
	json_decref(ids);
	return out;
}

json_t *store_runs(struct store *s)
{
	sqlite3_stmt *st;
	json_t *out = json_array();
	const char *sql =
		"SELECT r.id, r.created, r.command, r.status,"
		"  (SELECT COUNT(*) FROM tasks t WHERE t.run_id = r.id),"
		"  (SELECT COUNT(*) FROM tasks t WHERE t.run_id = r.id AND t.status = 'done'),"
		"  (SELECT COUNT(*) FROM tasks t WHERE t.run_id = r.id AND t.status = 'failed'),"
		"  (SELECT COALESCE(SUM(cost_usd), 0) FROM llm_calls c WHERE c.run_id = r.id AND c.cached = 0),"
		"  (SELECT COUNT(*) FROM tasks t WHERE t.run_id = r.id AND t.status = 'waiting'),"
		"  (SELECT COUNT(*) FROM tasks t WHERE t.run_id = r.id AND t.status = 'stopped')"
		" FROM runs r ORDER BY r.created DESC, r.id DESC";
	int rc;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return read_failed(s, "cannot read its runs", out);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_array_append_new(out, json_pack("{s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:f, s:I}", "id", column_text(st, 0),
						     "created", column_text(st, 1), "command", column_text(st, 2),
						     "status", column_text(st, 3),
						     "tasks", (json_int_t)sqlite3_column_int64(st, 4),
						     "done", (json_int_t)sqlite3_column_int64(st, 5),
						     "failed", (json_int_t)sqlite3_column_int64(st, 6),
						     "cost_usd", sqlite3_column_double(st, 7),
						     "waiting", (json_int_t)sqlite3_column_int64(st, 8)));
		json_object_set_new(json_array_get(out, json_array_size(out) - 1), "stopped",
				    json_integer(sqlite3_column_int64(st, 9)));
		status_as_live(s, json_array_get(out, json_array_size(out) - 1));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? out : read_failed(s, "cannot read its runs", out);
}

int store_task_add(struct store *s, const char *run_id, const char *task_id, const char *path,
		   const char *group, const char *source_hash)
{
	return LOCKED(s, run_stmt(s, "INSERT OR IGNORE INTO tasks (run_id, task_id, path, grp, source_hash, status, ord)"
				     " VALUES (?, ?, ?, ?, ?, 'pending', (SELECT COUNT(*) FROM tasks WHERE run_id = ?))",
				  "ssssss", run_id, task_id, path, group, source_hash, run_id));
}

int store_task_begin(struct store *s, const char *run_id, const char *task_id)
{
	static const char *const tables[] = { "llm_calls", "candidates", "profiles", "decisions", "steps" };
	int rc = 0;
	pthread_mutex_lock(&s->lock);
	if (exec(s, "BEGIN IMMEDIATE") < 0) {
		pthread_mutex_unlock(&s->lock);
		return -1;
	}
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]) && !rc; i++) {
		char sql[128];
		snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE run_id = ? AND task_id = ?", tables[i]);
		rc = run_stmt(s, sql, "ss", run_id, task_id);
	}
	if (!rc)
		rc = run_stmt(s, "UPDATE tasks SET status = 'running', result = NULL, started = ?, finished = NULL"
				 " WHERE run_id = ? AND task_id = ?", "dss", time_wall_s(), run_id, task_id);
	rc = end_transaction(s, rc);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_task_finish(struct store *s, const char *run_id, const char *task_id, enum task_status status,
		      json_t *result)
{
	if (faulted(s, "task_finish"))
		return -1;
	return LOCKED(s, run_stmt(s, "UPDATE tasks SET status = ?, result = ?, finished = ? WHERE run_id = ? AND task_id = ?",
				  "sjdss", task_status_name(status), result, time_wall_s(), run_id, task_id));
}

json_t *store_tasks(struct store *s, const char *run_id)
{
	sqlite3_stmt *st;
	json_t *out = json_array();
	int rc;
	if (sqlite3_prepare_v2(s->db, "SELECT task_id, path, grp, status, result, started, finished FROM tasks"
				      " WHERE run_id = ? ORDER BY ord", -1, &st, NULL) != SQLITE_OK)
		return read_failed(s, "cannot read its tasks", out);
	sqlite3_bind_text(st, 1, run_id, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *t = json_pack("{s:o, s:o, s:o, s:o, s:o}", "task_id", column_text(st, 0), "path", column_text(st, 1),
				      "group", column_text(st, 2), "status", column_text(st, 3), "result", column_json(st, 4));
		json_object_set_new(t, "started", sqlite3_column_type(st, 5) == SQLITE_NULL ? json_null()
											  : json_real(sqlite3_column_double(st, 5)));
		json_object_set_new(t, "finished", sqlite3_column_type(st, 6) == SQLITE_NULL ? json_null()
											   : json_real(sqlite3_column_double(st, 6)));
		json_array_append_new(out, t);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? out : read_failed(s, "cannot read its tasks", out);
}

static long long next_seq(struct store *s, const char *table, const char *run_id, const char *task_id)
{
	sqlite3_stmt *st;
	char sql[160];
	long long n = 0;
	snprintf(sql, sizeof(sql), "SELECT COALESCE(MAX(seq), 0) + 1 FROM %s WHERE run_id = ? AND task_id = ?", table);
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return 1;
	sqlite3_bind_text(st, 1, run_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, task_id, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/* Appends a row with the next sequence number, atomically. */
static int append(struct store *s, const char *table, const char *run_id, const char *task_id, json_t *data)
{
	char sql[160];
	int rc;
	pthread_mutex_lock(&s->lock);
	snprintf(sql, sizeof(sql), "INSERT INTO %s (run_id, task_id, seq, data) VALUES (?, ?, ?, ?)", table);
	rc = run_stmt(s, sql, "ssij", run_id, task_id, next_seq(s, table, run_id, task_id), data);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_add_call(struct store *s, const char *run_id, const char *task_id, json_t *call)
{
	const json_t *c = json_object_get(call, "cost_usd");
	int rc;
	json_t *data = json_deep_copy(call);
	/* The prompts and replies themselves stay in the run folder; the store
	 * keeps what reports need. */
	json_object_del(data, "system");
	json_object_del(data, "user");
	json_object_del(data, "reply");
	pthread_mutex_lock(&s->lock);
	rc = run_stmt(s, "INSERT INTO llm_calls (run_id, task_id, seq, template, stage, candidate, prompt_tokens,"
			 " completion_tokens, latency_ms, cost_usd, cached, outcome, data)"
			 " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "ssisssiiddisj",
		      run_id, task_id, next_seq(s, "llm_calls", run_id, task_id),
		      json_string_value(json_object_get(call, "template")),
		      json_string_value(json_object_get(call, "stage")),
		      json_string_value(json_object_get(call, "candidate")),
		      (long long)json_integer_value(json_object_get(call, "prompt_tokens")),
		      (long long)json_integer_value(json_object_get(call, "completion_tokens")),
		      json_number_value(json_object_get(call, "latency_ms")),
		      json_is_number(c) ? json_number_value(c) : 0.0,
		      (long long)json_is_true(json_object_get(call, "cached")),
		      json_string_value(json_object_get(call, "outcome")), data);
	pthread_mutex_unlock(&s->lock);
	json_decref(data);
	return rc;
}

int store_add_candidate(struct store *s, const char *run_id, const char *task_id, const char *cand_id,
			const char *stage, const char *source, json_t *eval)
{
	const json_t *k = json_object_get(eval, "kernel_ms");
	int rc;
	pthread_mutex_lock(&s->lock);
	rc = run_stmt(s, "INSERT INTO candidates (run_id, task_id, cand_id, stage, source, verdict, kernel_ms, eval, seq)"
			 " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", "ssssss" "dji",
		      run_id, task_id, cand_id, stage, source, json_string_value(json_object_get(eval, "verdict")),
		      json_is_number(k) ? json_number_value(k) : -1.0, eval,
		      next_seq(s, "candidates", run_id, task_id));
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_add_profile(struct store *s, const char *run_id, const char *task_id, const char *cand_id,
		      json_t *profile)
{
	int rc;
	pthread_mutex_lock(&s->lock);
	rc = run_stmt(s, "INSERT INTO profiles (run_id, task_id, cand_id, data, seq) VALUES (?, ?, ?, ?, ?)", "sssji",
		      run_id, task_id, cand_id, profile, next_seq(s, "profiles", run_id, task_id));
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_add_decision(struct store *s, const char *run_id, const char *task_id, json_t *decision)
{
	return append(s, "decisions", run_id, task_id, decision);
}

int store_add_step(struct store *s, const char *run_id, const char *task_id, json_t *step)
{
	return append(s, "steps", run_id, task_id, step);
}

json_t *store_rows(struct store *s, const char *run_id, const char *task_id, const char *kind)
{
	sqlite3_stmt *st;
	json_t *out = json_array();
	const char *sql;
	if (!strcmp(kind, "steps"))
		sql = "SELECT data FROM steps WHERE run_id = ? AND task_id = ? ORDER BY seq";
	else if (!strcmp(kind, "decisions"))
		sql = "SELECT data FROM decisions WHERE run_id = ? AND task_id = ? ORDER BY seq";
	else if (!strcmp(kind, "calls"))
		sql = "SELECT data FROM llm_calls WHERE run_id = ? AND task_id = ? ORDER BY seq";
	else if (!strcmp(kind, "profiles"))
		sql = "SELECT data FROM profiles WHERE run_id = ? AND task_id = ? ORDER BY seq";
	else
		sql = "SELECT eval FROM candidates WHERE run_id = ? AND task_id = ? ORDER BY seq";
	int rc;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return read_failed(s, "cannot read a task's rows", out);
	sqlite3_bind_text(st, 1, run_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, task_id, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(out, column_json(st, 0));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? out : read_failed(s, "cannot read a task's rows", out);
}
