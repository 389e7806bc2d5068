"""locks.py: per-device locks shared by every worker on this machine (flock;
released by the kernel if the holder dies).

- The timing lock: exclusive use of a device while a job times or profiles.
- The work lock: a job's other device work (loading, each correctness
  trial) holds it shared, step by step; timing and profiling hold it
  exclusive, so that no other job's trial shares the device with a timed
  loop or an ncu replay (a 6.4 GB trial beside a timed loop made an eager
  baseline read twice its time on the H200). A gate taken by the waiting
  timer keeps new trials from starving it; it waits at most for the trials
  in flight.
- The occupancy lock: every job holds it shared for its whole run on the
  device; a job that must run alone (an out-of-memory error is retried alone
  before any verdict) holds it exclusive. A gate lock taken briefly before
  the shared lock keeps a waiting exclusive holder from being starved.

The lock folder is EGG_LOCK_DIR or the system's temporary folder; a
candidate's sandbox has a private /tmp, so it cannot touch these files.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time


def lock_key(job: dict) -> str:
    """The job's device lock key (egg's device slot, e.g. cuda-0) or its device.
    A GPU worker that is a Slurm step (egg's slot "slurm-N") locks the GPU
    the step was given instead: two steps may share one GPU (a shard or MPS
    share of it: --slurm-args "--gres=shard:1"), and their slots differ while
    their GPU does not. The GPU is named as the step sees it
    (CUDA_VISIBLE_DEVICES): where Slurm confines each step to its own GPUs
    every step sees "0", and the steps of a node then time one at a time:
    slower, never wrong."""
    key = str(job.get("lock") or job["device"])
    if key.startswith("slurm-") and str(job.get("device", "")).startswith("cuda") \
            and os.environ.get("SLURM_STEP_ID") is not None:
        key = "slurm-gpu-" + (os.environ.get("CUDA_VISIBLE_DEVICES") or "none")
    return key.replace(":", "-").replace("/", "-").replace(",", "+")


def _path(key: str, what: str) -> str:
    lock_dir = os.environ.get("EGG_LOCK_DIR", tempfile.gettempdir())
    name = f"egg-device-{key}.lock" if what == "timing" else f"egg-device-{key}.{what}.lock"
    return os.path.join(lock_dir, name)


class Held:
    """What a held lock records: its key, the wait, and the wall-clock
    interval it was held (epoch seconds), for exclusivity checks."""

    def __init__(self, key: str):
        self.key = key
        self.waited = 0.0
        self.start = 0.0
        self.end = 0.0

    def as_dict(self) -> dict:
        return {"lock": self.key, "lock_wait_s": self.waited, "locked_at": self.start, "released_at": self.end}


def _open(path: str) -> int:
    """Open a lock file, shared by every user of the machine: flock needs
    only a read-only descriptor, and a file another user created in /tmp
    may not be opened with O_CREAT (fs.protected_regular)."""
    while True:
        try:
            return os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            pass
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0o666)
            os.fchmod(fd, 0o666)
            return fd
        except FileExistsError:
            continue


@contextlib.contextmanager
def _flock(path: str, mode: int):
    fd = _open(path)
    try:
        fcntl.flock(fd, mode)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


@contextlib.contextmanager
def device_lock(job: dict):
    """Exclusive use of the job's device for timing and profiling: the
    timing lock, then the work lock exclusive (other jobs' trials drain)."""
    held = Held(lock_key(job))
    t0 = time.monotonic()
    with _flock(_path(held.key, "timing"), fcntl.LOCK_EX), _flock(_path(held.key, "work-gate"), fcntl.LOCK_EX), \
            _flock(_path(held.key, "work"), fcntl.LOCK_EX):
        held.waited = time.monotonic() - t0
        held.start = time.time()
        try:
            yield held
        finally:
            held.end = time.time()


def _shared_behind_gate(key: str, gate: str, what: str) -> int:
    """Take lock `what` shared, passing through its gate first (an exclusive
    taker holds the gate while it waits, so it is not starved); returns the
    descriptor holding it."""
    with _flock(_path(key, gate), fcntl.LOCK_EX):
        fd = _open(_path(key, what))
        fcntl.flock(fd, fcntl.LOCK_SH)
    return fd


@contextlib.contextmanager
def occupancy(job: dict, alone: bool):
    """Held for a whole job: shared, or exclusive when the job must run
    alone on its device. Yields the seconds waited."""
    key = lock_key(job)
    t0 = time.monotonic()
    if alone:
        # Hold the gate while waiting, so no new job slips in ahead.
        with _flock(_path(key, "gate"), fcntl.LOCK_EX), _flock(_path(key, "occupancy"), fcntl.LOCK_EX):
            yield time.monotonic() - t0
    else:
        fd = _shared_behind_gate(key, "gate", "occupancy")
        try:
            yield time.monotonic() - t0
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def _try_flock(fd: int, mode: int, end: float) -> bool:
    """flock(fd, mode) without blocking, tried until `end` (monotonic)."""
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > end:
                return False
            time.sleep(0.05)


@contextlib.contextmanager
def startup(key: str, wait_s: float):
    """A worker's start (importing torch and Triton: seconds of CPU) as
    device work on its device `key`: the work lock shared, through its gate
    as every shared taker goes, waited for at most `wait_s` (a start must
    not wait out a long timed loop and miss its hello: then it goes on
    without). On a 2-core CPU a worker starting beside another's timed loop
    made a 0.2 ms eager baseline read 28 ms (two processes' threads on two
    cores). Yields whether the lock was had."""
    end = time.monotonic() + wait_s
    gate, work = _open(_path(key, "work-gate")), _open(_path(key, "work"))
    had = _try_flock(gate, fcntl.LOCK_EX, end) and _try_flock(work, fcntl.LOCK_SH, end)
    fcntl.flock(gate, fcntl.LOCK_UN)
    os.close(gate)
    try:
        yield had
    finally:
        fcntl.flock(work, fcntl.LOCK_UN)
        os.close(work)


class DeviceWork:
    """The work lock held shared for one step of device work at a time
    (acquire/release, or `with work.step():`); records the spans it was held
    (epoch seconds), for exclusivity checks."""

    def __init__(self, job: dict):
        self.key = lock_key(job)
        self.fd = None
        self.start = 0.0
        self.spans: list = []

    def acquire(self) -> None:
        if self.fd is not None:
            return
        self.fd = _shared_behind_gate(self.key, "work-gate", "work")
        self.start = time.time()

    def release(self) -> None:
        if self.fd is None:
            return
        self.spans.append([self.start, time.time()])
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self.fd = None

    @contextlib.contextmanager
    def step(self):
        self.acquire()
        try:
            yield
        finally:
            self.release()
