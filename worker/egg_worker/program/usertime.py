"""usertime.py: a program and its drop-in timed the way their user runs them
(egg optimize --split's last word): each side in every way a user runs a
model (the original plain, under torch.compile and under torch.compile with
CUDA graphs, mode="reduce-overhead"; the drop-in the same three ways), by
two clocks:

  device_ms  the device time of one forward (on a GPU, timing.py's gpu clock: fresh
           inputs, L2 flushed, the launch hidden behind a spin kernel);
  wall_ms  wall clock per forward over back-to-back calls on the same
           inputs, launch included, synchronised once at the end: what a
           user's own loop sees (a forward that takes longer to launch than
           to run shows it here and not in device_ms). The loop runs
           wall_rounds times; wall_ms is the median round and wall_rounds_ms
           every round, so that a comparison can tell a gain from the
           host's noise (whole.c counts the drop-in faster only when its
           slowest round beats the original's fastest).

Each side runs in a process of its own: the original in a trusted one, the
drop-in (it holds model-written kernels) in the candidate's sandbox. Both
build the program with the same weight seed, and the drop-in loads the
original's state_dict, as a user's would. A way that fails (a compile
error) is recorded with its error, never fatal: the best way is the fastest
of those that ran.
"""
from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time

import torch

from .. import progress, sandbox
from ..children import spawn
from ..failures import InfraError, lost_if_killed
from ..locks import device_lock, occupancy
from ..logs import exception_log, trim
from ..messages import Cmd, Event
from ..proto import ChannelClosed, Deadline
from ..protocol.candidate import enter_sandbox
from ..protocol.inputs import trial_inputs
from ..protocol.reference import setup_process
from ..protocol.timing import Timer, stats
from ..taskload import build, init_inputs, load_module, load_task

# The ways a user runs a model: name -> torch.compile's mode (None: plain).
WAYS = {"original": (("eager", None), ("compile", "default"), ("compile_cudagraphs", "reduce-overhead")),
        "dropin": (("plain", None), ("compile", "default"), ("compile_cudagraphs", "reduce-overhead"))}


