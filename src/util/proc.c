/* proc.c: subprocess start, pipes, deadline-bounded collection and group kill. */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "timeutil.h"

extern char **environ;

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

/* In the child: make `fd` become `target`, or open /dev/null there. */
static void child_dup(int fd, int target)
{
	if (fd >= 0 && fd != target)
		dup2(fd, target);
}

static void child_null(int target, int flags)
{
	int fd = open("/dev/null", flags);
	if (fd >= 0) {
		dup2(fd, target);
		close(fd);
	}
}

int proc_start(struct proc *p)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, errp[2] = { -1, -1 };
	int status_pipe[2] = { -1, -1 };
	int child_errno = 0;
	ssize_t n;

	p->in = p->out = p->err = -1;
	p->pid = -1;
	if (!p->argv.n) {
		err_set(ERR_INFRA, "cannot run a process with no command");
		return -1;
	}
	if ((p->pipe_in && pipe2(in, O_CLOEXEC) < 0) ||
	    (p->pipe_out && pipe2(out, O_CLOEXEC) < 0) ||
	    (p->pipe_err && pipe2(errp, O_CLOEXEC) < 0) ||
	    pipe2(status_pipe, O_CLOEXEC) < 0) {
		err_set(ERR_INFRA, "cannot run '%s': %s", p->argv.v[0], strerror(errno));
		goto fail;
	}
	fflush(NULL);
	p->pid = fork();
	if (p->pid < 0) {
		err_set(ERR_INFRA, "cannot run '%s': %s", p->argv.v[0], strerror(errno));
		goto fail;
	}
	if (p->pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (p->new_pgroup)
			setpgid(0, 0);
		if (p->null_in)
			child_null(0, O_RDONLY);
		else
			child_dup(in[0], 0);
		if (p->null_out)
			child_null(1, O_WRONLY);
		else
			child_dup(out[1], 1);
		if (p->err_to_out) {
			dup2(1, 2);
		} else if (p->err_path) {
			int fd = open(p->err_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
			if (fd >= 0) {
				dup2(fd, 2);
				close(fd);
			}
		} else if (p->null_err)
			child_null(2, O_WRONLY);
		else
			child_dup(errp[1], 2);
		if (p->cwd && chdir(p->cwd) < 0)
			goto child_fail;
		execvpe(p->argv.v[0], strvec_argv(&p->argv),
			p->use_env ? strvec_argv(&p->env) : environ);
child_fail:
		child_errno = errno;
		if (write(status_pipe[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(127);
		_exit(127);
	}
	close_fd(&status_pipe[1]);
	do
		n = read(status_pipe[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close_fd(&status_pipe[0]);
	if (n == sizeof(child_errno)) {
		waitpid(p->pid, NULL, 0);
		p->pid = -1;
		err_set(ERR_INFRA, "cannot run '%s': %s", p->argv.v[0], strerror(child_errno));
		goto fail;
	}
	close_fd(&in[0]);
	close_fd(&out[1]);
	close_fd(&errp[1]);
	p->in = in[1];
	p->out = out[0];
	p->err = errp[0];
	return 0;
fail:
	close_fd(&in[0]);
	close_fd(&in[1]);
	close_fd(&out[0]);
	close_fd(&out[1]);
	close_fd(&errp[0]);
	close_fd(&errp[1]);
	close_fd(&status_pipe[0]);
	close_fd(&status_pipe[1]);
	return -1;
}

static void fill_status(int raw, struct proc_status *st)
{
	if (!st)
		return;
	st->exited = WIFEXITED(raw);
	st->code = st->exited ? WEXITSTATUS(raw) : -1;
	st->signaled = WIFSIGNALED(raw);
	st->sig = st->signaled ? WTERMSIG(raw) : 0;
	st->timed_out = 0;
}

int proc_wait(struct proc *p, struct proc_status *st)
{
	int raw = 0;
	pid_t r;

	if (st)
		memset(st, 0, sizeof(*st));
	if (p->pid <= 0)
		return -1;
	do
		r = waitpid(p->pid, &raw, 0);
	while (r < 0 && errno == EINTR);
	p->pid = -1;
	if (r < 0)
		return -1;
	fill_status(raw, st);
	return 0;
}

void proc_kill(struct proc *p, int grace_ms, struct proc_status *st)
{
	pid_t target;
	double deadline;
	int raw = 0;

	if (p->pid <= 0)
		return;
	target = p->new_pgroup ? -p->pid : p->pid;
	kill(target, SIGTERM);
	deadline = time_mono_ms() + grace_ms;
	for (;;) {
		pid_t r = waitpid(p->pid, &raw, WNOHANG);
		if (r == p->pid) {
			/* The leader is gone; stragglers in its group get no grace. */
			if (p->new_pgroup)
				kill(target, SIGKILL);
			fill_status(raw, st);
			p->pid = -1;
			return;
		}
		if (r < 0 && errno != EINTR)
			break;
		if (time_mono_ms() >= deadline)
			break;
		time_sleep_ms(10);
	}
	kill(target, SIGKILL);
	while (waitpid(p->pid, &raw, 0) < 0 && errno == EINTR)
		;
	fill_status(raw, st);
	p->pid = -1;
}

void proc_clear(struct proc *p)
{
	close_fd(&p->in);
	close_fd(&p->out);
	close_fd(&p->err);
	strvec_clear(&p->argv);
	strvec_clear(&p->env);
}

/* Append what is readable on `fd` into `b` (dropping what exceeds its cap).
 * Returns 0 on data, 1 on EOF, -1 on error. */
static int drain(int fd, struct buf *b)
{
	char chunk[16384];
	ssize_t n = read(fd, chunk, sizeof(chunk));
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -1;
	if (n == 0)
		return 1;
	if (b) {
		size_t room = b->cap ? (b->cap > b->len ? b->cap - b->len : 0) : (size_t)n;
		buf_add(b, chunk, (size_t)n < room ? (size_t)n : room);
	}
	return 0;
}

int proc_run(struct proc *p, const char *input, size_t input_len,
	     struct buf *out, struct buf *err, long timeout_ms,
	     struct proc_status *st)
{
	double deadline = timeout_ms > 0 ? time_mono_ms() + (double)timeout_ms : 0;
	size_t written = 0;
	int timed_out = 0;

	p->pipe_in = input != NULL;
	p->null_in = input == NULL;
	p->pipe_out = 1;
	p->pipe_err = !p->err_to_out;
	p->new_pgroup = 1;
	if (proc_start(p) < 0)
		return -1;
	if (p->in >= 0)
		fcntl(p->in, F_SETFL, O_NONBLOCK);
	if (input && input_len == 0)
		close_fd(&p->in);

	while (p->out >= 0 || p->err >= 0) {
		struct pollfd fds[3];
		int nfds = 0, wait_ms = -1, r;
		if (p->out >= 0)
			fds[nfds++] = (struct pollfd){ p->out, POLLIN, 0 };
		if (p->err >= 0)
			fds[nfds++] = (struct pollfd){ p->err, POLLIN, 0 };
		if (p->in >= 0)
			fds[nfds++] = (struct pollfd){ p->in, POLLOUT, 0 };
		if (deadline) {
			double left = deadline - time_mono_ms();
			if (left <= 0) {
				timed_out = 1;
				break;
			}
			wait_ms = (int)left + 1;
		}
		r = poll(fds, (nfds_t)nfds, wait_ms);
		if (r < 0 && errno != EINTR)
			break;
		for (int i = 0; i < nfds && r > 0; i++) {
			if (!fds[i].revents)
				continue;
			if (fds[i].fd == p->in) {
				ssize_t n = write(p->in, input + written, input_len - written);
				if (n > 0)
					written += (size_t)n;
				if ((n < 0 && errno != EAGAIN && errno != EINTR) ||
				    written == input_len)
					close_fd(&p->in);
			} else if (fds[i].fd == p->out) {
				if (drain(p->out, out))
					close_fd(&p->out);
			} else if (fds[i].fd == p->err) {
				if (drain(p->err, err))
					close_fd(&p->err);
			}
		}
	}
	close_fd(&p->in);
	if (timed_out) {
		proc_kill(p, 500, st);
		if (st)
			st->timed_out = 1;
		close_fd(&p->out);
		close_fd(&p->err);
		return 0;
	}
	close_fd(&p->out);
	close_fd(&p->err);
	/* Output closed: the child is ending; make sure no grandchild lingers. */
	proc_wait(p, st);
	return 0;
}

const char *proc_status_str(const struct proc_status *st, char *tmp, size_t n)
{
	if (st->timed_out)
		snprintf(tmp, n, "timed out");
	else if (st->signaled)
		snprintf(tmp, n, "killed by signal %d", st->sig);
	else
		snprintf(tmp, n, "exit %d", st->code);
	return tmp;
}
