/* worker.h: the C client of the Python eval worker (JSON lines over its stdio). */
#ifndef EGG_WORKER_H
#define EGG_WORKER_H

#include <jansson.h>

#include "../config/config.h"

/*
 * A struct worker is one worker process serving one kind of device ("cpu"
 * or "cuda"), started locally or through cfg->worker_cmd. It is started
 * lazily by the first call and restarted by the next call after it died or
 * missed a deadline. Not thread-safe: one caller at a time per worker.
 */
struct worker;

/* The worker protocol this egg speaks (worker/PROTOCOL.md; the worker says
 * its own in its hello line, and a mismatch is refused). */
#define WORKER_PROTOCOL 3

/* `log_path` (copied) receives the worker's stderr (NULL: discarded); `cfg`
 * must outlive the worker. Never fails: errors surface on calls. */
struct worker *worker_new(const struct config *cfg, const char *device_kind, const char *log_path);
/*
 * Sends `request` (its "id" is set here) and waits up to `timeout_ms` for
 * the reply. Returns the reply's "result" (owned), or NULL with ERR_INPUT
 * (the worker rejected the job's input: a bad task file, say) or ERR_INFRA
 * (the worker could not be started, died, or timed out; it is killed and
 * will be restarted by the next call).
 */
json_t *worker_call(struct worker *w, json_t *request, double timeout_ms);
/* worker_call, and once more on a fresh worker when the first call lost the
 * worker (it died, missed the deadline or sent garbage): an infrastructure
 * retry, never a verdict. worker_retries counts them. */
json_t *worker_call_retry(struct worker *w, json_t *request, double timeout_ms);
long worker_retries(const struct worker *w);
/*
 * Progress of the job in hand: the worker says what step it is in at each
 * phase boundary and repeats it every 30 s while the step lasts; `fn` gets
 * the step ("correctness trial 2/5") and the seconds since the job began,
 * on the calling thread, during worker_call. While the worker says nothing
 * (starting it included) `fn` is also ticked once a second with step NULL
 * and the job's seconds (its last line's, plus the time since it came), so
 * that a caller can repeat a line (util/beat.h). NULL: ignored.
 */
typedef void (*worker_progress_fn)(void *arg, const char *step, double elapsed_s);
void worker_set_progress(struct worker *w, worker_progress_fn fn, void *arg);
/* The device lock key (the pool's: "cpu-0", "cuda-1") the worker's jobs use:
 * a local worker takes its work lock for its start (the imports, seconds of
 * CPU), so that no start runs beside another worker's timed loop. Copied. */
void worker_set_lock(struct worker *w, const char *lock);
/* The worker's probe (versions, GPUs, driver, sandbox), asked once per
 * worker process and kept; NULL with the error when the probe failed.
 * Borrowed: valid until the next call on `w`. */
const json_t *worker_probe(struct worker *w);
/* The worker's hello line (versions, sandbox facts), or NULL before start. */
const json_t *worker_hello(const struct worker *w);
/* How many times the process was (re)started. */
int worker_starts(const struct worker *w);
void worker_free(struct worker *w);

/*
 * Sends `sig` to the process group of every worker alive in this process.
 * Async-signal-safe: egg's SIGINT/SIGTERM handler calls it, so that an
 * interrupted egg leaves no worker and no evaluation running (each worker
 * ends its own evaluation processes when it gets SIGTERM).
 */
void worker_signal_all(int sig);

/* "cpu" or "cuda" for a device string ("cpu", "cuda", "cuda:1"); NULL when
 * the string is not a device. */
const char *worker_device_kind(const char *device);
/* The default device: cuda when a GPU is visible here (or a remote worker
 * command is set), else cpu. */
const char *worker_default_device(const struct config *cfg);

#endif
