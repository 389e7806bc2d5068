/* worker.c: start, talk to, and restart the eval worker process. */
#include "worker.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/proc.h"
#include "../util/timeutil.h"
#include "launch.h"

#define MAX_LINE (256u << 20)
#define START_TIMEOUT_MS 180000.0

/* Process groups of the live workers, for worker_signal_all. */
#define MAX_LIVE 256
static volatile sig_atomic_t live_pgids[MAX_LIVE];
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;

static void live_set(pid_t old, pid_t new)
{
	pthread_mutex_lock(&live_mu);
	for (int i = 0; i < MAX_LIVE; i++)
		if (live_pgids[i] == old) {
			live_pgids[i] = new;
			break;
		}
	pthread_mutex_unlock(&live_mu);
}

void worker_signal_all(int sig)
{
	for (int i = 0; i < MAX_LIVE; i++) {
		pid_t pg = live_pgids[i];
		if (pg > 0)
			kill(-pg, sig);
	}
}

struct worker {
	const struct config *cfg;
	const char *kind;
	char *log_path;		/* owned */
	char *lock;		/* the device's lock key, told to a local worker for its start (owned), or NULL */
	struct proc proc;
	int running;
	struct buf pending;	/* bytes read past the last line */
	json_t *hello;
	long next_id;
	int starts;
	json_t *probe;		/* kept probe result */
	int probe_start;	/* the start it belongs to */
	int lost;		/* the last call lost the worker (died, deadline, garbage) */
	long retries;		/* jobs run again after a lost worker */
	worker_progress_fn progress;	/* told the job's progress lines, or NULL */
	void *progress_arg;
	double said_s, said_ms;	/* the job's seconds in its last progress line, and when it came */
};

/* How often a call with a progress function ticks it while the worker is
 * silent (worker.h): the caller's heartbeat needs no thread of its own. */
#define TICK_MS 1000

const char *worker_device_kind(const char *device)
{
	if (!device)
		return NULL;
	if (!strcmp(device, "cpu"))
		return "cpu";
	if (!strcmp(device, "cuda") || !strncmp(device, "cuda:", 5))
		return "cuda";
	return NULL;
}

const char *worker_default_device(const struct config *cfg)
{
	if (cfg->device && *cfg->device)
		return cfg->device;
	if ((cfg->worker_cmd && *cfg->worker_cmd) || cfg->slurm)
		return "cuda";
	return fs_exists("/dev/nvidia0") || fs_exists("/proc/driver/nvidia/gpus") ? "cuda" : "cpu";
}

struct worker *worker_new(const struct config *cfg, const char *device_kind, const char *log_path)
{
	struct worker *w = xcalloc(1, sizeof(*w));
	w->cfg = cfg;
	w->kind = device_kind;
	w->log_path = log_path ? xstrdup(log_path) : NULL;
	w->proc = (struct proc)PROC_INIT;
	buf_init(&w->pending, MAX_LINE);
	return w;
}

static void worker_kill(struct worker *w)
{
	if (w->running) {
		live_set(w->proc.pid, 0);
		proc_kill(&w->proc, 2000, NULL);
		proc_clear(&w->proc);
		w->proc = (struct proc)PROC_INIT;
		w->running = 0;
	}
	buf_reset(&w->pending);
}

/* Reads one line (without its newline) into `line` before `deadline`.
 * Returns 0, or -1 on EOF, error or deadline (with *timed_out set). */
static int read_line(struct worker *w, struct buf *line, double deadline, int *timed_out)
{
	*timed_out = 0;
	for (;;) {
		char *nl = w->pending.data ? memchr(w->pending.data, '\n', w->pending.len) : NULL;
		char chunk[65536];
		struct pollfd pfd = { w->proc.out, POLLIN, 0 };
		double left;
		ssize_t n;
		int r;

		if (nl) {
			size_t len = (size_t)(nl - w->pending.data);
			buf_add(line, w->pending.data, len);
			memmove(w->pending.data, nl + 1, w->pending.len - len - 1);
			buf_truncate(&w->pending, w->pending.len - len - 1);
			return 0;
		}
		left = deadline - time_mono_ms();
		if (left <= 0) {
			*timed_out = 1;
			return -1;
		}
		if (w->progress && left > TICK_MS)
			left = TICK_MS;
		r = poll(&pfd, 1, (int)(left > 60000 ? 60000 : left) + 1);
		if (r < 0 && errno != EINTR)
			return -1;
		if (r == 0 && w->progress)
			w->progress(w->progress_arg, NULL, w->said_s + (time_mono_ms() - w->said_ms) / 1000);
		if (r <= 0)
			continue;
		n = read(w->proc.out, chunk, sizeof(chunk));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return -1;
		if (buf_add(&w->pending, chunk, (size_t)n) < 0)
			return -1;
	}
}

