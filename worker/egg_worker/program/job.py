"""job.py: the trusted parent's side of a split: the program cut into
subgraphs (split.py) in a child of its own, since it runs the user's program."""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time

from .. import progress
from ..children import spawn
from ..device.job import refuse_if_too_big
from ..failures import InfraError, InputError, lost_if_killed
from ..locks import device_lock, occupancy
from ..logs import trim
from ..messages import Event
from ..proto import ChannelClosed, Deadline
from ..taskload import task_file


def run_split(ctx: dict, job: dict) -> dict:
    """A program cut into subgraphs (split.py), in a child of its own (it
    runs the user's program); with `measure`, alone on the device, each
    subgraph's share of the program's eager time there."""
    from . import split

    scratch = tempfile.mkdtemp(prefix="egg-split-")
    try:
        path = task_file(scratch, job["task_source"])
        s_job = {"task_path": path, "task_source": job["task_source"], "device": job["device"],
                 "measure": job["measure"], "iters": job["iters"], "name": job["name"]}
        if job["measure"]:
            # Measuring builds the program for real on the device and runs
            # it (the trace alone allocates nothing: the meta device).
            refuse_if_too_big(ctx, job, 1, "program", "to measure each subgraph's share of its time",
                              "use smaller sizes in get_inputs or {more} (egg split --no-measure only traces it, "
                              "allocating nothing)")
        progress.step("split: starting the split's process")
        with occupancy(job, alone=job["measure"]), (device_lock(job) if job["measure"] else
                                                     contextlib.nullcontext()):
            c = spawn(split.child, "split", os.path.join(scratch, "split.log"), s_job)
            deadline = time.monotonic() + float(job["timeout_s"])
            try:
                got = c.ch.recv(deadline)
                while got.get("event") == Event.SPLIT_STEP:  # the split's own steps, as it starts each
                    progress.step(f"split: {str(got.get('step'))[:150]}")
                    got = c.ch.recv(deadline)
            except (Deadline, ChannelClosed, ValueError):
                lost_if_killed(c)
                raise InfraError(f"the split process {c.describe_exit()}", trim(c.log_tail(3000), 3000)) from None
            finally:
                c.kill()
        if "error" in got:
            if got.get("input"):
                raise InputError(got["error"])
            raise InfraError(f"egg's split failed: {got['error']}", str(got.get("log", "")))
        return got["plan"]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
