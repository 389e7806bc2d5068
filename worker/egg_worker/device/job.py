"""job.py: the trusted parent's side of the device's jobs: a task's sizes
(sizes.measure, in a throwaway child) and the device's peaks
(roofline.calibration_process, in a fresh process alone on the device)."""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time

from .. import progress
from ..children import spawn, sweep_orphans
from ..failures import InfraError, InputError, TooBig, lost_if_killed
from ..locks import device_lock, occupancy
from ..proto import ChannelClosed, Deadline
from ..taskload import TaskError, task_file
from . import roofline, sizes


def run_size(ctx: dict, job: dict) -> dict:
    """The task's input, output and parameter bytes (meta device, in a
    throwaway child; remembered per task text) and an evaluation's expected
    need."""
    key = hashlib.sha256(job["task_source"].encode()).hexdigest()
    cache = ctx.setdefault("sizes", {})
    if key not in cache:
        scratch = tempfile.mkdtemp(prefix="egg-size-")
        try:
            path = task_file(scratch, job["task_source"])

            def child(ch):
                try:
                    ch.send(sizes.measure(path))
                except TaskError as e:
                    ch.send({"task_error": str(e)})

            c = spawn(child, "size", os.path.join(scratch, "size.log"))
            try:
                got = c.ch.recv(time.monotonic() + 120)
            except (Deadline, ChannelClosed, ValueError):
                lost_if_killed(c)
                got = {"error": f"the size probe {c.describe_exit()}"}
            finally:
                c.kill()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        if "task_error" in got:
            raise InputError(got["task_error"])
        got["need_bytes"] = sizes.need_bytes(got)
        cache[key] = got
    return dict(cache[key])


def refuse_if_too_big(ctx: dict, job: dict, processes: int, subject: str, what: str, fix: str) -> None:
    """A job of `processes` processes each holding the task (sizes.need_bytes)
    that cannot fit in its device's memory is refused before anything of it
    is allocated (TooBig: running it again will not help, so the advice says
    what would: `fix`, before which the CPU's advice names a machine and the
    GPU's a device with more memory). On the CPU the memory available shrinks
    with other jobs; a GPU's is all it has."""
    size = run_size(ctx, job)
    need = sizes.need_bytes(size, processes) if size.get("input_bytes") is not None else None
    device = job["device"]
    have = sizes.available_host_bytes() if device == "cpu" else ctx.get("memory_bytes", {}).get(device)
    if need and have and need > have:
        where = "is available on this machine" if device == "cpu" else f"is all {device} has"
        more = "a machine with more memory" if device == "cpu" else "a device with more memory"
        raise TooBig(f"the {subject} needs about {sizes.gb(need)} {what} ({sizes.gb(size['input_bytes'])} of "
                     f"inputs, {sizes.gb(size.get('output_bytes'))} of outputs, "
                     f"{sizes.gb(size.get('param_bytes'))} of parameters); {sizes.gb(have)} of memory {where}: "
                     f"{fix.format(more=more)}")


def run_calibrate(ctx: dict, job: dict) -> dict:
    """The device's peaks (roofline.calibrate), measured in a fresh process
    alone on the device (no other job's work beside it)."""
    scratch = tempfile.mkdtemp(prefix="egg-calibrate-")
    c_job = {"device": job["device"], "scratch": scratch, "cpu_threads": ctx["cpu_threads"]}

    def child(ch):
        try:
            ch.send(roofline.calibration_process(c_job))
        except Exception as e:
            ch.send({"error": f"{type(e).__name__}: {e}"[:500]})

    try:
        progress.step("calibration: waiting for the device")
        with occupancy(job, alone=True), device_lock(job) as held:
            progress.step("calibration: measuring bandwidth and arithmetic peaks")
            c = spawn(child, "calibrate", os.path.join(scratch, "calibrate.log"))
            try:
                got = c.ch.recv(time.monotonic() + float(job["timeout_s"]))
            except (Deadline, ChannelClosed, ValueError):
                lost_if_killed(c)
                got = {"error": f"the calibration process {c.describe_exit()}"}
            finally:
                c.kill()
        if "error" in got:
            raise InfraError(f"device calibration failed: {got['error']}")
        return dict(got, **held.as_dict())
    finally:
        sweep_orphans(set())
        shutil.rmtree(scratch, ignore_errors=True)
