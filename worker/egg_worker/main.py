"""main.py: the worker's entry: `serve` (JSON lines on stdio), `probe`,
`profile-run` (what ncu runs), `ncu-selftest` and `names` (a file's
top-level names, for egg's check of a model spec)."""
from __future__ import annotations

import atexit
import hashlib
import json
import os
import sys
import tempfile
import time
import traceback


def _context() -> dict:
    """Facts fixed for the worker's lifetime: sandbox abilities, CPU threads."""
    import numpy
    import torch
    import triton

    from . import sandbox
    from .device import probe

    ctx: dict = {"cpu_threads": max(1, min(int(os.environ.get("EGG_CPU_THREADS", "0")) or os.cpu_count() or 1, 16)),
                 "l2_bytes": {}}
    paths = [os.path.dirname(os.__file__), os.path.dirname(torch.__file__), os.path.dirname(triton.__file__),
             os.path.dirname(numpy.__file__), os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
             sys.executable]
    why = sandbox.can_drop_privileges(paths, tempfile.gettempdir())
    ctx["drop_privileges"] = why is None and os.environ.get("EGG_KEEP_PRIVILEGES") != "1"
    ctx["privileges_note"] = why
    ctx["sandbox"] = sandbox.policy_paths()
    ctx["sandbox_facts"] = probe.sandbox_facts(ctx["drop_privileges"])
    ctx["isolate_network"] = bool(ctx["sandbox_facts"].get("network_isolated"))
    ctx["network_isolation_error"] = ctx["sandbox_facts"].get("namespace_error")
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        ctx["memory_limit"] = int(pages * 0.75)
    except (ValueError, OSError):
        ctx["memory_limit"] = None
    return ctx


def _device_facts(ctx: dict, device: str) -> dict:
    """L2 size and name of a device, read in a throwaway child (the parent
    never initialises CUDA, so that forked children start fast)."""
    if device == "cpu":
        return {"name": "cpu", "l2_bytes": 0}
    from .children import spawn
    from .device.probe import device_facts

    def child(ch, index):
        import torch

        try:
            ch.send(device_facts(torch, index))
        except Exception as e:
            ch.send({"error": f"cannot use device '{device}': {type(e).__name__}: {e}"})

    index = int(device.split(":")[1]) if ":" in device else 0
    c = spawn(child, "probe", os.devnull, index)
    try:
        facts = c.ch.recv(None)
    finally:
        c.kill()
    ctx["l2_bytes"][device] = facts.get("l2_bytes", 0)
    ctx.setdefault("memory_bytes", {})[device] = facts.get("memory_bytes")
    return facts


def _in_child(fn) -> dict:
    """Run fn() in a forked child and return its JSON result."""
    from .children import spawn

    def child(ch):
        try:
            ch.send(fn())
        except Exception as e:
            ch.send({"error": f"{type(e).__name__}: {e}"})

    c = spawn(child, "probe", os.devnull)
    try:
        return c.ch.recv(None)
    finally:
        c.kill()


def _stop_on_signals() -> None:
    """SIGTERM, SIGINT or SIGHUP (egg was interrupted, or its terminal went
    away): end every evaluation process, then the worker."""
    import signal

    from .children import kill_all

    def stop(signum, frame):
        kill_all()
        _remove_own_dirs()
        os._exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)


_OWN_DIRS: list = []


def _remove_own_dirs() -> None:
    """Folders this worker made for itself (exits through os._exit skip
    atexit, so they call this too)."""
    import shutil

    for d in _OWN_DIRS:
        shutil.rmtree(d, ignore_errors=True)


def _exit_when_orphaned() -> None:
    """egg gone (killed, crashed): end every evaluation process and the
    worker at once, rather than finish a job whose result nobody will read
    while it keeps the device busy under the next run's timing. (egg starts
    workers in their own process group, so a signal to egg's group does not
    reach them; a dead parent shows as a new parent process.)"""
    import threading

    from .children import kill_all

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.1)
        kill_all()
        _remove_own_dirs()
        os._exit(1)

    threading.Thread(target=watch, name="egg-parent-watch", daemon=True).start()


def _code_digest() -> str:
    """SHA-256 over this worker's Python files, its subpackages' included
    (paths and contents): egg keys its cached verdicts, baselines and
    calibrations with it, so that an evaluator changed in any way never
    answers from an older one's cache."""
    h = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    names = []
    for root, dirs, files in os.walk(here):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        names += [os.path.relpath(os.path.join(root, n), here) for n in files if n.endswith(".py")]
    for name in sorted(names):
        h.update(name.encode() + b"\0")
        with open(os.path.join(here, name), "rb") as f:
            h.update(f.read() + b"\0")
    return h.hexdigest()