static int worker_start(struct worker *w)
{
	struct buf line = BUF_INIT;
	int timed_out, rc = -1;
	const char *kind;

	w->proc = (struct proc)PROC_INIT;
	launch_worker_argv(w->cfg, "serve", w->kind, &w->proc.argv);
	strvec_push(&w->proc.argv, "--device");
	strvec_push(&w->proc.argv, w->kind);
	launch_worker_env(w->cfg, &w->proc.env);
	if (w->lock && !w->cfg->slurm && !(w->cfg->worker_cmd && *w->cfg->worker_cmd))
		strvec_pushf(&w->proc.env, "EGG_STARTUP_LOCK=%s", w->lock);
	w->proc.use_env = 1;
	w->proc.pipe_in = 1;
	w->proc.pipe_out = 1;
	w->proc.new_pgroup = 1;
	if (w->log_path)
		w->proc.err_path = w->log_path;
	else
		w->proc.null_err = 1;
	if (proc_start(&w->proc) < 0) {
		err_prefix("cannot start the eval worker");
		proc_clear(&w->proc);
		return -1;
	}
	w->running = 1;
	w->starts++;
	live_set(0, w->proc.pid);
	if (read_line(w, &line, time_mono_ms() + START_TIMEOUT_MS, &timed_out) < 0) {
		struct proc_status st = { 0 };
		char tmp[64];
		live_set(w->proc.pid, 0);
		proc_kill(&w->proc, 500, &st);
		err_set(ERR_INFRA, "eval worker '%s' %s before saying hello%s%s", w->proc.argv.v[0],
			timed_out ? "timed out" : proc_status_str(&st, tmp, sizeof(tmp)),
			w->log_path ? "; see " : " (is torch installed for it? try 'egg doctor')",
			w->log_path ? w->log_path : "");
		proc_clear(&w->proc);
		w->running = 0;
		goto out;
	}
	json_decref(w->hello);
	w->hello = json_loads(buf_str(&line), 0, NULL);
	kind = json_string_value(json_object_get(w->hello, "device_kind"));
	if (!w->hello || !kind) {
		err_set(ERR_INFRA, "eval worker said something other than hello: %.200s", buf_str(&line));
		worker_kill(w);
		goto out;
	}
	if (json_integer_value(json_object_get(w->hello, "protocol")) != WORKER_PROTOCOL) {
		err_set(ERR_INFRA, "eval worker '%s' speaks protocol %lld; this egg speaks %d (install the same egg "
			"version where the worker runs)", w->proc.argv.v[0],
			json_integer_value(json_object_get(w->hello, "protocol")), WORKER_PROTOCOL);
		worker_kill(w);
		goto out;
	}
	rc = 0;
out:
	buf_release(&line);
	return rc;
}

/* A progress line of the job in hand (request id `id`)? */
static int is_progress(const json_t *line, long id, const char **step)
{
	const char *event = json_string_value(json_object_get(line, "event"));
	*step = json_string_value(json_object_get(line, "step"));
	return event && !strcmp(event, "progress") && *step &&
	       json_integer_value(json_object_get(line, "id")) == id;
}

/* Reads the reply line of the job in hand, passing its progress lines to
 * the progress function on the way. Returns as read_line. */
static int read_reply(struct worker *w, struct buf *line, double deadline, int *timed_out)
{
	for (;;) {
		json_t *obj;
		const char *step;
		if (read_line(w, line, deadline, timed_out) < 0)
			return -1;
		obj = json_loads(buf_str(line), 0, NULL);
		if (!is_progress(obj, w->next_id, &step)) {
			json_decref(obj);
			return 0;
		}
		w->said_s = json_number_value(json_object_get(obj, "elapsed_s"));
		w->said_ms = time_mono_ms();
		if (w->progress)
			w->progress(w->progress_arg, step, w->said_s);
		json_decref(obj);
		buf_reset(line);
	}
}

/* The error kind of a failed job's reply (worker/PROTOCOL.md): the task's
 * (input), a job the device's memory cannot hold (an infra reply's cause
 * "memory"), or the worker's. */
static enum err_kind reply_err_kind(const json_t *reply)
{
	if (!strcmp(json_string_value(json_object_get(reply, "kind")) ?: "", "input"))
		return ERR_INPUT;
	if (!strcmp(json_string_value(json_object_get(reply, "cause")) ?: "", "memory"))
		return ERR_NO_MEMORY;
	return ERR_INFRA;
}

