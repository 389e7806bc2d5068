"""reference.py: the trusted reference process (and the baseline process).

It never loads a candidate. It computes the reference outputs on the same
hidden inputs, compares what the candidate sent, verifies the outputs of
timed calls, and times the eager and torch.compile baselines.
"""
from __future__ import annotations

import os
import time

import torch

from . import sandbox
from .compare import compare, near_constant, tolerances
from .guards import apply_precision
from .inputs import fresh_like, init_inputs, trial_inputs
from .logs import exception_log, trim
from .proto import Channel
from .taskload import TaskError, load_task
from .tensors import checksum, checksum_close, recv_tensor
from .timing import Timer, stats


def _setup(job: dict, subdir: str) -> torch.device:
    sandbox.scrub_environment()
    sandbox.set_dumpable(False)
    home = os.path.join(job["scratch"], subdir)
    os.makedirs(home, exist_ok=True)
    os.environ.update(TRITON_CACHE_DIR=os.path.join(home, "triton"),
                      TORCHINDUCTOR_CACHE_DIR=os.path.join(home, "inductor"), TMPDIR=home)
    os.chdir(home)
    device = torch.device(job["device"])
    if device.type == "cpu":
        torch.set_num_threads(job["cpu_threads"])
    apply_precision(job["precision"])
    return device


def _flatten(out) -> list:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)) and out and all(isinstance(o, torch.Tensor) for o in out):
        return list(out)
    raise TaskError(f"the reference forward returns {type(out).__name__}, not a tensor or a tuple of tensors")


def _build(job: dict, device: torch.device):
    task = load_task(job["task_path"], "egg_task_r")
    init = init_inputs(task)
    try:
        torch.manual_seed(job["weight_seed"])
        model = task.Model(*init).to(device)
    except Exception as e:
        raise TaskError(f"Model(*get_init_inputs()) raised {type(e).__name__}: {e}") from None
    return task, model


def _forward(model, inputs):
    try:
        with torch.no_grad():
            return _flatten(model(*inputs))
    except TaskError:
        raise
    except Exception as e:
        raise TaskError(f"the reference forward raised {type(e).__name__}: {e}\n{exception_log(e, 1500)}") from None


def run(ch: Channel, job: dict) -> None:
    """Entry point of the reference process."""
    try:
        device = _setup(job, "ref")
        task, model = _build(job, device)
        refs, aliases, flags = [], None, []
        for t, seed in enumerate(job["trial_seeds"]):
            inputs = trial_inputs(task, seed, t, device)
            outs = _forward(model, inputs)
            spans = [(x.untyped_storage().data_ptr(), x.untyped_storage().data_ptr() + x.untyped_storage().nbytes())
                     for x in inputs if isinstance(x, torch.Tensor) and x.numel()]
            if aliases is None:
                aliases = []
                for o in outs:
                    lo = o.untyped_storage().data_ptr()
                    hi = lo + o.untyped_storage().nbytes()
                    aliases.append(any(lo < b and a < hi for a, b in spans))
            refs.append([o.detach().to("cpu").clone() for o in outs])
        sigs = [{"shape": list(o.shape), "dtype": str(o.dtype).replace("torch.", "")} for o in refs[0]]
        for k, sig in enumerate(sigs):
            a, r = tolerances(refs[0][k].dtype, job.get("atol"), job.get("rtol"))
            if len(refs) > 1 and all(tuple(trial[k].shape) == tuple(refs[0][k].shape) and
                                     compare(refs[0][k].to(device), trial[k].to(device), a, r)["ok"]
                                     for trial in refs[1:]):
                flags.append(f"degenerate_task: output {k} does not change with the inputs")
            elif all(near_constant(trial[k].to(device), a, r) for trial in refs):
                flags.append(f"near_constant_output: output {k} is nearly constant")
    except TaskError as e:
        ch.send({"event": "task_error", "error": str(e)})
        return
    ch.send({"event": "ready", "outputs": sigs, "aliases": aliases, "flags": flags})
    base = None
    while True:
        cmd = ch.recv()
        what = cmd.get("cmd")
        if what == "exit":
            return
        if what == "compare":
            t, count = cmd["trial"], cmd["count"]
            results, reason = [], None
            for k in range(count):
                header = ch.recv()
                data = ch.recv_bytes()
                if reason:
                    continue
                try:
                    out = recv_tensor(header, data)
                except ValueError as e:
                    reason = f"output {k}: {e}"
                    continue
                # Compare on the device: fast for large outputs.
                r = compare(refs[t][k].to(device), out.to(device), job.get("atol"), job.get("rtol"))
                results.append(r)
                if not r["ok"]:
                    reason = f"trial {t} output {k}: {r['reason']}"
            errs = [r["max_abs_err"] for r in results if r["max_abs_err"] is not None]
            rels = [r["max_rel_err"] for r in results if r["max_rel_err"] is not None]
            ch.send({"event": "compared", "ok": reason is None and count == len(refs[t]),
                     "reason": reason or (None if count == len(refs[t]) else "wrong number of outputs"),
                     "max_abs_err": max(errs) if errs else None, "max_rel_err": max(rels) if rels else None})
        elif what == "verify":
            # Recompute the outputs of chosen timed calls and compare checksums.
            if base is None:
                base = trial_inputs(task, cmd["base_seed"], 0, device)
            bad = []
            for i, claimed in zip(cmd["indices"], cmd["checksums"]):
                with torch.no_grad():
                    outs = _flatten(model(*fresh_like(base, cmd["seed"] + i, device)))
                if not isinstance(claimed, list) or len(claimed) != len(outs):
                    bad.append(i)
                    continue
                for o, c in zip(outs, claimed):
                    a, r = tolerances(o.dtype, job.get("atol"), job.get("rtol"))
                    if not checksum_close(checksum(o), c, a, r):
                        bad.append(i)
                        break
            ch.send({"event": "verified", "bad": bad})