def _claim_stdio(kind: str) -> tuple:
    """Sets the process up for one kind of device and returns the protocol's
    (input, output). Triton decides at import time whether its language
    functions are interpreted, so the CPU worker sets TRITON_INTERPRET
    before anything imports triton. The protocol owns the original stdin and
    stdout; anything printed by torch, triton or this process goes to
    stderr instead."""
    if kind == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
    else:
        os.environ.pop("TRITON_INTERPRET", None)
    proto_in = os.fdopen(os.dup(0), "r", buffering=1)
    proto_out = os.fdopen(os.dup(1), "w", buffering=1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    if "TRITON_CACHE_DIR" not in os.environ:
        # The worker's own Triton cache (each evaluation has its own in its
        # scratch folder); removed when the worker ends, however it ends.
        os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="egg-worker-triton-")
        _OWN_DIRS.append(os.environ["TRITON_CACHE_DIR"])
        atexit.register(_remove_own_dirs)
    return proto_in, proto_out


def _import_heavy() -> None:
    """The imports are seconds of CPU: device work on this worker's device
    (EGG_STARTUP_LOCK: egg's lock key for it, where egg gives one), never
    beside a timed loop. Also what every evaluation process would import
    for itself otherwise, once here before any fork (1-3 s each):
    torch._dynamo (a TorchDispatchMode's first use loads it) and
    torch._inductor's config (which torch.use_deterministic_algorithms
    loads). Neither starts a thread or touches CUDA."""
    import contextlib

    from . import locks

    key = os.environ.get("EGG_STARTUP_LOCK")
    with locks.startup(key, 60.0) if key else contextlib.nullcontext():
        import numpy  # noqa: F401
        import torch  # noqa: F401
        import torch._dynamo  # noqa: F401
        import torch._inductor.config  # noqa: F401
        import triton  # noqa: F401


def _operations(ctx: dict) -> dict:
    """The operations: op -> (function of the request, whether it runs on a device)."""
    from . import messages
    from .device import job as device_jobs
    from .device import probe
    from .program import job as program_jobs
    from .program import usertime
    from .protocol import job as jobs

    def probe_op(req: dict) -> dict:
        # In a child: probing the GPUs initialises CUDA, which this parent
        # must never do (its children could not use CUDA).
        result = _in_child(lambda: probe.probe(with_ncu=req["ncu"]))
        result["sandbox"] = {k: ctx[k] for k in ("isolate_network", "network_isolation_error",
                                                 "drop_privileges", "privileges_note")}
        result["sandbox"]["facts"] = ctx["sandbox_facts"]
        return result

    ops = {
        "probe": (probe_op, False),
        "eval": (lambda req: jobs.run_eval(ctx, req), True),
        "baseline": (lambda req: jobs.run_baseline(ctx, req), True),
        "profile": (lambda req: jobs.run_profile(ctx, req), True),
        "size": (lambda req: device_jobs.run_size(ctx, req), True),
        "split": (lambda req: program_jobs.run_split(ctx, req), True),
        "usertime": (lambda req: usertime.run_usertime(ctx, req), True),
        "calibrate": (lambda req: device_jobs.run_calibrate(ctx, req), True),
        "shutdown": (lambda req: {}, False),
    }
    assert set(ops) == set(messages.REQUESTS)
    return ops


def _reply_to(req: dict, op: str, ops: dict, ctx: dict, kind: str) -> dict:
    """The reply to one well-formed request: its result, or its failure
    classified (the user's input, a lost job, too big, egg's own)."""
    from . import messages, progress
    from .failures import InfraError, InputError, JobLost, TooBig

    rid = req.get("id")
    try:
        run, on_device = ops[op]
        if on_device:
            _check_device(ctx, req, kind)
            progress.begin(rid)
        try:
            result = run(req)
        finally:
            progress.end()
        if on_device:
            # One line per finished job in the worker's log: what ran, on
            # what (a digest of the sources), and when (epoch seconds,
            # just before the reply is sent), so that repeated work shows;
            # the result carries the same digest (egg's caches keep it).
            digest = hashlib.sha256(json.dumps([op, req.get("task_source"), req.get("kernel_source")]).encode())
            result["job_digest"] = digest.hexdigest()[:16]
            sys.stderr.write(f"egg-worker: job {rid} {op} done {result['job_digest']} at {time.time():.3f}\n")
            sys.stderr.flush()
        return messages.reply_ok(rid, result)
    except InputError as e:
        return messages.reply_error(rid, "input", str(e))
    except JobLost as e:
        return messages.reply_error(rid, "lost", str(e))
    except TooBig as e:
        return messages.reply_error(rid, "infra", str(e), cause="memory")
    except InfraError as e:
        return messages.reply_error(rid, "infra", str(e.args[0]), str(e.args[1]) if len(e.args) > 1 else "")
    except Exception as e:
        return messages.reply_error(rid, "infra", f"{type(e).__name__}: {e}", traceback.format_exc()[-3000:])


