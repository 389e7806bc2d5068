"""job.py: the trusted parent's side of an evaluation, baseline or profile job.

For an evaluation it forks the reference process, and once that has loaded
the task, the candidate's process; it tells them trial by trial what to
compute (the candidate copies its outputs into a shared region that the
reference reads), runs the timing protocol under the device lock with its
own wall clock, verifies the outputs of timed calls, and assembles the
verdict. It never imports the candidate and never holds outputs.

Every job holds its device's occupancy lock (locks.py) shared; a job in
which a process ran out of memory is run again alone before any verdict.
"""
from __future__ import annotations

import contextlib
import json
import os
import random
import secrets
import shutil
import subprocess
import sys
import tempfile
import time

from .. import faults, progress, sandbox
from ..children import OUTSIDE_KILLS, Child, spawn, sweep_orphans
from ..device.job import refuse_if_too_big
from ..failures import InfraError, InputError, JobLost, lost_if_killed
from ..locks import DeviceWork, device_lock, occupancy
from ..logs import trim
from ..messages import Cmd, Event
from ..proto import ChannelClosed, Deadline
from . import candidate, devregion, reference, static_scan
from .outputs import Region
from .timing import stats

STAGES = ("load", "compile", "run", "correctness", "integrity", "timing")
CAL_CALLS = 20  # calls of each calibration loop (the timed loop's cost without the call)
# worker/, the folder that holds egg-worker.py (this file is worker/egg_worker/protocol/job.py).
WORKER_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _seed() -> int:
    return secrets.randbits(62)


class RetryAlone(Exception):
    """A process ran out of memory while other jobs shared the device."""


class Scratch:
    """A private folder per job: the reference's task file, the candidate's
    own folder (its copy of the task, the kernel, caches), logs."""

    def __init__(self, ctx: dict, job: dict, candidate: bool):
        self.path = tempfile.mkdtemp(prefix="egg-job-")
        self.task_path = os.path.join(self.path, "task.py")
        with open(self.task_path, "w") as f:
            f.write(job["task_source"])
        self.kernel_path = self.cand_task_path = None
        if candidate:
            cand_dir = os.path.join(self.path, "cand")
            os.makedirs(cand_dir)
            self.kernel_path = os.path.join(cand_dir, "kernel.py")
            self.cand_task_path = os.path.join(cand_dir, "task.py")
            with open(self.kernel_path, "w") as f:
                f.write(job.get("kernel_source") or "")
            with open(self.cand_task_path, "w") as f:
                f.write(job["task_source"])
            if ctx.get("drop_privileges"):
                sandbox.give_to_nobody(cand_dir, self.path)

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def _common(ctx: dict, job: dict, scratch: Scratch) -> dict:
    # atol, rtol and clock are absent from the jobs that neither compare nor
    # time (messages.REQUESTS); every other field egg always sends.
    device = job["device"]
    return {"device": device, "precision": job["precision"],
            "l2_bytes": ctx["l2_bytes"].get(device, 0), "cpu_threads": ctx["cpu_threads"],
            "scratch": scratch.path, "task_path": scratch.task_path,
            "atol": job.get("atol"), "rtol": job.get("rtol"), "clock": job.get("clock")}


