"""progress.py: progress lines of the job in hand, for egg to show.

A long job (a full-size task on the CPU interpreter can take many minutes)
says what it is doing: the serving process calls `step("trial 2/5")` at each
phase boundary, and while a job runs a heartbeat repeats the current step
every HEARTBEAT_S seconds with the time elapsed. Each becomes one protocol
line `{"id": N, "event": "progress", "step": "...", "elapsed_s": S}`
before the job's reply (worker/PROTOCOL.md). egg decides what to print.

Every protocol line goes through `write_line`, under one lock: the
heartbeat thread and the serving loop share the protocol's stdout.
"""
from __future__ import annotations

import json
import threading
import time

HEARTBEAT_S = 30.0

_lock = threading.Lock()
_out = None           # the protocol's stdout
_job = None           # (request id, start time) of the job in hand
_current = ""         # its last step
_wake = threading.Event()


def attach(out) -> None:
    """Starts the heartbeat; `out` is the protocol's stdout."""
    global _out
    _out = out
    threading.Thread(target=_heartbeat, name="egg-progress", daemon=True).start()


def write_line(obj: dict) -> None:
    with _lock:
        _out.write(json.dumps(obj) + "\n")
        _out.flush()


def begin(rid) -> None:
    """A job starts: its steps are reported under request id `rid`."""
    global _job, _current
    with _lock:
        _job, _current = (rid, time.monotonic()), ""


def end() -> None:
    """The job is over: nothing more is said for it (its reply follows)."""
    global _job
    with _lock:
        _job = None


def step(what: str) -> None:
    """The job in hand starts a new step."""
    global _current
    with _lock:
        if _job is None or _out is None:
            return
        _current = what
        _emit(what)
    _wake.set()


def _emit(what: str) -> None:
    # Under _lock.
    rid, t0 = _job
    _out.write(json.dumps({"id": rid, "event": "progress", "step": what,
                           "elapsed_s": round(time.monotonic() - t0, 1)}) + "\n")
    _out.flush()


def _heartbeat() -> None:
    last = time.monotonic()
    while True:
        # A new step restarts the interval: only a step that lasts repeats.
        if _wake.wait(timeout=max(0.1, last + HEARTBEAT_S - time.monotonic())):
            _wake.clear()
            last = time.monotonic()
            continue
        with _lock:
            if _job is not None and _current:
                try:
                    _emit(_current)
                except (OSError, ValueError):
                    return
        last = time.monotonic()
