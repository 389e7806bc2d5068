"""faults.py: fault injection for tests, of two kinds, and a record of
the requests a worker is sent (3).

1. Failures inside an evaluation's processes. EGG_WORKER_FAULTS holds
   comma-separated names; inject(name) raises where a test needs a failure
   that real inputs cannot produce on demand (a bug in the harness, running
   out of memory beside other evaluations). Unset, it costs one dictionary
   lookup.

2. Losing the worker itself at an exact moment (loss_point). egg must turn
   every loss of a worker into a retry of the job in hand, never into the
   candidate's verdict, wherever the loss lands; killing a worker after a
   sleep lands somewhere different on every machine, a loss point lands
   where the test says. When EGG_WORKER_LOSS names a file, the worker reads
   it at each moment below and acts when the file's spec matches:

    {"moment": "run", "op": "eval", "skip": 0, "times": 1, "action": "exit",
     "mark": "/path/of/a/file/to/create"}

   moment  start   after the imports, before the hello line
           hello   after the hello line, before the first request is read
           request a request was read, before anything is done with it
           run     during the job: in an evaluation's first correctness
                   trial (the candidate is computing), in a baseline's first
                   step
           reply   half of the reply line is written
           after   the whole reply is written, before the next request
   op      the request's op it applies to (absent: any; start and hello
           have none)
   skip    matching moments to let pass first (counted down in the file)
   times   how often to act (counted down; 0: never again)
   action  exit: the worker kills itself with SIGKILL (its evaluation
           processes die with it), as a lost node or a killed Slurm step
           would
           kill-job: at "run" only: the job's process (the candidate's, in an
           evaluation) is killed with SIGKILL behind the worker's back, and
           the worker goes on: the branch in which a step's kill reaches the
           evaluation processes before it reaches the worker
           wait: create `mark` (holding the Slurm job id, if any) and wait to
           be killed (the test then kills the worker or its Slurm step)

   The file is updated under an flock, so that every worker of a run shares
   one count: a loss with times 1 happens once however many workers start.
   Without EGG_WORKER_LOSS (every real run) loss_point returns at once.

3. What egg sends. With EGG_WORKER_RECORD naming a file, the worker
   appends each request it reads to it as one JSON line, its sources
   replaced by their lengths: tests/worker/test_sends.py checks there that
   the requests the worker tests make (tests/worker/wlib.py, standing in
   for egg) carry egg's own defaults.
"""
from __future__ import annotations

import fcntl
import json
import os
import signal
import time

import torch

_ACTIVE = frozenset(f for f in os.environ.get("EGG_WORKER_FAULTS", "").split(",") if f)


def inject(name: str, alone: bool = False) -> None:
    """Raise the fault `name` if it is active. "-shared" faults fire only
    when the job does not run alone on its device."""
    if not _ACTIVE:
        return
    if name in _ACTIVE or (f"{name}-shared" in _ACTIVE and not alone):
        if name.endswith("oom"):
            raise torch.OutOfMemoryError(f"injected fault '{name}': CUDA out of memory (simulated)")
        raise RuntimeError(f"injected fault '{name}'")


# ---- 2. losing the worker -------------------------------------------

MOMENTS = ("start", "hello", "request", "run", "reply", "after")
ACTIONS = ("exit", "kill-job", "wait")


def _claim(moment: str, op: str | None) -> dict | None:
    """The spec when it fires now (its counters updated in the file), else None."""
    path = os.environ.get("EGG_WORKER_LOSS")
    if not path:
        return None
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with os.fdopen(os.dup(fd), "r+") as f:
            spec = json.load(f)
            if spec.get("moment") != moment or (spec.get("op") and op != spec.get("op")):
                return None
            if spec.get("skip", 0) > 0:
                spec["skip"] -= 1
                fire = False
            elif spec.get("times", 1) > 0:
                spec["times"] = spec.get("times", 1) - 1
                fire = True
            else:
                return None
            f.seek(0)
            f.truncate()
            json.dump(spec, f)
            f.flush()
        return spec if fire else None
    finally:
        os.close(fd)


def loss_point(moment: str, op: str | None = None, job_pid: int | None = None, partial: tuple | None = None) -> None:
    """The worker is at `moment` (of a job of `op`). `job_pid`: the job's
    process at "run" (for kill-job); `partial`: (stream, text) at "reply",
    the reply line of which half is written before an exit."""
    spec = _claim(moment, op)
    if spec is None:
        return
    action = spec.get("action", "exit")
    if action == "kill-job" and job_pid:
        # Not through Child.kill: the worker's own code must not know.
        try:
            os.killpg(job_pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return
    if action == "wait":
        mark = spec.get("mark")
        if mark:
            with open(mark + ".tmp", "w") as f:
                f.write(os.environ.get("SLURM_JOB_ID", "") + "\n")
            os.replace(mark + ".tmp", mark)
        while True:
            time.sleep(3600)
    if partial is not None:
        stream, text = partial
        stream.write(text[: max(1, len(text) // 2)])
        stream.flush()
    os.kill(os.getpid(), signal.SIGKILL)


# ---- 3. recording requests ------------------------------------------

def record_request(req: dict) -> None:
    """Append `req` to EGG_WORKER_RECORD's file, if set (sources as lengths)."""
    path = os.environ.get("EGG_WORKER_RECORD")
    if not path:
        return
    line = {k: (len(v) if k.endswith("_source") and isinstance(v, str) else v) for k, v in req.items()}
    with open(path, "a") as f:
        f.write(json.dumps(line) + "\n")
