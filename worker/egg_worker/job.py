"""job.py: the trusted parent's side of an evaluation, baseline or profile job.

For an evaluation it forks a reference process and a candidate process,
routes the candidate's outputs to the reference for comparison, runs the
timing protocol under the device lock with its own wall clock, verifies the
outputs of timed calls, and assembles the verdict. It never imports the
candidate and never holds reference outputs.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import secrets
import shutil
import subprocess
import sys
import tempfile
import time

from . import candidate, reference, static_scan
from .children import Child, spawn, sweep_orphans
from .logs import trim
from .proto import ChannelClosed, Deadline
from .timing import stats

STAGES = ("load", "compile", "run", "correctness", "integrity", "timing")


class InputError(Exception):
    """The job's task is unusable (the user's input error)."""


class InfraError(Exception):
    """The worker could not do the job (not the candidate's fault)."""


def _seed() -> int:
    return secrets.randbits(62)


class Held:
    """What a held device lock records: its key, the wait, and the wall-clock
    interval it was held (epoch seconds), for exclusivity checks."""

    def __init__(self, key: str):
        self.key = key
        self.waited = 0.0
        self.start = 0.0
        self.end = 0.0

    def as_dict(self) -> dict:
        return {"lock": self.key, "lock_wait_s": self.waited, "locked_at": self.start, "released_at": self.end}


@contextlib.contextmanager
def device_lock(job: dict):
    """Exclusive use of one device for timing and profiling, across all
    workers on this machine (flock; released if the holder dies). The key is
    the job's "lock" (egg's device slot) or its device."""
    key = str(job.get("lock") or job.get("device", "cpu")).replace(":", "-").replace("/", "-")
    lock_dir = os.environ.get("EGG_LOCK_DIR", tempfile.gettempdir())
    path = os.path.join(lock_dir, f"egg-device-{key}.lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    held = Held(key)
    t0 = time.monotonic()
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        held.waited = time.monotonic() - t0
        held.start = time.time()
        yield held
    finally:
        held.end = time.time()
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


class Scratch:
    """A private folder per job: task and kernel files, logs, caches."""

    def __init__(self, ctx: dict, job: dict):
        if job.get("clock", "gpu") not in ("gpu", "latency"):
            raise InputError(f"unknown clock '{job.get('clock')}' (use gpu or latency)")
        self.path = tempfile.mkdtemp(prefix="egg-job-")
        self.task_path = os.path.join(self.path, "task.py")
        with open(self.task_path, "w") as f:
            f.write(job["task_source"])
        self.kernel_path = None
        if "kernel_source" in job:
            cand_dir = os.path.join(self.path, "cand")
            os.makedirs(cand_dir)
            self.kernel_path = os.path.join(cand_dir, "kernel.py")
            with open(self.kernel_path, "w") as f:
                f.write(job["kernel_source"])
            if ctx.get("drop_privileges"):
                for root, dirs, files in os.walk(cand_dir):
                    for n in dirs + files:
                        os.chown(os.path.join(root, n), 65534, 65534)
                os.chown(cand_dir, 65534, 65534)
                os.chmod(self.path, 0o711)
                os.chmod(self.task_path, 0o644)

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def _common(ctx: dict, job: dict, scratch: Scratch) -> dict:
    device = job.get("device", "cpu")
    return {"device": device, "precision": job.get("precision", "fp32"),
            "l2_bytes": ctx["l2_bytes"].get(device, 0), "cpu_threads": ctx["cpu_threads"],
            "scratch": scratch.path, "task_path": scratch.task_path,
            "atol": job.get("atol"), "rtol": job.get("rtol"), "clock": job.get("clock", "gpu")}


class Phases:
    """Wall-clock seconds of an evaluation's phases (load: sweep, processes,
    imports and model building; trials: correctness incl. the first compile;
    timing: lock wait, warm-up, calibration, timed loop and checks; cleanup)."""

    def __init__(self):
        self.seconds: dict = {}
        self._last = time.perf_counter()

    def mark(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = round(now - self._last, 4)
        self._last = now


class Verdict(Exception):
    def __init__(self, stage: str, reason: str, log: str = ""):
        super().__init__(reason)
        self.stage, self.reason, self.log = stage, reason, log


def _candidate_msg(c: Child, deadline: float, stage: str) -> dict:
    """The next message from the candidate; its failures become verdicts."""
    try:
        msg = c.ch.recv(deadline)
    except Deadline:
        raise Verdict(stage, "timed out", c.log_tail()) from None
    except (ChannelClosed, ValueError):
        raise Verdict(stage, f"candidate process {c.describe_exit()} without a result", c.log_tail()) from None
    if msg.get("event") == "fail":
        st = msg.get("stage") if msg.get("stage") in STAGES else stage
        log = str(msg.get("log", ""))
        tail = c.log_tail(1500)
        if tail.strip():
            log = f"{log}\n--- candidate output (tail) ---\n{tail}" if log else tail
        raise Verdict(st, str(msg.get("reason", "failed"))[:600], trim(log))
    return msg


def _reference_msg(r: Child, deadline: float) -> dict:
    try:
        return r.ch.recv(deadline)
    except Deadline:
        raise InfraError("the reference process timed out") from None
    except (ChannelClosed, ValueError):
        raise InfraError(f"the reference process {r.describe_exit()}: {trim(r.log_tail(), 1500)}") from None


def run_eval(ctx: dict, job: dict) -> dict:
    trials = int(job.get("trials", 5))
    if trials < 1:
        raise InputError("trials must be at least 1")
    phases = Phases()
    sweep_orphans(set())  # nothing a previous candidate left may load the machine now
    timeout = float(job.get("timeout_s", 600))
    deadline = time.monotonic() + timeout
    scratch = Scratch(ctx, job)
    common = _common(ctx, job, scratch)
    weight_seed = _seed()
    trial_seeds = [_seed() for _ in range(trials)]
    res = {"verdict": "fail", "stage": "load", "reason": None, "log": "", "trials": trials,
           "correct_trials": 0, "max_abs_err": None, "max_rel_err": None, "kernel_ms": None,
           "triton_launches": None, "device": common["device"], "timing": None,
           "flags": static_scan.scan(job["kernel_source"]), "compile_s": None, "sandbox": None,
           "phases_s": phases.seconds}
    if common["device"] == "cpu":
        res["flags"].append("cpu_timing: Triton interpreter on the CPU; times are CPU times")
    ref_job = dict(common, weight_seed=weight_seed, trial_seeds=trial_seeds)
    cand_job = dict(common, weight_seed=weight_seed, trial_seeds=trial_seeds,
                    kernel_path=scratch.kernel_path, isolate_network=ctx["isolate_network"],
                    drop_privileges=ctx["drop_privileges"], memory_limit=ctx.get("memory_limit"))
    r = spawn(reference.run, "reference", os.path.join(scratch.path, "reference.log"), ref_job)
    c = spawn(candidate.run, "candidate", os.path.join(scratch.path, "candidate.log"), cand_job)
    stage = "load"
    try:
        ready = _reference_msg(r, deadline)
        if ready.get("event") == "task_error":
            raise InputError(ready["error"])
        res["flags"].extend(ready["flags"])
        loaded = _candidate_msg(c, deadline, "load")
        res["sandbox"] = loaded.get("sandbox")
        phases.mark("load")
        c.ch.send({"cmd": "trials", "reference": {"outputs": ready["outputs"], "aliases": ready["aliases"]}})
        errs, rels = [], []
        for t in range(trials):
            stage = "compile" if t == 0 else "run"
            msg = _candidate_msg(c, deadline, stage)
            count = msg.get("count")
            if msg.get("event") != "outputs" or msg.get("trial") != t or not isinstance(count, int) or not 0 < count <= 64:
                raise Verdict("integrity", "candidate broke the evaluation protocol")
            res["triton_launches"] = max(res["triton_launches"] or 0, int(msg.get("launches") or 0))
            r.ch.send({"cmd": "compare", "trial": t, "count": count})
            for _ in range(count):
                try:
                    kind, body = c.ch.recv_frame(deadline)
                    kind2, data = c.ch.recv_frame(deadline)
                except Deadline:
                    raise Verdict("run", "timed out sending outputs") from None
                except ChannelClosed:
                    raise Verdict("run", f"candidate process {c.describe_exit()} while sending outputs",
                                  c.log_tail()) from None
                if kind != "J" or kind2 != "B":
                    raise Verdict("integrity", "candidate broke the evaluation protocol")
                r.ch.send_frame("J", body)
                r.ch.send_frame("B", data)
            cmp = _reference_msg(r, deadline)
            if cmp.get("max_abs_err") is not None:
                errs.append(cmp["max_abs_err"])
                rels.append(cmp["max_rel_err"])
            res["max_abs_err"] = max(errs) if errs else None
            res["max_rel_err"] = max(rels) if rels else None
            if not cmp["ok"]:
                raise Verdict("correctness", cmp["reason"] or "output mismatch")
            res["correct_trials"] = t + 1
        stage = "integrity"
        done = _candidate_msg(c, deadline, "run")
        res["compile_s"] = done.get("compile_s")
        phases.mark("trials")
        if job.get("timing", True):
            stage = "timing"
            _time(ctx, job, res, c, r, deadline, ready["outputs"])
            phases.mark("timing")
        res["verdict"] = "pass"
        res["stage"] = "done"
    except Verdict as v:
        res["stage"], res["reason"], res["log"] = v.stage, v.reason, v.log
    finally:
        for child in (c, r):
            with contextlib.suppress(Exception):
                child.ch.send({"cmd": "exit"})
        c.kill()
        r.kill()
        sweep_orphans(set())
        scratch.remove()
        phases.mark("cleanup")
    return res


def _time(ctx: dict, job: dict, res: dict, c: Child, r: Child, deadline: float, outputs: list) -> None:
    warmup = int(job.get("warmup", 10))
    iters = int(job.get("iters", 100))
    base_seed, seed = _seed(), _seed()
    def calibrate() -> float:
        t0 = time.perf_counter()
        c.ch.send({"cmd": "calibrate", "n": iters, "seed": _seed(), "base_seed": base_seed})
        _candidate_msg(c, deadline, "timing")
        return time.perf_counter() - t0

    with device_lock(job) as held:
        c.ch.send({"cmd": "warmup", "n": warmup, "seed": _seed(), "base_seed": base_seed})
        _candidate_msg(c, deadline, "timing")
        # The loop without the call, before and after the timed loop; the
        # smaller is its cost (the first can still pay one-time setup).
        cal_before = calibrate()
        t0 = time.perf_counter()
        c.ch.send({"cmd": "time", "n": iters, "seed": seed, "base_seed": base_seed})
        timed = _candidate_msg(c, deadline, "timing")
        w1 = time.perf_counter() - t0
        cal_after = calibrate()
        w0 = min(cal_before, cal_after)
        c.ch.send({"cmd": "guarded", "n": 2, "seed": _seed()})
        guarded = _candidate_msg(c, deadline, "timing")
    events = timed.get("events_ms")
    host = timed.get("host_ms")
    sums = timed.get("checksums")
    if not (isinstance(events, list) and isinstance(host, list) and isinstance(sums, list)
            and len(events) == len(host) == len(sums) == iters
            and all(isinstance(v, (int, float)) and v >= 0 for v in events + host)):
        raise Verdict("integrity", "candidate returned malformed timing data")
    if guarded.get("violations") or not all(guarded.get("launches") or [0]):
        raise Verdict("integrity", "after the timed calls, forward stopped using Triton kernels: "
                      + ", ".join(guarded.get("violations") or ["no launch"]))
    # Outputs of timed calls: the last one and a random sample, recomputed by
    # the reference from the same seeds.
    pick = sorted(set(random.sample(range(iters), min(8, iters)) + [iters - 1]))
    r.ch.send({"cmd": "verify", "seed": seed, "base_seed": base_seed, "indices": pick,
               "checksums": [sums[i] for i in pick]})
    ver = _reference_msg(r, deadline)
    if ver["bad"]:
        raise Verdict("integrity", f"outputs of timed calls are wrong (calls {ver['bad'][:5]} of {iters}): "
                      "the kernel behaves differently after the correctness trials")
    st = stats(events)
    hst = stats(host)
    launch = timed.get("launch_ms")
    launch_med = stats(launch)["median"] if isinstance(launch, list) and launch and all(
        isinstance(v, (int, float)) for v in launch) else None
    spin = timed.get("spin_ms") if isinstance(timed.get("spin_ms"), (int, float)) else 0.0
    clock = "cpu_perf_counter" if res["device"] == "cpu" else f"cuda_events_{job.get('clock', 'gpu')}"
    # Wall-clock cross-check by the trusted process: the timed loop minus an
    # identical loop without the call, per iteration.
    per_call = max(0.0, (w1 - w0) * 1e3 / iters)
    # How far two identical loops disagree is the resolution of this check
    # (host noise); it widens the slack, at most by 0.05 ms per call.
    noise = min(0.05, abs(cal_before - cal_after) * 1e3 / iters)
    res["timing"] = dict(st, warmup=warmup, clock=clock, host_median=hst["median"], launch_median=launch_med,
                         spin_ms=spin, wall_per_call_ms=per_call, wall_noise_ms=noise, **held.as_dict())
    res["kernel_ms"] = st["median"]
    if st["median"] < 0.0015 and res["device"] != "cpu":
        raise Verdict("integrity", f"reported kernel time {st['median'] * 1000:.2f} us is shorter than a kernel "
                      "launch can take: the timer was tampered with")
    # A forged clock reports a small fraction of the real time; an honest one
    # stays within noise of the wall clock, which on a loaded machine can be
    # a factor of two or more, hence the factor of 4.
    if st["mean"] < 0.25 * per_call - 0.02 - noise:
        raise Verdict("integrity", f"reported kernel time ({st['mean']:.4f} ms mean) disagrees with the trusted "
                      f"wall clock ({per_call:.4f} ms per call)")
    if hst["median"] > 1.5 * st["median"] + 0.1:
        raise Verdict("integrity", f"work outside the timed stream: host time per call {hst['median']:.4f} ms, "
                      f"stream time {st['median']:.4f} ms")
    if clock == "cuda_events_gpu" and launch_med is not None and launch_med > spin:
        res["flags"].append(f"launch_bound: the forward takes {launch_med:.3f} ms to launch, longer than the "
                            f"{spin:.3f} ms spin; the rest of its launch cost is in kernel_ms")
    if st["cv"] > 0.05 and st["median"] >= 1.0:
        res["flags"].append(f"unstable_timing: coefficient of variation {st['cv']:.1%}")


def run_baseline(ctx: dict, job: dict) -> dict:
    timeout = float(job.get("timeout_s", 1200))
    deadline = time.monotonic() + timeout
    scratch = Scratch(ctx, {k: v for k, v in job.items() if k != "kernel_source"})
    common = _common(ctx, job, scratch)
    b_job = dict(common, weight_seed=_seed(), base_seed=_seed(), seed=_seed(),
                 warmup=int(job.get("warmup", 10)), iters=int(job.get("iters", 100)),
                 compile=bool(job.get("compile", True)), compile_mode=job.get("compile_mode", "default"))
    try:
        b = spawn(reference.baseline, "baseline", os.path.join(scratch.path, "baseline.log"), b_job)
        try:
            msg = _reference_msg(b, deadline)
            if msg.get("event") == "ready_to_time":
                with device_lock(job) as held:
                    b.ch.send({"cmd": "time"})
                    msg = _reference_msg(b, deadline)
        finally:
            b.kill()
        if msg.get("event") == "task_error":
            raise InputError(msg["error"])
        out = {"device": common["device"], "precision": common["precision"],
               "eager_ms": msg["eager"]["median"], "eager": msg["eager"],
               "compile_ms": msg.get("compiled", {}).get("median"), "compiled": msg.get("compiled"),
               "compile_s": msg.get("compile_s"), "compile_error": msg.get("compile_error"),
               "compile_mode": b_job["compile_mode"], **held.as_dict()}
        return out
    finally:
        sweep_orphans(set())
        scratch.remove()


def run_profile(ctx: dict, job: dict) -> dict:
    """Run ncu (arguments chosen by egg) on a profile run of the candidate."""
    timeout = float(job.get("timeout_s", 300))
    scratch = Scratch(ctx, job)
    common = _common(ctx, job, scratch)
    # ncu talks to the profiled process over local sockets, so the profile
    # run shares ncu's network namespace; it runs only candidates that
    # already passed evaluation, with a scrubbed environment and limits.
    p_job = dict(common, weight_seed=_seed(), base_seed=_seed(), kernel_path=scratch.kernel_path,
                 warmup=int(job.get("warmup", 3)), calls=int(job.get("calls", 1)),
                 isolate_network=False, drop_privileges=False)
    job_path = os.path.join(scratch.path, "profile-job.json")
    with open(job_path, "w") as f:
        json.dump(p_job, f)
    launcher = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "egg-worker.py")
    ncu = job.get("ncu") or shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    argv = [ncu] + list(job.get("ncu_args", [])) + [sys.executable, "-I", launcher, "profile-run", job_path]
    env = {k: v for k, v in os.environ.items() if not any(m in k.upper() for m in ("KEY", "TOKEN", "SECRET"))}
    t0 = time.monotonic()
    try:
        with device_lock(job) as held:
            try:
                p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env,
                                   cwd=scratch.path, start_new_session=True)
                rc, out, err = p.returncode, p.stdout, p.stderr
            except subprocess.TimeoutExpired as e:
                rc = None
                out = e.stdout.decode("utf-8", "replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
                err = "timed out"
            except FileNotFoundError:
                return {"rc": None, "csv": "", "error": f"ncu not found at '{ncu}'"}
        return {"rc": rc, "csv": out[-(8 << 20):], "stderr_tail": trim(err, 3000),
                "seconds": time.monotonic() - t0, **held.as_dict()}
    finally:
        sweep_orphans(set())
        scratch.remove()
