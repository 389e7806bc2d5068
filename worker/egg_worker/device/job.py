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
from ..failures import InfraError, InputError, lost_if_killed
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