json_t *worker_call(struct worker *w, json_t *request, double timeout_ms)
{
	struct buf line = BUF_INIT;
	char *text = NULL;
	json_t *reply = NULL, *result = NULL;
	double deadline;
	int timed_out;
	const char *kind;

	w->lost = 0;
	w->said_s = 0;
	w->said_ms = time_mono_ms();
	if (!w->running && worker_start(w) < 0) {
		w->lost = 1;
		return NULL;
	}
	json_object_set_new(request, "id", json_integer(++w->next_id));
	text = json_dumps(request, JSON_COMPACT);
	if (!text) {
		err_set(ERR_INFRA, "cannot encode a worker request");
		goto out;
	}
	deadline = time_mono_ms() + timeout_ms;
	{
		size_t len = strlen(text), off = 0;
		text[len] = '\n';
		while (off < len + 1) {
			ssize_t n = write(w->proc.in, text + off, len + 1 - off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				err_set(ERR_INFRA, "eval worker died (cannot send it a job)");
				worker_kill(w);
				w->lost = 1;
				goto out;
			}
			off += (size_t)n;
		}
	}
	if (read_reply(w, &line, deadline, &timed_out) < 0) {
		err_set(ERR_INFRA, "eval worker %s during a job%s%s",
			timed_out ? "missed its deadline" : "died",
			w->log_path ? "; its log: " : "", w->log_path ? w->log_path : "");
		worker_kill(w);
		w->lost = 1;
		goto out;
	}
	reply = json_loads(buf_str(&line), 0, NULL);
	if (!json_is_object(reply) || json_integer_value(json_object_get(reply, "id")) != w->next_id) {
		err_set(ERR_INFRA, "eval worker sent a malformed reply: %.200s", buf_str(&line));
		worker_kill(w);
		w->lost = 1;
		goto out;
	}
	if (!json_is_true(json_object_get(reply, "ok"))) {
		int with_log = json_string_length(json_object_get(reply, "log")) && w->log_path;
		kind = json_string_value(json_object_get(reply, "kind"));
		if (kind && !strcmp(kind, "lost")) {
			/* A process of the job was killed from outside: whatever
			 * killed it may be taking the worker down too, so the job
			 * runs again on a fresh one. */
			err_set(ERR_INFRA, "eval worker lost the job: %s",
				json_string_value(json_object_get(reply, "error")) ?: "killed from outside");
			worker_kill(w);
			w->lost = 1;
			goto out;
		}
		err_set(reply_err_kind(reply), "%s%s%s%s",
			json_string_value(json_object_get(reply, "error")) ?: "the worker failed the job",
			with_log ? " (traceback in " : "", with_log ? w->log_path : "", with_log ? ")" : "");
		goto out;
	}
	result = json_incref(json_object_get(reply, "result"));
out:
	json_decref(reply);
	free(text);
	buf_release(&line);
	return result;
}

const json_t *worker_probe(struct worker *w)
{
	json_t *req;
	if (w->probe && w->probe_start == w->starts && w->running)
		return w->probe;
	json_decref(w->probe);
	req = json_pack("{s:s, s:b}", "op", "probe", "ncu", 0);
	w->probe = worker_call_retry(w, req, 300000);
	json_decref(req);
	w->probe_start = w->starts;
	return w->probe;
}

const json_t *worker_hello(const struct worker *w)
{
	return w->hello;
}

json_t *worker_call_retry(struct worker *w, json_t *request, double timeout_ms)
{
	json_t *res = worker_call(w, request, timeout_ms);
	if (!res && w->lost) {
		/* The worker itself died, hung, talked nonsense or saw a process
		 * of the job killed from outside (not the job's own failure: that
		 * is a verdict or an error reply). Once more on a fresh worker: a
		 * lost node or a killed Slurm step costs a retry, not a task. Lost
		 * again, the job is an infrastructure failure, never a verdict. */
		char *first = xstrdup(err_msg());
		err_clear();
		w->retries++;
		res = worker_call(w, request, timeout_ms);
		if (!res && w->lost) {
			char *second = xstrdup(err_msg());
			if (!strcmp(first, second))
				err_set(ERR_INFRA, "the job lost its eval worker twice, the second time on a fresh one (both "
					"times: %s)", first);
			else
				err_set(ERR_INFRA, "the job lost its eval worker twice (%s; then, on a fresh worker: %s)",
					first, second);
			free(second);
		}
		free(first);
	}
	return res;
}

long worker_retries(const struct worker *w)
{
	return w->retries;
}

void worker_set_lock(struct worker *w, const char *lock)
{
	free(w->lock);
	w->lock = lock ? xstrdup(lock) : NULL;
}

void worker_set_progress(struct worker *w, worker_progress_fn fn, void *arg)
{
	w->progress = fn;
	w->progress_arg = arg;
}

int worker_starts(const struct worker *w)
{
	return w->starts;
}

void worker_free(struct worker *w)
{
	if (!w)
		return;
	if (w->running) {
		/* Polite shutdown first; the kill reaps it either way. */
		static const char bye[] = "{\"op\":\"shutdown\"}\n";
		if (write(w->proc.in, bye, sizeof(bye) - 1) < 0)
			(void)0;
		close(w->proc.in);
		w->proc.in = -1;
		for (int i = 0; i < 100; i++) {
			if (waitpid(w->proc.pid, NULL, WNOHANG) == w->proc.pid) {
				live_set(w->proc.pid, 0);
				w->proc.pid = -1;
				break;
			}
			time_sleep_ms(20);
		}
	}
	worker_kill(w);
	json_decref(w->hello);
	json_decref(w->probe);
	buf_release(&w->pending);
	free(w->log_path);
	free(w->lock);
	free(w);
}
