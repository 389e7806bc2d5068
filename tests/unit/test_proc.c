/* test_proc.c: subprocess start, capture, stdin, deadlines and exec failures. */
#include <string.h>

#include "../../src/util/err.h"
#include "../../src/util/proc.h"
#include "../../src/util/timeutil.h"
#include "unit.h"

void suite_proc(void)
{
	struct proc p = PROC_INIT;
	struct buf out = BUF_INIT, err = BUF_INIT;
	struct proc_status st;
	double t0;

	strvec_push(&p.argv, "sh");
	strvec_push(&p.argv, "-c");
	strvec_push(&p.argv, "cat; echo to-err >&2; exit 3");
	CHECK(proc_run(&p, "piped input", 11, &out, &err, 5000, &st) == 0, "proc_run runs a child");
	CHECK_STR(buf_str(&out), "piped input", "stdin reaches the child and stdout comes back");
	CHECK_STR(buf_str(&err), "to-err\n", "stderr is captured apart");
	CHECK(st.exited && st.code == 3 && !st.timed_out, "the exit code is reported");
	proc_clear(&p);

	buf_reset(&out);
	strvec_push(&p.argv, "sh");
	strvec_push(&p.argv, "-c");
	strvec_push(&p.argv, "(sleep 30 &) ; sleep 30");
	t0 = time_mono_ms();
	CHECK(proc_run(&p, NULL, 0, &out, NULL, 300, &st) == 0 && st.timed_out,
	      "a child past its deadline is killed and reported as timed out");
	CHECK(time_mono_ms() - t0 < 5000, "the deadline is honoured (%.0f ms)", time_mono_ms() - t0);
	proc_clear(&p);

	strvec_push(&p.argv, "/nonexistent/egg-binary");
	CHECK(proc_run(&p, NULL, 0, &out, NULL, 1000, &st) == -1 && strstr(err_msg(), "No such file"),
	      "an exec failure is reported by proc_start with its reason");
	proc_clear(&p);

	buf_release(&out);
	buf_init(&out, 10);
	strvec_push(&p.argv, "sh");
	strvec_push(&p.argv, "-c");
	strvec_push(&p.argv, "yes | head -c 100000");
	CHECK(proc_run(&p, NULL, 0, &out, NULL, 5000, &st) == 0 && out.len == 10 && st.exited,
	      "output past the buffer's cap is dropped without blocking the child");
	proc_clear(&p);
	buf_release(&out);
	buf_release(&err);
	err_clear();
}
