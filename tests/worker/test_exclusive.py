"""test_exclusive.py: while one job times its kernel, no other job on the
same device runs device work. Three workers share one device lock and
evaluate concurrently; every evaluation reports the span of its timed loop
(timing.locked_at .. released_at) and the spans of its loading and trials
(work_spans); no work span of one job may overlap another job's timed span.
(On the H200, a 6.4 GB trial beside a timed loop doubled an eager baseline.)
A fourth worker measures baselines meanwhile: their loading and warm-up are
device work too, and their timed loops are timed loops (on a 2-core CPU a
baseline warming up, or a worker starting, beside another's timed loop made
a 0.2 ms eager read 28 ms)."""
from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wlib import ROOT, TASKS, Tap, Worker, full_request, read_reply  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "worker"))

JOBS_PER_WORKER = 3


def children() -> list:
    """This test's child processes' ids."""
    me, out = str(os.getpid()), []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1] == me:
                out.append(pid)
        except OSError:
            pass
    return out


def child_opens(path: str, timeout_s: float = 60.0) -> bool:
    """Whether a child process of this test comes to hold `path` open (a
    lock file it is about to try), read from the kernel's fd table."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        for pid in children():
            try:
                fds = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
            except OSError:
                continue
            if path in fds:
                return True
        time.sleep(0.05)
    return False


def child_waits_on_lock(timeout_s: float = 60.0) -> bool:
    """Whether a child process of this test comes to wait on a file lock
    (the kernel lists a blocked flock as a "->" line of /proc/locks): the
    proof that it waited, read from the kernel rather than from a pause."""
    me = str(os.getpid())
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        for line in open("/proc/locks"):
            f = line.split()
            if len(f) > 5 and f[1] == "->":
                try:
                    stat = open(f"/proc/{f[5]}/stat").read()
                except OSError:
                    continue
                if stat.rsplit(")", 1)[1].split()[1] == me:
                    return True
        time.sleep(0.05)
    return False


def main() -> int:
    tap = Tap()
    lock_dir = tempfile.mkdtemp(prefix="egg-excl-")
    lock = f"cpu-excl-{os.getpid()}"
    kernel = open(os.path.join(TASKS, "bias_relu_scale_kernel.py")).read()
    task = os.path.join(TASKS, "bias_relu_scale.py")
    workers = [Worker("cpu", env={"EGG_LOCK_DIR": lock_dir}) for _ in range(4)]
    results: list = []
    baselines: list = []
    mu = threading.Lock()

    def run(w: Worker, n: int) -> None:
        for _ in range(n):
            r = w.eval(task, kernel, lock=lock, iters=20, warmup=2)
            with mu:
                results.append(r)

    def measure(w: Worker, n: int) -> None:
        for _ in range(n):
            r = w.call({"op": "baseline", "device": "cpu", "task_source": open(task).read(), "lock": lock,
                        "compile_mode": "none", "iters": 20, "warmup": 2})
            with mu:
                baselines.append(r)

    threads = [threading.Thread(target=run, args=(w, JOBS_PER_WORKER)) for w in workers[:3]]
    threads.append(threading.Thread(target=measure, args=(workers[3], JOBS_PER_WORKER)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for w in workers:
        w.close()
    evals = [r.get("result") or {} for r in results]
    passed = [e for e in evals if e.get("verdict") == "pass"]
    tap.ok(len(passed) == 3 * JOBS_PER_WORKER, f"every evaluation passed ({len(passed)} of {3 * JOBS_PER_WORKER})",
           str([e.get("reason") for e in evals if e.get("verdict") != "pass"])[:400])
    bases = [r.get("result") or {} for r in baselines]
    tap.ok(len(bases) == JOBS_PER_WORKER and all(b.get("eager_ms") and len(b.get("work_spans") or []) == 1
                                                 for b in bases),
           f"every baseline was measured and reports its loading span ({len(bases)})", str(baselines)[:400])
    n = len(passed)
    timed = [(i, e["timing"]["locked_at"], e["timing"]["released_at"]) for i, e in enumerate(passed)]
    timed += [(n + i, b["locked_at"], b["released_at"]) for i, b in enumerate(bases) if b.get("locked_at")]
    work = [(i, a, b) for i, e in enumerate(passed) for a, b in e.get("work_spans") or []]
    tap.ok(len(work) >= len(passed) * 6, f"every evaluation reports its load and trial spans ({len(work)} spans)")
    work += [(n + i, a, c) for i, b in enumerate(bases) for a, c in b.get("work_spans") or []]
    # The check means something only where jobs did run at the same time:
    # evaluations whose spans interleave (one worker runs its jobs one after
    # another, so these are different workers').
    extent = []
    for e in passed:
        spans = (e.get("work_spans") or []) + [[e["timing"]["locked_at"], e["timing"]["released_at"]]]
        extent.append((min(a for a, _ in spans), max(b for _, b in spans)))
    together = sum(1 for i, (a, b) in enumerate(extent) for c, d in extent[i + 1:] if a < d and c < b)
    tap.ok(together > 0, f"evaluations ran at the same time ({together} pairs overlapped), so the next check "
           "is not vacuous")
    overlaps = [(i, j) for i, a, b in timed for j, c, d in work if i != j and c < b and a < d]
    tap.ok(not overlaps, f"no job's device work overlapped another job's timed loop ({len(overlaps)} overlaps "
           f"among {len(timed)} timed loops and {len(work)} work spans)")

    # While this test holds the device for timing, a baseline asked for
    # meanwhile does not start loading: the kernel shows the worker blocked
    # on the lock, and its loading starts after the release.
    os.environ["EGG_LOCK_DIR"] = lock_dir
    from egg_worker import locks  # noqa: E402 (after the lock folder is set)

    w = Worker("cpu", env={"EGG_LOCK_DIR": lock_dir})
    req = dict(full_request({"op": "baseline", "device": "cpu", "task_source": open(task).read(), "lock": lock,
                             "compile_mode": "none", "iters": 5, "warmup": 1}), id=1)
    with locks.device_lock({"lock": lock, "device": "cpu"}):
        w.p.stdin.write(json.dumps(req) + "\n")
        w.p.stdin.flush()
        waited = child_waits_on_lock()
        released = time.time()
    r = read_reply(w.p.stdout, 1).get("result") or {}
    w.n = 1
    w.close()
    spans = r.get("work_spans") or []
    tap.ok(waited and len(spans) == 1 and spans[0][0] >= released,
           "a baseline does not load while another job times the device: it loads once the device is free",
           f"released at {released}, spans {spans}")

    # A worker's start (its imports: seconds of CPU) is device work too: one
    # told its device's lock (EGG_STARTUP_LOCK, as egg's pool does) comes to
    # try it (the kernel shows the lock file open in the starting worker)
    # and says hello only once it is free.
    started: dict = {}

    def start() -> None:
        started["worker"] = Worker("cpu", env={"EGG_LOCK_DIR": lock_dir, "EGG_STARTUP_LOCK": lock})
        started["hello_at"] = time.time()

    with locks.device_lock({"lock": lock, "device": "cpu"}):
        t = threading.Thread(target=start)
        t.start()
        waited = child_opens(os.path.realpath(locks._path(locks.lock_key({"lock": lock, "device": "cpu"}), "work")))
        released = time.time()
    t.join()
    started["worker"].close()
    tap.ok(waited and started["hello_at"] >= released, "a worker starting while the device is timed says hello once it is free",
           f"released at {released}, hello at {started['hello_at']}")

    # Slurm steps that share one GPU (shards) lock that GPU, not their slots.
    saved = {k: os.environ.get(k) for k in ("SLURM_STEP_ID", "CUDA_VISIBLE_DEVICES")}
    try:
        os.environ.update(SLURM_STEP_ID="0", CUDA_VISIBLE_DEVICES="1")
        a = locks.lock_key({"lock": "slurm-0", "device": "cuda:0"})
        b = locks.lock_key({"lock": "slurm-1", "device": "cuda:0"})
        cpu = locks.lock_key({"lock": "slurm-1", "device": "cpu"})
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"
        other = locks.lock_key({"lock": "slurm-1", "device": "cuda:0"})
        del os.environ["SLURM_STEP_ID"]
        local = locks.lock_key({"lock": "cuda-0", "device": "cuda:0"})
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    tap.ok(a == b == "slurm-gpu-1" and other == "slurm-gpu-0" and cpu == "slurm-1" and local == "cuda-0",
           "two Slurm GPU steps on one GPU share its lock; on two GPUs, or CPU steps, or outside Slurm, they do not",
           f"{a} {b} {other} {cpu} {local}")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
