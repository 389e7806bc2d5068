"""messages.py: every message the worker sends or receives, in one place.

Two conversations:

1. egg <-> the serving worker (JSON lines on stdio; PROTOCOL.md). egg sends
   every evaluation setting in each request: the defaults live in egg's C
   code alone, and a request that lacks a field is refused here (a
   "protocol" error naming it: egg and the worker disagree, which is an
   infrastructure failure, never the user's input) rather than filled in
   with a second set of defaults.

2. The serving worker (the parent) <-> its evaluation processes (the
   reference, the candidate, the baseline; over a Channel, proto.py). The
   parent sends commands ({"cmd": Cmd.X, ...}); a process answers with
   events ({"event": Event.Y, ...}). Channel.send refuses a name that is not
   listed here, so a misspelt message fails loudly in the worker's tests
   instead of hanging a conversation.
"""
from __future__ import annotations


class RequestError(ValueError):
    """A request from egg that does not match its op's fields."""


# ---- 1. egg <-> worker -------------------------------------------------

PROTOCOL_VERSION = 3

_NUM = (int, float)
_STR_OR_NONE = (str, type(None))
_NUM_OR_NONE = (int, float, type(None))

# The settings every job that loads a task carries.
_JOB = {"device": str, "task_source": str, "timeout_s": _NUM, "lock": _STR_OR_NONE}
# ... and every job that runs it under egg's numerics and clock.
_RUN = dict(_JOB, precision=str, clock=str, warmup=int, iters=int)

# op -> {field: accepted types}. Every field is required; a nullable one is
# sent as null when unset (lock: the device's own lock; atol/rtol: the
# per-dtype tolerances; kernel_source: none, in a selfcheck).
REQUESTS: dict[str, dict] = {
    "probe": {"ncu": bool},
    "size": {"device": str, "task_source": str},
    "eval": dict(_RUN, kernel_source=_STR_OR_NONE, selfcheck=bool, trials=int, timing=bool, truth=bool,
                 atol=_NUM_OR_NONE, rtol=_NUM_OR_NONE, allow_torch=bool),
    "baseline": dict(_RUN, compile_mode=str),
    "profile": dict(_JOB, kernel_source=str, precision=str, warmup=int, calls=int, ncu_args=list,
                    ncu=_STR_OR_NONE),
    "calibrate": {"device": str, "timeout_s": _NUM, "lock": _STR_OR_NONE},
    "split": dict(_JOB, measure=bool, iters=int, name=str),
    "usertime": dict(_JOB, kernel_source=str, precision=str, warmup=int, iters=int, wall_iters=int, wall_rounds=int,
                     ways=list),
    "shutdown": {},
}

CLOCKS = ("gpu", "latency")
PRECISIONS = ("fp32", "tf32")
COMPILE_MODES = ("default", "max-autotune", "reduce-overhead", "none")


def check_request(req: dict) -> str:
    """The request's op, once every field its op needs is present with an
    accepted type and every choice is a known one; RequestError otherwise."""
    op = req.get("op")
    if op not in REQUESTS:
        raise RequestError(f"unknown op '{op}'")
    unknown = sorted(set(req) - set(REQUESTS[op]) - {"op", "id"})
    if unknown:
        raise RequestError(f"{op} request: unknown field '{unknown[0]}'")
    missing = [f for f in REQUESTS[op] if f not in req]
    if missing:
        raise RequestError(f"{op} request lacks {', '.join(missing)} (egg sends every setting)")
    for field, types in REQUESTS[op].items():
        value = req[field]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in _tuple(types)):
            raise RequestError(f"{op} request: '{field}' has the wrong type ({type(value).__name__})")
    for field, choices in (("clock", CLOCKS), ("precision", PRECISIONS), ("compile_mode", COMPILE_MODES)):
        if field in REQUESTS[op] and req[field] not in choices:
            raise RequestError(f"unknown {field.replace('_', ' ')} '{req[field]}' (use {' or '.join(choices)})")
    for field in ("trials", "iters", "calls"):
        if field in REQUESTS[op] and req[field] < 1:
            raise RequestError(f"{field} must be at least 1")
    if "warmup" in REQUESTS[op] and req["warmup"] < 0:
        raise RequestError("warmup must not be negative")
    if op == "eval" and (req["kernel_source"] is None) != req["selfcheck"]:
        raise RequestError("an eval request carries kernel_source, or selfcheck: true without one")
    return op