def _timing_stats(r: dict, timer: Timer) -> dict:
    """Statistics of a timed loop, with the clock and launch figures."""
    return dict(stats(r["events_ms"]), clock=timer.clock, launch_ms=stats(r["launch_ms"])["median"],
                spin_ms=timer.spin_ms if timer.clock == "gpu" else 0.0)


def baseline(ch: Channel, job: dict) -> None:
    """Entry point of the baseline process: eager and torch.compile timings
    with the same loop and precision as candidates."""
    try:
        device = _setup(job, "baseline")
        task, model = _build(job, device)
        timer = Timer(device, job["l2_bytes"], job.get("clock", "gpu"))
        base = trial_inputs(task, job["base_seed"], 0, device)
        _forward(model, base)
    except TaskError as e:
        ch.send({"event": "task_error", "error": str(e)})
        return
    out = {"event": "baseline"}
    compiled = None
    with torch.no_grad():
        # Compile before the device lock is taken: only timing is exclusive.
        if job.get("compile", True):
            try:
                compiled = torch.compile(model, mode=None if job["compile_mode"] == "default" else job["compile_mode"])
                t0 = time.perf_counter()
                compiled(*fresh_like(base, job["seed"] - 1, device))
                timer.sync()
                out["compile_s"] = time.perf_counter() - t0
            except Exception as e:
                compiled = None
                out["compile_error"] = trim(f"{type(e).__name__}: {e}", 600)
        ch.send({"event": "ready_to_time"})
        if ch.recv().get("cmd") != "time":
            return
        timer.run(model, base, job["seed"], job["warmup"], checksums=False, warmup=True)
        r = timer.run(model, base, job["seed"] + 1_000_000, job["iters"], checksums=False)
        out["eager"] = _timing_stats(r, timer)
        if compiled is not None:
            try:
                timer.run(compiled, base, job["seed"], job["warmup"], checksums=False, warmup=True)
                r = timer.run(compiled, base, job["seed"] + 2_000_000, job["iters"], checksums=False)
                out["compiled"] = _timing_stats(r, timer)
            except Exception as e:
                out["compile_error"] = trim(f"{type(e).__name__}: {e}", 600)
    ch.send(out)