def serve(argv: list[str]) -> int:
    # One worker serves one kind of device.
    kind = "cuda"
    if "--device" in argv and argv.index("--device") + 1 < len(argv):
        kind = "cpu" if argv[argv.index("--device") + 1] == "cpu" else "cuda"
    proto_in, proto_out = _claim_stdio(kind)
    _import_heavy()
    import numpy
    import torch
    import triton

    from . import faults, messages, progress, sandbox

    sandbox.become_subreaper()
    sandbox.set_dumpable(False)
    _stop_on_signals()
    _exit_when_orphaned()
    ctx = _context()
    hello = {"event": "hello", "protocol": messages.PROTOCOL_VERSION, "pid": os.getpid(), "code": _code_digest(),
             "python": sys.version.split()[0], "torch": torch.__version__, "triton": triton.__version__,
             "numpy": numpy.__version__, "device_kind": kind, "network_isolation": ctx["isolate_network"],
             "network_isolation_error": ctx["network_isolation_error"],
             "drop_privileges": ctx["drop_privileges"], "privileges_note": ctx["privileges_note"],
             "sandbox": ctx["sandbox_facts"]}
    faults.loss_point("start")
    progress.attach(proto_out)
    progress.write_line(hello)
    faults.loss_point("hello")
    ops = _operations(ctx)

    for line in proto_in:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise ValueError("request is not an object")
        except ValueError as e:
            progress.write_line(messages.reply_error(None, "protocol", str(e)))
            continue
        rid = req.get("id")
        op = req.get("op")
        faults.record_request(req)
        faults.loss_point("request", op)
        try:
            op = messages.check_request(req)
        except messages.RequestError as e:
            # egg sends well-formed requests: a refused one means egg and the
            # worker disagree (another version), never the user's input.
            progress.write_line(messages.reply_error(rid, "protocol", str(e)))
            continue
        reply = _reply_to(req, op, ops, ctx, kind)
        if not reply["ok"] and reply.get("log"):
            # Into the worker's log (egg keeps it under STORE/logs), whole.
            sys.stderr.write(f"egg-worker: job {rid} ({op}) failed: {reply['error']}\n{reply['log']}\n")
            sys.stderr.flush()
        faults.loss_point("reply", op, partial=(proto_out, json.dumps(reply) + "\n"))
        progress.write_line(reply)
        if op == "shutdown" and reply["ok"]:
            break
        faults.loss_point("after", op)
    return 0


def _check_device(ctx: dict, req: dict, kind: str) -> None:
    """The job's device is one this worker serves ("cuda" means cuda:0);
    its facts are read once."""
    from .failures import InfraError, InputError

    dev = req["device"]
    if dev != "cpu" and not (dev == "cuda" or dev.startswith("cuda:")):
        raise InputError(f"unknown device '{dev}'")
    if dev == "cuda":
        req["device"] = dev = "cuda:0"
    if (dev == "cpu") != (kind == "cpu"):
        raise InputError(f"this worker serves {kind} devices, not '{dev}'")
    facts = _device_facts(ctx, dev) if dev not in ctx["l2_bytes"] else None
    if facts and "error" in facts:
        raise InfraError(facts["error"])


def main(argv: list[str]) -> int:
    mode = argv[0] if argv else "serve"
    if mode == "serve":
        return serve(argv[1:])
    if mode == "probe":
        from .device import probe

        return probe.main(argv[1:])
    if mode == "profile-run":
        from .protocol import profile_run

        return profile_run.main(argv[1:])
    if mode == "names":
        from .program import names

        return names.main(argv[1:])
    if mode == "ncu-selftest":
        from .device import probe

        return probe.selftest_kernel()
    sys.stderr.write(f"egg-worker: unknown mode '{mode}'\n")
    return 2