class Phases:
    """Wall-clock seconds of an evaluation's phases (load: sweep, processes,
    imports and model building; trials: correctness incl. the first compile;
    timing: lock wait, warm-up, calibration, timed loop and checks; cleanup)."""

    def __init__(self):
        self.seconds: dict = {}
        self._last = time.perf_counter()

    def mark(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = round(self.seconds.get(name, 0.0) + now - self._last, 4)
        self._last = now


class Verdict(Exception):
    """A candidate's failure. `oom`: it ran out of memory (its figures);
    `shared`: a timing check that other jobs on the device can make fail
    (they slow the trusted wall clock's loop, not the candidate's events).
    Both are retried alone on the device before they become a verdict."""

    def __init__(self, stage: str, reason: str, log: str = "", oom: dict | None = None, shared: bool = False):
        super().__init__(reason)
        self.stage, self.reason, self.log, self.oom, self.shared = stage, reason, log, oom, shared


def _candidate_msg(c: Child, deadline: float, stage: str) -> dict:
    """The next message from the candidate; its failures become verdicts,
    failures of egg's harness inside its process infrastructure errors."""
    try:
        msg = c.ch.recv(deadline)
    except Deadline:
        raise Verdict(stage, "timed out", c.log_tail()) from None
    except (ChannelClosed, ValueError):
        lost_if_killed(c)
        raise Verdict(stage, f"candidate process {c.describe_exit()} without a result", c.log_tail()) from None
    if msg.get("event") == Event.HARNESS_ERROR:
        raise InfraError(f"egg's evaluation harness failed in the candidate's process while "
                         f"{str(msg.get('where'))[:80]}: {str(msg.get('error'))[:300]}",
                         str(msg.get("log", ""))[-3000:])
    if msg.get("event") == Event.FAIL:
        st = msg.get("stage") if msg.get("stage") in STAGES else stage
        log = str(msg.get("log", ""))
        tail = c.log_tail(1500)
        if tail.strip():
            log = f"{log}\n--- candidate output (tail) ---\n{tail}" if log else tail
        oom = msg.get("memory") if msg.get("oom") is True and isinstance(msg.get("memory"), dict) else None
        if msg.get("oom") is True and oom is None:
            oom = {}
        raise Verdict(st, str(msg.get("reason", "failed"))[:600], trim(log), oom)
    return msg


class ReferenceOOM(Exception):
    def __init__(self, error: str, memory: dict):
        super().__init__(error)
        self.error, self.memory = error, memory


def _reference_msg(r: Child, deadline: float) -> dict:
    try:
        msg = r.ch.recv(deadline)
    except Deadline:
        raise InfraError("the reference process timed out") from None
    except (ChannelClosed, ValueError):
        lost_if_killed(r)
        raise InfraError(f"the reference process {r.describe_exit()}", trim(r.log_tail(4000), 3000)) from None
    if msg.get("event") == Event.OOM:
        raise ReferenceOOM(str(msg.get("error")), msg.get("memory") or {})
    if msg.get("event") == Event.TASK_ERROR:
        raise InputError(msg["error"])
    return msg


def _gb(n) -> str:
    return f"{(n or 0) / 1e9:.2f} GB"


def _launch_configs(got) -> list:
    """The candidate's launch configurations (guards.launch_config: each
    kernel's name, grid and compile-time values) as the tuning stages read
    them. The candidate's own word, informational: kept to its shape and
    size, never trusted for a verdict."""
    out = []
    for c in got if isinstance(got, list) else []:
        if not isinstance(c, dict) or not isinstance(c.get("config"), dict):
            continue
        grid = c.get("grid")
        out.append({"kernel": str(c.get("kernel"))[:60],
                     "grid": [int(g) for g in grid[:3]] if isinstance(grid, list) and all(
                         isinstance(g, int) and not isinstance(g, bool) for g in grid) else None,
                     "config": {str(k)[:40]: v for k, v in list(c["config"].items())[:24]
                                if isinstance(v, (bool, int, float)) or (isinstance(v, str) and len(v) <= 40)}})
        if len(out) == 16:
            break
    return out


def _refuse_if_too_big(ctx: dict, job: dict, processes: int = 2) -> None:
    """An evaluation (processes=2) or a baseline (1) that cannot fit in
    memory is refused before anything of it is allocated
    (device.job.refuse_if_too_big)."""
    what = "to evaluate" if processes == 2 else "to time its baselines"
    fix = ("use smaller sizes in get_inputs, {more}, or fewer jobs at once" if job["device"] == "cpu"
           else "use smaller sizes in get_inputs or {more}")
    refuse_if_too_big(ctx, job, processes, "task", what, fix)


def run_eval(ctx: dict, job: dict) -> dict:
    """An evaluation; run again alone on its device when a process ran out
    of memory while it shared the device."""
    _refuse_if_too_big(ctx, job)
    try:
        with occupancy(job, alone=False):
            return _eval_once(ctx, job, alone=False)
    except RetryAlone as why:
        progress.step("waiting to run again alone on the device")
        with occupancy(job, alone=True):
            res = _eval_once(ctx, job, alone=True)
        res["flags"].append(f"retried_alone: {why}; evaluated again alone on the device")
        return res


def _first_result(job: dict, device: str, phases: Phases, alone: bool) -> dict:
    """An evaluation's result before anything ran (a failure at loading),
    with the flags its job and device give it from the start."""
    selfcheck = job["selfcheck"]
    res = {"verdict": "fail", "stage": "load", "reason": None, "log": "", "trials": job["trials"],
           "correct_trials": 0, "trials_run": 0, "max_abs_err": None, "max_rel_err": None, "kernel_ms": None,
           "triton_launches": None, "launch_configs": [], "device": device, "timing": None,
           "flags": [] if selfcheck else static_scan.scan(job["kernel_source"]),
           "compile_s": None, "sandbox": None, "phases_s": phases.seconds, "ran_alone": alone,
           "selfcheck": selfcheck, "truth": None, "memory": {}, "io_bytes": None}
    if job["allow_torch"] and not selfcheck:
        res["flags"].append("allow_torch: the rule against PyTorch compute outside Triton kernels is waived "
                            "(--allow-torch: a program that keeps PyTorch parts); every other check stands")
    if selfcheck:
        res["flags"].append("selfcheck: the task's own Model stands in for a candidate; the rules against "
                            "PyTorch compute outside Triton kernels are waived")
    if device == "cpu":
        res["flags"].append("cpu_timing: Triton interpreter on the CPU; times are CPU times")
    return res


def _trial(t: int, res: dict, r: Child, c: Child, deadline: float, errs: list, rels: list) -> None:
    """Correctness trial t: the reference prepares fresh inputs, the
    candidate runs on them, the reference compares; a Verdict when the
    candidate breaks the protocol or its outputs do not match."""
    stage = "compile" if t == 0 else "run"
    r.ch.send({"cmd": Cmd.PREPARE, "trial": t})
    prepared = _reference_msg(r, deadline)
    c.ch.send({"cmd": Cmd.TRIAL, "trial": t, "variant": prepared["variant"]})
    if t == 0:
        faults.loss_point("run", "eval", job_pid=c.pid)
    msg = _candidate_msg(c, deadline, stage)
    specs = msg.get("specs")
    if msg.get("event") != Event.OUTPUTS or msg.get("trial") != t or not isinstance(specs, list) \
            or not 0 < len(specs) <= 64:
        raise Verdict("integrity", "candidate broke the evaluation protocol")
    # Launches per call: the first call compiles, and an autotuned
    # kernel also launches every configuration it times there (906
    # for TritonBench's int8 matmul), so later calls count when
    # there are any.
    if t == 0 and isinstance(specs[0], dict) and specs[0].get("where") in ("device", "host"):
        res["output_region"] = specs[0]["where"]  # informational: the candidate's own word
    n = int(msg.get("launches") or 0)
    res["triton_launches"] = n if t == 1 else max(res["triton_launches"] or 0, n)
    res["launch_configs"] = _launch_configs(msg.get("launch_configs"))
    r.ch.send({"cmd": Cmd.COMPARE, "trial": t, "specs": specs})
    cmp = _reference_msg(r, deadline)
    res["trials_run"] = t + 1
    if cmp.get("max_abs_err") is not None:
        errs.append(cmp["max_abs_err"])
        rels.append(cmp["max_rel_err"])
    res["max_abs_err"] = max(errs) if errs else None
    res["max_rel_err"] = max(rels) if rels else None
    if cmp.get("truth"):
        old = res["truth"]
        if old is None or cmp["truth"]["out_err"] / cmp["truth"]["bound"] > old["out_err"] / old["bound"]:
            res["truth"] = cmp["truth"]
    if not cmp["ok"]:
        raise Verdict("correctness", cmp["reason"] or "output mismatch")
    res["correct_trials"] = t + 1


def _eval_once(ctx: dict, job: dict, alone: bool) -> dict:
    trials = job["trials"]
    selfcheck = job["selfcheck"]
    phases = Phases()
    sweep_orphans(set())  # nothing a previous candidate left may load the machine now
    timeout = float(job["timeout_s"])
    deadline = time.monotonic() + timeout
    scratch = Scratch(ctx, job, candidate=True)
    common = _common(ctx, job, scratch)
    weight_seed = _seed()
    trial_seeds = [_seed() for _ in range(trials)]
    res = _first_result(job, common["device"], phases, alone)
    ref_job = dict(common, weight_seed=weight_seed, trial_seeds=trial_seeds, alone=alone,
                   truth=job["truth"], selfcheck=selfcheck)
    cand_job = dict(common, weight_seed=weight_seed, trial_seeds=trial_seeds, task_path=scratch.cand_task_path,
                    alone=alone,
                    kernel_path=scratch.kernel_path, memory_limit=ctx.get("memory_limit"), selfcheck=selfcheck,
                    allow_torch=job["allow_torch"],
                    sandbox=dict(ctx["sandbox"], drop_to_nobody=ctx["drop_privileges"]))
    region = Region()
    # On a GPU the reference hands the candidate a device region over this
    # pair (devregion.py); the host region stays as the fallback.
    ref_end, cand_end = devregion.socket_pair() if common["device"].startswith("cuda") else (None, None)
    # Loading and each trial are steps of device work (locks.py): none of
    # them runs while another job on this device times or profiles.
    work = DeviceWork(job)
    progress.step("loading the task and the kernel")
    work.acquire()
    r = spawn(reference.run, "reference", os.path.join(scratch.path, "reference.log"), ref_job, region, ref_end,
              keep_fds=(region.fd,) + ((ref_end.fileno(),) if ref_end else ()))
    c = None
    stage = "load"
    try:
        try:
            _reference_msg(r, deadline)  # loaded: the task is in the reference's memory
            c = spawn(candidate.run, "candidate", os.path.join(scratch.path, "candidate.log"), cand_job, region,
                      cand_end, keep_fds=(region.fd,) + ((cand_end.fileno(),) if cand_end else ()))
            for end in (ref_end, cand_end):
                if end is not None:
                    end.close()
            ready = _reference_msg(r, deadline)
            res["io_bytes"] = {"inputs": ready.get("input_bytes"), "outputs": ready.get("output_bytes")}
            region.seal(int(ready["region_bytes"]))
            loaded = _candidate_msg(c, deadline, "load")
            res["sandbox"] = loaded.get("sandbox")
            work.release()
            phases.mark("load")
            c.ch.send({"cmd": Cmd.TRIALS, "reference": {"outputs": ready["outputs"], "aliases": ready["aliases"],
                                                        "mutated": ready["mutated"],
                                                        "region_bytes": int(ready["region_bytes"]),
                                                        "device_region": ready.get("device_region") is True}})
            errs, rels = [], []
            for t in range(trials):
                stage = "compile" if t == 0 else "run"
                progress.step(f"correctness trial {t + 1}/{trials}" + (" (first call: compiling)" if t == 0 else ""))
                work.acquire()
                _trial(t, res, r, c, deadline, errs, rels)
                work.release()
            stage = "integrity"
            with work.step():
                c.ch.send({"cmd": Cmd.DONE})
                done = _candidate_msg(c, deadline, "run")
                res["compile_s"] = done.get("compile_s")
                r.ch.send({"cmd": Cmd.TASK_FLAGS})
                res["flags"].extend(_reference_msg(r, deadline)["flags"])
            phases.mark("trials")
            if job["timing"]:
                stage = "timing"
                _time(ctx, job, res, c, r, deadline, ready["outputs"])
                phases.mark("timing")
            res["verdict"] = "pass"
            res["stage"] = "done"
        except Verdict as v:
            if v.oom is not None:
                _oom_verdict(res, v, r, deadline, alone)
            if v.shared and not alone:
                raise RetryAlone(f"a timing check failed while other jobs shared the device ({v.reason[:160]})")
            res["stage"], res["reason"], res["log"] = v.stage, v.reason, v.log
        except ReferenceOOM as e:
            if not alone:
                raise RetryAlone(f"the reference process ran out of memory ({e.error[:200]})") from None
            raise InfraError(f"the reference alone needs more memory than {common['device']} has free "
                             f"(it had reserved {_gb(e.memory.get('gpu_peak_bytes') or e.memory.get('rss_peak_bytes'))}): "
                             f"{e.error[:300]}") from None
        res["memory"] = _memory(r, c if res["verdict"] == "pass" else None, deadline)
    finally:
        _end_eval(res, (c, r), work, region, (ref_end, cand_end), scratch, phases)
    return res


def _end_eval(res: dict, children: tuple, work: DeviceWork, region: Region, ends: tuple, scratch: Scratch,
              phases: Phases) -> None:
    """However an evaluation ended: its processes told to exit and killed,
    the device work released, the region and socket ends closed, orphans
    swept and the scratch folder removed."""
    for child in children:
        if child is not None:
            with contextlib.suppress(Exception):
                child.ch.send({"cmd": Cmd.EXIT})
            if os.environ.get("EGG_WORKER_PROFILE"):
                child.wait_exit(10.0)  # it writes its profile on the way out
            child.kill()
    work.release()
    res["work_spans"] = work.spans
    region.close()
    for end in ends:
        if end is not None:
            end.close()
    sweep_orphans(set())
    _keep_profiles(scratch)
    scratch.remove()
    phases.mark("cleanup")


def _keep_profiles(scratch: Scratch) -> None:
    """With EGG_WORKER_PROFILE (children.py), the candidate's profile out of
    its scratch folder."""
    out = os.environ.get("EGG_WORKER_PROFILE")
    if not out or not scratch.kernel_path:
        return
    cand = os.path.dirname(scratch.kernel_path)
    for root, _dirs, files in os.walk(cand):
        for name in files:
            if name.startswith("candidate-") and name.endswith(".prof"):
                shutil.copy(os.path.join(root, name), os.path.join(out, name))


def _oom_verdict(res: dict, v: Verdict, r: Child, deadline: float, alone: bool) -> None:
    """A candidate out of memory: retried alone first; alone, its verdict
    says what it allocated against what the reference needs."""
    if not alone:
        raise RetryAlone(f"the candidate ran out of memory at stage {v.stage}")
    need = ""
    with contextlib.suppress(Exception):
        r.ch.send({"cmd": Cmd.STATS})
        ref = _reference_msg(r, min(deadline, time.monotonic() + 30))
        peak = ref.get("gpu_peak_allocated_bytes") or ref.get("rss_peak_bytes")
        need = f"; the reference needs {_gb(peak)}"
    got = v.oom.get("allocated_bytes") or v.oom.get("rss_bytes")
    v.reason = f"{v.reason[:300]} (running alone on the device; it had allocated {_gb(got)}{need})"


def _memory(r: Child, c: Child | None, deadline: float) -> dict:
    """The children's memory peaks (informational: the candidate's are its own claim)."""
    out = {}
    for name, child in (("reference", r), ("candidate", c)):
        if child is None or not child.alive():
            continue
        try:
            child.ch.send({"cmd": Cmd.STATS})
            msg = child.ch.recv(min(deadline, time.monotonic() + 30))
            if msg.get("event") == Event.STATS:
                out[name] = {k: v for k, v in msg.items() if k != "event" and isinstance(v, (int, float))}
        except Exception:
            pass
    return out


def _time(ctx: dict, job: dict, res: dict, c: Child, r: Child, deadline: float, outputs: list) -> None:
    warmup, iters = job["warmup"], job["iters"]
    base_seed, seed = _seed(), _seed()
    # The loop's own cost per call (fresh inputs, flush, sync, summary) is
    # the same from call to call: CAL_CALLS calls measure it, not `iters`.
    cal_n = min(iters, CAL_CALLS)

    def calibrate() -> float:
        """Seconds per call of the loop without the call."""
        t0 = time.perf_counter()
        c.ch.send({"cmd": Cmd.CALIBRATE, "n": cal_n, "seed": _seed(), "base_seed": base_seed})
        _candidate_msg(c, deadline, "timing")
        return (time.perf_counter() - t0) / cal_n

    progress.step("timing: waiting for the device")
    with device_lock(job) as held:
        progress.step(f"timing: {warmup} warm-up calls, {iters} timed calls")
        c.ch.send({"cmd": Cmd.WARMUP, "n": warmup, "seed": _seed(), "base_seed": base_seed})
        _candidate_msg(c, deadline, "timing")
        # The loop without the call, before and after the timed loop; the
        # smaller is its cost (the first can still pay one-time setup).
        cal_before = calibrate()
        t0 = time.perf_counter()
        c.ch.send({"cmd": Cmd.TIME, "n": iters, "seed": seed, "base_seed": base_seed})
        timed = _candidate_msg(c, deadline, "timing")
        w1 = time.perf_counter() - t0
        cal_after = calibrate()
        w0 = min(cal_before, cal_after)
        c.ch.send({"cmd": Cmd.GUARDED, "n": 2, "seed": _seed()})
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
    progress.step("timing: checking the outputs of timed calls")
    pick = sorted(set(random.sample(range(iters), min(8, iters)) + [iters - 1]))
    r.ch.send({"cmd": Cmd.VERIFY, "seed": seed, "base_seed": base_seed, "indices": pick,
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
    clock = "cpu_perf_counter" if res["device"] == "cpu" else f"cuda_events_{job['clock']}"
    # Wall-clock cross-check by the trusted process: the timed loop minus an
    # identical loop without the call, per iteration.
    per_call = max(0.0, (w1 / iters - w0) * 1e3)
    # How far two identical loops disagree is the resolution of this check
    # (host noise); it widens the slack, at most by 0.05 ms per call on a
    # GPU. On the CPU the candidate's clock and the wall clock both measure
    # host time on a machine that other evaluations load, with few
    # iterations: the fixed slack is 0.25 ms and the noise term reaches 1 ms.
    cpu = res["device"] == "cpu"
    noise = min(1.0 if cpu else 0.05, abs(cal_before - cal_after) * 1e3)
    slack = (0.25 if cpu else 0.02) + noise
    res["timing"] = dict(st, warmup=warmup, clock=clock, host_median=hst["median"], launch_median=launch_med,
                         spin_ms=spin, wall_per_call_ms=per_call, wall_noise_ms=noise, **held.as_dict())
    res["kernel_ms"] = st["median"]
    res["flags"].extend(timing_rules(st, hst, per_call, slack, res["device"], clock, launch_med, spin))


def timing_rules(st: dict, hst: dict, per_call: float, slack: float, device: str, clock: str,
                 launch_med: float | None, spin: float) -> list:
    """The checks on a timed loop, given its statistics (st: the candidate's
    clock; hst: host time per call), the trusted wall clock's time per call
    and its slack. Raises Verdict when the timing cannot be trusted; returns
    the flags to add."""
    flags = []
    if st["median"] < 0.0015 and device != "cpu":
        raise Verdict("integrity", f"reported kernel time {st['median'] * 1000:.2f} us is shorter than a kernel "
                      "launch can take: the timer was tampered with")
    # A forged clock reports a small fraction of the real time; an honest one
    # stays within noise of the wall clock, which on a loaded machine can be
    # a factor of two or more, hence the factor of 4.
    if st["mean"] < 0.25 * per_call - slack:
        raise Verdict("integrity", f"reported kernel time ({st['mean']:.4f} ms mean) disagrees with the trusted "
                      f"wall clock ({per_call:.4f} ms per call)", shared=True)
    if hst["median"] > 1.5 * st["median"] + 0.1:
        raise Verdict("integrity", f"work outside the timed stream: host time per call {hst['median']:.4f} ms, "
                      f"stream time {st['median']:.4f} ms", shared=True)
    if clock == "cuda_events_gpu" and launch_med is not None and launch_med > spin:
        flags.append(f"launch_bound: the forward takes {launch_med:.3f} ms to launch, longer than the "
                     f"{spin:.3f} ms spin; the rest of its launch cost is in kernel_ms")
    if st["cv"] > 0.05 and st["median"] >= 1.0:
        flags.append(f"unstable_timing: coefficient of variation {st['cv']:.1%}")
    return flags


def run_baseline(ctx: dict, job: dict) -> dict:
    """Eager and torch.compile timings; run again alone on the device when
    the baseline process ran out of memory beside other jobs."""
    _refuse_if_too_big(ctx, job, processes=1)
    try:
        with occupancy(job, alone=False):
            return _baseline_once(ctx, job)
    except RetryAlone as why:
        with occupancy(job, alone=True):
            try:
                out = _baseline_once(ctx, job)
            except RetryAlone as again:
                raise InfraError(f"{again} even alone on {job['device']}") from None
        out["retried_alone"] = str(why)
        return out


def _baseline_once(ctx: dict, job: dict) -> dict:
    timeout = float(job["timeout_s"])
    deadline = time.monotonic() + timeout
    scratch = Scratch(ctx, job, candidate=False)
    common = _common(ctx, job, scratch)
    b_job = dict(common, weight_seed=_seed(), base_seed=_seed(), seed=_seed(),
                 warmup=job["warmup"], iters=job["iters"], compile_mode=job["compile_mode"])
    # Loading, compiling and warming up are device work (locks.py), as a
    # candidate's loading and trials are: none of it may run beside another
    # job's timed loop. On the CPU it was worse than on a GPU: a baseline
    # warming up beside another's timed loop (two processes' torch threads
    # on two cores) made a 0.2 ms eager read 28 ms, and its kernel 2.4x
    # "faster" than eager where it was 85x slower.
    work = DeviceWork(job)
    try:
        progress.step("baseline: loading, compiling and warming up eager and torch.compile")
        work.acquire()
        b = spawn(reference.baseline, "baseline", os.path.join(scratch.path, "baseline.log"), b_job)
        try:
            faults.loss_point("run", "baseline", job_pid=b.pid)
            msg = _reference_msg(b, deadline)
            work.release()
            if msg.get("event") == Event.READY_TO_TIME:
                progress.step("baseline: waiting for the device to time")
                with device_lock(job) as held:
                    progress.step(f"baseline: timing eager and torch.compile ({job['iters']} calls each)")
                    b.ch.send({"cmd": Cmd.TIME})
                    msg = _reference_msg(b, deadline)
        except ReferenceOOM as e:
            raise RetryAlone(f"the baseline process ran out of memory ({e.error[:200]})") from None
        finally:
            b.kill()
        mem = msg.get("memory") or {}
        out = {"device": common["device"], "precision": common["precision"],
               "eager_ms": msg["eager"]["median"], "eager": msg["eager"],
               "compile_ms": msg.get("compiled", {}).get("median"), "compiled": msg.get("compiled"),
               "compile_s": msg.get("compile_s"), "compile_error": msg.get("compile_error"),
               "compile_summary": msg.get("compile_summary"), "compile_code": msg.get("compile_code"),
               "compile_mode": b_job["compile_mode"], "input_bytes": msg.get("input_bytes"),
               "output_bytes": msg.get("output_bytes"), "peak_bytes": mem.get("gpu_peak_bytes") or
               max(0, (mem.get("rss_peak_bytes") or 0) - (mem.get("rss_start_bytes") or 0)),
               "eager_peak_bytes": (msg.get("eager_peak") or {}).get("gpu_peak_bytes"), "work": msg.get("work"),
               "tolerance": msg.get("tolerance") or [],
               "work_spans": work.spans, **held.as_dict()}
        return out
    finally:
        work.release()
        sweep_orphans(set())
        scratch.remove()


def run_profile(ctx: dict, job: dict) -> dict:
    """Run ncu (arguments chosen by egg) on a profile run of the candidate."""
    timeout = float(job["timeout_s"])
    scratch = Scratch(ctx, job, candidate=True)
    common = _common(ctx, job, scratch)
    # ncu talks to the profiled process over local sockets and reads its
    # counters through the driver, which needs the process's privileges: the
    # profile run gets no namespaces, no seccomp filter and keeps its
    # capabilities. It runs only candidates that already passed evaluation,
    # with a scrubbed environment and limits (README, "Sandbox").
    p_job = dict(common, weight_seed=_seed(), base_seed=_seed(), kernel_path=scratch.kernel_path,
                 task_path=scratch.cand_task_path, warmup=job["warmup"], calls=job["calls"],
                 sandbox={"namespaces": False, "seccomp": False, "drop_capabilities": False})
    job_path = os.path.join(scratch.path, "profile-job.json")
    with open(job_path, "w") as f:
        json.dump(p_job, f)
    launcher = os.path.join(WORKER_DIR, "egg-worker.py")
    ncu = job["ncu"] or shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    argv = [ncu] + list(job["ncu_args"]) + [sys.executable, "-I", launcher, "profile-run", job_path]
    env = {k: v for k, v in os.environ.items() if not any(m in k.upper() for m in sandbox.SECRET_MARKS)}
    t0 = time.monotonic()
    try:
        progress.step("profile: waiting for the device")
        with device_lock(job) as held:
            progress.step("profile: running the kernel under ncu")
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
        if rc is not None and rc < 0 and -rc in OUTSIDE_KILLS:
            raise JobLost(f"the job's ncu process was killed by signal {-rc} from outside the worker")
        return {"rc": rc, "csv": out[-(8 << 20):], "stderr_tail": trim(err, 3000),
                "seconds": time.monotonic() - t0, **held.as_dict()}
    finally:
        sweep_orphans(set())
        scratch.remove()