def _wall_rounds_ms(fn, inputs: list, n: int, rounds: int, device: torch.device) -> list:
    """Wall clock per forward over n back-to-back calls, launch included,
    once per round."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    out = []
    for _ in range(max(1, rounds)):
        sync()
        t0 = time.perf_counter()
        for _ in range(n):
            fn(*inputs)
        sync()
        out.append((time.perf_counter() - t0) * 1e3 / n)
    return out


def _time_way(fn, base: list, job: dict, timer: Timer, device: torch.device) -> dict:
    with torch.no_grad():
        for _ in range(3):  # the first calls compile, tune and record CUDA graphs
            fn(*base)
        timer.run(fn, base, job["seed"], job["warmup"], checksums=False, warmup=True)
        dev = stats(timer.run(fn, base, job["seed"] + 1, job["iters"], checksums=False)["events_ms"])
        rounds = _wall_rounds_ms(fn, base, job["wall_iters"], job["wall_rounds"], device)
    return {"device_ms": dev["median"], "device_cv": dev["cv"], "wall_ms": statistics.median(rounds),
            "wall_rounds_ms": rounds}


def child(ch, job: dict) -> None:
    """One side's process: builds it, says it is ready, and on Cmd.TIME
    (the device is then its alone) times it every way its side has."""
    dropin = job["side"] == "dropin"
    try:
        if dropin:
            enter_sandbox(job)
            device = torch.device(job["device"])
            if device.type == "cpu":
                torch.set_num_threads(job["cpu_threads"])
        else:
            device = setup_process(job, "usertime")
        task = load_task(job["task_path"], "egg_usertime_task")
        init = init_inputs(task)
        model = build(task.Model, init, job["weight_seed"], device).to(device)
        if dropin:
            composed = load_module(job["kernel_path"], "egg_usertime_dropin")
            torch.manual_seed(job["weight_seed"])
            fast = composed.ModelNew(*init).to(device)
            fast.load_state_dict(model.state_dict())
            fast.train(model.training)
            del model
            model = fast
        base = trial_inputs(task, job["base_seed"], 0, device, "task")
        timer = Timer(device, job["l2_bytes"], "gpu" if device.type == "cuda" else "cpu")
    except Exception as e:
        ch.send({"event": Event.USERTIME, "error": trim(f"{type(e).__name__}: {e}", 600),
                 "log": exception_log(e)})
        return
    ch.send({"event": Event.READY_TO_TIME})
    if ch.recv().get("cmd") != Cmd.TIME:
        return
    ways = {}
    for name, mode in WAYS[job["side"]]:
        if name not in job["ways"]:
            continue
        try:
            fn = model if mode is None else torch.compile(model, mode=None if mode == "default" else mode)
            ways[name] = _time_way(fn, base, job, timer, device)
        except Exception as e:
            ways[name] = {"error": trim(f"{type(e).__name__}: {e}", 400)}
        finally:
            torch._dynamo.reset()
    ch.send({"event": Event.USERTIME, "ways": ways})


def _side(ctx: dict, job: dict, side: str, scratch: str, seeds: dict, deadline: float) -> dict:
    """One side timed in its own process, alone on the device while it times."""
    home = os.path.join(scratch, side)
    os.makedirs(home)
    task_path = os.path.join(home, "task.py")
    with open(task_path, "w") as f:
        f.write(job["task_source"])
    kernel_path = os.path.join(home, "dropin.py")
    with open(kernel_path, "w") as f:
        f.write(job["kernel_source"] if side == "dropin" else "")
    if side == "dropin" and ctx.get("drop_privileges"):
        sandbox.give_to_nobody(home, scratch)
    c_job = dict(seeds, side=side, device=job["device"], precision=job["precision"], task_path=task_path,
                 kernel_path=kernel_path, scratch=scratch, l2_bytes=ctx["l2_bytes"].get(job["device"], 0),
                 cpu_threads=ctx["cpu_threads"], warmup=job["warmup"], iters=job["iters"],
                 wall_iters=job["wall_iters"], wall_rounds=job["wall_rounds"], ways=job["ways"],
                 memory_limit=ctx.get("memory_limit"),
                 sandbox=dict(ctx["sandbox"], drop_to_nobody=ctx["drop_privileges"]))
    progress.step(f"user's clock: loading the {'drop-in' if side == 'dropin' else 'original program'}")
    c = spawn(child, f"usertime-{side}", os.path.join(scratch, f"{side}.log"), c_job)
    try:
        got = c.ch.recv(deadline)
        if got.get("event") == Event.READY_TO_TIME:
            with device_lock(job):
                progress.step(f"user's clock: timing the {'drop-in' if side == 'dropin' else 'original'} "
                              f"({', '.join(n for n, _ in WAYS[side] if n in job['ways'])})")
                c.ch.send({"cmd": Cmd.TIME})
                got = c.ch.recv(deadline)
    except (Deadline, ChannelClosed, ValueError):
        lost_if_killed(c)
        raise InfraError(f"the {side} timing process {c.describe_exit()}", trim(c.log_tail(3000), 3000)) from None
    finally:
        c.kill()
    if "error" in got:
        return {"error": got["error"]}
    return got["ways"]


def run_usertime(ctx: dict, job: dict) -> dict:
    """{"original": {WAY: {device_ms, device_cv, wall_ms} or {error}}, "dropin": ...}:
    both sides, one after the other, on the same device."""
    import secrets

    scratch = tempfile.mkdtemp(prefix="egg-usertime-")
    os.chmod(scratch, 0o755)
    seeds = {"weight_seed": secrets.randbits(62), "base_seed": secrets.randbits(62), "seed": secrets.randbits(62)}
    deadline = time.monotonic() + float(job["timeout_s"])
    try:
        with occupancy(job, alone=True):
            return {side: _side(ctx, job, side, scratch, seeds, deadline) for side in ("original", "dropin")}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
