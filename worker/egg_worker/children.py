"""children.py: fork the per-job child processes (reference, candidate, baseline, split, size, calibration)
with clean file descriptors, their own process group and a log file; end
them all when the worker is told to stop."""
from __future__ import annotations

import os
import signal
import time

from . import sandbox
from .proto import Channel

LIVE: dict = {}  # pid -> Child, for kill_all()
# Signals that end a job's process only from outside the job.
OUTSIDE_KILLS = frozenset({signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP})


def oom_kills() -> int | None:
    """The kernel's count of OOM kills since boot (/proc/vmstat), or None."""
    try:
        with open("/proc/vmstat") as f:
            for line in f:
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


class Child:
    def __init__(self, pid: int, ch: Channel, log_path: str, role: str):
        self.pid = pid
        self.ch = ch
        self.log_path = log_path
        self.role = role
        self.status: int | None = None
        self.killed_here = False  # this worker's own code killed it
        self.oom_kills_at_start = oom_kills()

    def alive(self) -> bool:
        if self.status is not None:
            return False
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid == self.pid:
            self.status = status
            return False
        return True

    def kill(self) -> None:
        """SIGKILL the child's whole process group and reap the child."""
        self.killed_here = True
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        LIVE.pop(self.pid, None)
        if self.status is None:
            try:
                _, self.status = os.waitpid(self.pid, 0)
            except ChildProcessError:
                self.status = 0
        self.ch.close()

    def wait_exit(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        while self.alive() and time.monotonic() < end:
            time.sleep(0.01)

    def describe_exit(self) -> str:
        """Why the child ended, in words."""
        if self.status is None:
            self.wait_exit(2.0)
        if self.status is None:
            return "stopped answering"
        if os.WIFSIGNALED(self.status):
            sig = os.WTERMSIG(self.status)
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = f"signal {sig}"
            start, now = self.oom_kills_at_start, oom_kills()
            if sig == signal.SIGKILL and start is not None and now is not None and now > start:
                return "killed by the kernel's OOM killer (the machine ran out of memory while it ran)"
            return f"killed by {name}"
        return f"exited with status {os.WEXITSTATUS(self.status)}"

    def killed_from_outside(self) -> str | None:
        """How the child was killed ("killed by SIGTERM") when a signal that
        only something outside the job sends ended it (a cancelled Slurm
        step, the OOM killer, an operator's kill) and this worker's code did
        not; None otherwise. A sandboxed candidate cannot send itself these:
        it runs as PID 1 of its own PID namespace, which ignores them from
        inside. Without that namespace it can, which costs the job a retry
        and then stops the task as an infrastructure failure; it never
        passes (docs/threat-model.md, "A lost worker")."""
        if self.status is None:
            self.wait_exit(2.0)
        if self.killed_here or self.status is None or not os.WIFSIGNALED(self.status):
            return None
        if os.WTERMSIG(self.status) not in OUTSIDE_KILLS:
            return None
        return self.describe_exit()

    def log_tail(self, limit: int = 2000) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, 2)
                size = f.tell()
                f.seek(max(0, size - limit))
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""


def _profiler(role: str):
    """With EGG_WORKER_PROFILE=DIR (a measurement of the evaluator's own
    time, bench/eval-phases.sh), a child runs under cProfile and leaves
    DIR/ROLE-PID.prof; otherwise None. The candidate's process is sandboxed
    and cannot write there: it leaves its profile in its own scratch
    folder, which the job copies to DIR before removing it."""
    out = os.environ.get("EGG_WORKER_PROFILE")
    if not out:
        return None
    import cProfile

    prof = cProfile.Profile()
    prof.enable()
    name = f"{role}-{os.getpid()}.prof"
    return prof, name if role == "candidate" else os.path.join(out, name)


def spawn(target, role: str, log_path: str, *args, keep_fds: tuple = ()) -> Child:
    """Fork; the child runs target(channel, *args) in its own process group
    with stdin from /dev/null and stdout/stderr into log_path, then exits.
    File descriptors other than its channel and `keep_fds` are closed."""
    p2c_r, p2c_w = os.pipe()
    c2p_r, c2p_w = os.pipe()
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.setsid()
            sandbox.die_with_parent()
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(log_fd, 1)
            os.dup2(log_fd, 2)
            keep = {0, 1, 2, p2c_r, c2p_w, *keep_fds}
            for name in os.listdir("/proc/self/fd"):
                fd = int(name)
                if fd not in keep:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            prof = _profiler(role)
            try:
                target(Channel(p2c_r, c2p_w), *args)
            finally:
                if prof is not None:
                    prof[0].disable()
                    prof[0].dump_stats(prof[1])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 70
        finally:
            try:
                import sys

                sys.stdout.flush()
                sys.stderr.flush()
            except Exception:
                pass
            os._exit(code)
    os.close(p2c_r)
    os.close(c2p_w)
    os.close(log_fd)
    child = Child(pid, Channel(c2p_r, p2c_w), log_path, role)
    LIVE[pid] = child
    return child


def kill_all() -> None:
    """End every live child's process group and whatever they left behind
    (the worker is stopping)."""
    for child in list(LIVE.values()):
        child.killed_here = True
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    LIVE.clear()
    sweep_orphans(set())


def sweep_orphans(keep: set[int]) -> list[int]:
    """As a child subreaper, kill and reap every descendant re-parented to us
    (daemonised leftovers of candidates) except `keep`. Killing one can orphan
    its own children, which are re-parented to us a moment later, so sweep
    until a pass finds nothing. Returns the pids killed."""
    killed: list[int] = []
    quiet = 0
    for _ in range(100):
        found = _sweep_once(keep)
        killed += found
        # Done after two empty passes 50 ms apart: a slow daemon may still be
        # between its fork and its parent's exit.
        quiet = quiet + 1 if not found else 0
        if quiet == 2:
            break
        time.sleep(0.05)
    return killed


def _sweep_once(keep: set[int]) -> list[int]:
    me = os.getpid()
    killed = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        if pid in keep:
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ppid = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == me:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except ProcessLookupError:
                pass
    for pid in killed:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    return killed