def _tuple(types) -> tuple:
    return types if isinstance(types, tuple) else (types,)


def reply_ok(rid, result: dict) -> dict:
    return {"id": rid, "ok": True, "result": result}


def reply_error(rid, kind: str, error: str, log: str = "", cause: str = "") -> dict:
    """kind: "input" (the user's task is unusable), "infra" (the worker could
    not do the job), "lost" (a process of the job was killed from outside:
    egg runs the job again on a fresh worker) or "protocol" (the line was
    not a request). cause, with "infra": "memory" when the job cannot fit in
    the device's memory (running it again there will not help)."""
    out = {"id": rid, "ok": False, "kind": kind, "error": error}
    if log:
        out["log"] = log
    if cause:
        out["cause"] = cause
    return out


# ---- 2. the worker <-> its evaluation processes -----------------------

class Cmd:
    """Commands from the serving process."""
    # to the candidate
    TRIALS = "trials"        # reference: the reference's output specs; trials follow
    TRIAL = "trial"          # trial, variant: run one correctness trial
    DONE = "done"            # no more trials
    WARMUP = "warmup"        # n, seed, base_seed: warm-up calls
    CALIBRATE = "calibrate"  # n, seed, base_seed: the timing loop without the call
    TIME = "time"            # n, seed, base_seed: the timed loop (also the baseline's)
    GUARDED = "guarded"      # n, seed: calls under the launch guard after timing
    # to the reference
    PREPARE = "prepare"      # trial: compute its reference outputs
    COMPARE = "compare"      # trial, specs: judge the candidate's outputs
    TASK_FLAGS = "task_flags"
    VERIFY = "verify"        # seed, base_seed, indices, checksums: recompute timed calls
    # to both
    STATS = "stats"          # memory figures
    EXIT = "exit"

    ALL = frozenset({TRIALS, TRIAL, DONE, WARMUP, CALIBRATE, TIME, GUARDED, PREPARE, COMPARE, TASK_FLAGS,
                     VERIFY, STATS, EXIT})


class Event:
    """Events from the evaluation processes."""
    LOADED = "loaded"            # the task (and kernel) loaded; candidate: sandbox facts
    READY = "ready"              # reference: output specs, aliases, region size, I/O bytes
    PREPARED = "prepared"        # reference: trial, variant used
    OUTPUTS = "outputs"          # candidate: trial, specs of what it wrote, launches
    COMPARED = "compared"        # reference: ok, reason, errors, truth
    TRIALS_DONE = "trials_done"  # candidate: compile_s, launches_per_call
    TASK_FLAGS = "task_flags"    # reference: flags
    WARM = "warm"
    CALIBRATED = "calibrated"
    TIMED = "timed"              # candidate: events_ms, host_ms, checksums, spin_ms
    GUARDED = "guarded"          # candidate: launches, violations
    VERIFIED = "verified"        # reference: bad call indices
    STATS = "stats"              # memory figures
    READY_TO_TIME = "ready_to_time"  # baseline: compiled and warm; waits for Cmd.TIME
    BASELINE = "baseline"        # baseline: eager and compiled timings
    FAIL = "fail"                # candidate: the kernel's failure (stage, reason, log)
    HARNESS_ERROR = "harness_error"  # candidate: egg's own code failed in its process
    OOM = "oom"                  # reference or baseline: out of memory
    TASK_ERROR = "task_error"    # reference or baseline: the task itself is unusable
    SPLIT = "split"              # the split process: the plan, or why there is none
    SPLIT_STEP = "split_step"    # the split process: a step starts (tracing, measuring)
    USERTIME = "usertime"        # a side of the user's clock: its ways' times, or why it could not run

    ALL = frozenset({LOADED, READY, PREPARED, OUTPUTS, COMPARED, TRIALS_DONE, TASK_FLAGS, WARM, CALIBRATED,
                     TIMED, GUARDED, VERIFIED, STATS, READY_TO_TIME, BASELINE, FAIL, HARNESS_ERROR, OOM,
                     TASK_ERROR, SPLIT, SPLIT_STEP, USERTIME})


def check_internal(obj: dict) -> None:
    """Refuses a command or event name that is not listed above."""
    if "cmd" in obj and obj["cmd"] not in Cmd.ALL:
        raise ValueError(f"unknown command '{obj['cmd']}'")
    if "event" in obj and obj["event"] not in Event.ALL:
        raise ValueError(f"unknown event '{obj['event']}'")
