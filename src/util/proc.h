/* proc.h: the one way egg runs subprocesses (argv/env vectors, pipes, deadlines). */
#ifndef EGG_PROC_H
#define EGG_PROC_H

#include <sys/types.h>

#include "buf.h"
#include "strvec.h"

/*
 * Fill in argv (and optionally env, cwd and the pipe requests), then
 * proc_start. With `use_env` the child gets exactly `env`; otherwise it
 * inherits egg's environment. Each of stdin/stdout/stderr is inherited
 * unless its pipe_* flag asks for a pipe (the parent end is then in
 * in/out/err) or its null_* flag asks for /dev/null. `err_to_out` sends the
 * child's stderr into its stdout. With `new_pgroup` the child leads a new
 * process group, and proc_kill signals the whole group.
 *
 * A failed exec is reported by proc_start through a close-on-exec pipe.
 */
struct proc {
	struct strvec argv;
	struct strvec env;
	int use_env;
	const char *cwd;
	int pipe_in, pipe_out, pipe_err;
	int null_in, null_out, null_err;
	int err_to_out;
	int new_pgroup;
	const char *err_path;	/* append the child's stderr to this file */

	pid_t pid;
	int in, out, err;
};

#define PROC_INIT { STRVEC_INIT, STRVEC_INIT, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, NULL, -1, -1, -1, -1 }

struct proc_status {
	int exited;	/* normal exit: `code` is valid */
	int code;
	int signaled;	/* killed by `sig` */
	int sig;
	int timed_out;	/* egg killed it at its deadline */
};

/* Starts the child. Returns 0, or -1 with ERR_INFRA "cannot run 'ARGV0': ..." */
int proc_start(struct proc *p);
/* Waits for the child to end (blocking) and fills `st`. */
int proc_wait(struct proc *p, struct proc_status *st);
/* SIGTERM to the child (its group with new_pgroup), then SIGKILL after
 * `grace_ms`; reaps it. Safe on an already-ended child. */
void proc_kill(struct proc *p, int grace_ms, struct proc_status *st);
/* Closes the parent's pipe ends and frees the vectors. */
void proc_clear(struct proc *p);

/*
 * Runs the child to completion: writes `input` (may be NULL) to its stdin,
 * collects stdout/stderr into `out`/`err` (either may be NULL to discard;
 * output past a buffer's cap is dropped, not an error), and kills the group
 * after `timeout_ms` (0: no deadline). Sets pipe flags itself.
 */
int proc_run(struct proc *p, const char *input, size_t input_len,
	     struct buf *out, struct buf *err, long timeout_ms,
	     struct proc_status *st);

/* Describe a status in words: "exit 0", "killed by signal 9", "timed out". */
const char *proc_status_str(const struct proc_status *st, char *tmp, size_t n);

#endif
