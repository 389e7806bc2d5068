"""candidate.py: the harness inside a candidate's own, sandboxed process.

It confines itself, loads the task and the candidate, runs each correctness
trial on command under the guards, copies the outputs into the shared
region, and runs the timing loops on command. Everything here may be
tampered with by the candidate; the trusted parent and the reference
process decide the verdict.

Blame: an exception in the candidate's own code (its import, constructor,
forward, or a device fault its kernels caused) is the candidate's failure.
An exception in egg's harness code (the sandbox, input generation, copies,
fingerprints) is reported as a harness error, which the parent turns into
an infrastructure error: it is never shown to an agent as the kernel's
fault. Running out of memory is reported as such, wherever it happens, so
that the parent can retry the evaluation alone on the device.
"""
from __future__ import annotations

import contextlib
import os
import resource
import threading
import time
import traceback

import torch

from .. import faults, sandbox
from ..logs import exception_log, trim
from ..messages import Cmd, Event
from ..proto import Channel
from ..taskload import OutputError, TaskError, build, init_inputs, load_module, load_task, size_constants
from ..usage import memory_stats, note_start
from . import checksums, devregion
from .guards import Guard, apply_precision, candidate_threads, global_flags
from .inputs import fresh_like, trial_inputs
from .outputs import Region, fingerprint, mismatch, results, spec, write_outputs
from .timing import Timer


class Failure(Exception):
    def __init__(self, stage: str, reason: str, log: str = "", **extra):
        super().__init__(reason)
        self.stage, self.reason, self.log, self.extra = stage, reason, log, extra


class HarnessError(Exception):
    def __init__(self, where: str, error: str, log: str):
        super().__init__(error)
        self.where, self.error, self.log = where, error, log


def is_oom(e: BaseException) -> bool:
    if isinstance(e, (MemoryError, torch.OutOfMemoryError)):
        return True
    text = str(e)
    return isinstance(e, RuntimeError) and ("out of memory" in text or "can't allocate memory" in text)


def is_device_fault(e: BaseException) -> bool:
    """A sticky device error (an illegal address, an assert in a kernel):
    once a kernel caused one, every later device call fails with it."""
    if type(e).__name__ == "AcceleratorError":
        return True
    text = str(e)
    return any(m in text for m in ("CUDA error", "illegal memory access", "device-side assert",
                                   "misaligned address", "unspecified launch failure", "illegal instruction"))


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0][:300]}" if text else type(e).__name__


def _memory_figures() -> dict:
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        return {"allocated_bytes": torch.cuda.max_memory_allocated(), "device": "cuda"}
    return {"rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "device": "cpu"}


def oom_failure(e: BaseException, stage: str) -> Failure:
    return Failure(stage, f"out of memory: {_first_line(e)}", exception_log(e), oom=True, memory=_memory_figures())


@contextlib.contextmanager
def harness(where: str, stage: str = "run"):
    """egg's own steps: their exceptions are egg's, except out-of-memory
    errors and device faults a kernel left behind."""
    try:
        yield
    except (Failure, HarnessError):
        raise
    except BaseException as e:
        if is_oom(e):
            raise oom_failure(e, stage) from None
        if is_device_fault(e):
            raise Failure(stage, f"the device reported a fault after the kernel ran: {_first_line(e)}",
                          exception_log(e)) from None
        raise HarnessError(where, _first_line(e), trim(traceback.format_exc(), 3000)) from None


@contextlib.contextmanager
def candidate_code(stage: str):
    """The candidate's own code: its exceptions are its failures."""
    try:
        yield
    except (Failure, HarnessError):
        raise
    except BaseException as e:
        if is_oom(e):
            raise oom_failure(e, stage) from None
        raise Failure(stage, _first_line(e), exception_log(e)) from None


def enter_sandbox(job: dict) -> dict:
    """Confine the process (sandbox.confine), then make its scratch folder
    its home: caches and temporary files go there."""
    home = os.path.dirname(job["kernel_path"])
    sandbox.scrub_environment()
    sandbox.only_gpu(job)
    spec = dict(job.get("sandbox") or {}, writable=[home], memory_limit=job.get("memory_limit"),
                file_limit=job.get("file_limit", 2 << 30))
    facts = sandbox.confine(spec)
    os.environ.update(HOME=home, TMPDIR=os.path.join(home, "tmp"),
                      TRITON_CACHE_DIR=os.path.join(home, "triton"),
                      TORCHINDUCTOR_CACHE_DIR=os.path.join(home, "inductor"),
                      CUDA_CACHE_PATH=os.path.join(home, "nv"))
    if job["device"] == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
    os.chdir(home)
    for sub in ("tmp", "triton", "inductor", "nv"):
        os.makedirs(os.path.join(home, sub), exist_ok=True)
    return facts


def classify(exc: BaseException, first_call: bool) -> str:
    """Compile errors come from Triton's compiler (at the first launch)."""
    mod = type(exc).__module__ or ""
    name = type(exc).__name__
    if mod.startswith("triton.compiler") or name in ("CompilationError", "CompileTimeAssertionFailure",
                                                     "OutOfResources", "PTXASError"):
        return "compile"
    return "compile" if first_call and mod.startswith("triton") else "run"


def _storage_span(t: torch.Tensor) -> tuple[int, int]:
    s = t.untyped_storage()
    return s.data_ptr(), s.data_ptr() + s.nbytes()


def _check_outputs(outs: list, kinds: list, inputs: list, ref: dict, device: torch.device) -> None:
    want = ref["outputs"]
    if len(outs) != len(want):
        raise Failure("correctness", f"forward returned {len(outs)} output(s), the reference {len(want)}")
    spans = [_storage_span(x) for x in inputs if isinstance(x, torch.Tensor) and x.numel()]
    for k, (o, kind) in enumerate(zip(outs, kinds)):
        why = mismatch(spec(o, kind), want[k])
        if why:
            raise Failure("correctness", f"output {k}: {why}")
        if kind != "tensor":
            continue
        if type(o) is not torch.Tensor:
            raise Failure("integrity", f"output {k} is a {type(o).__name__}, a torch.Tensor subclass, not a plain tensor")
        if o.is_sparse or o.is_meta or o.layout != torch.strided:
            raise Failure("integrity", f"output {k} has no plain dense storage")
        if o.device != device:
            raise Failure("correctness", f"output {k} is on {o.device}, expected {device}")
        if o.numel():
            need = (o.storage_offset() + sum((d - 1) * s for d, s in zip(o.shape, o.stride())) + 1) * o.element_size()
            if o.untyped_storage().nbytes() < need:
                raise Failure("integrity", f"output {k} claims more elements than its storage holds")
            if not ref["aliases"][k]:
                lo, hi = _storage_span(o)
                for a, b in spans:
                    if lo < b and a < hi:
                        raise Failure("integrity", f"output {k} shares memory with an input (the reference returns new memory)")


def run(ch: Channel, job: dict, region: Region, sock=None) -> None:
    """Entry point of the candidate's process. `sock`: its end of the pair
    on which the reference sends a device region (devregion.py), or None."""
    note_start()
    try:
        with harness("sandbox", "load"):
            facts = enter_sandbox(job)
            device = torch.device(job["device"])
            if device.type == "cpu":
                torch.set_num_threads(job["cpu_threads"])
            elif not job["selfcheck"]:
                threading.Thread(target=_start_triton, name="egg-triton-start", daemon=True).start()
        with harness("timer setup", "load"):
            apply_precision(job["precision"])
            timer = Timer(device, job["l2_bytes"], job["clock"])
            guard = Guard()
            if device.type == "cuda":
                checksums.enable_fused()  # large timed outputs summed in one read (fastsums.py)
        _serve(ch, job, facts, device, timer, guard, region, sock)
    except Failure as f:
        ch.send({"event": Event.FAIL, "stage": f.stage, "reason": f.reason, "log": f.log, **f.extra})
    except HarnessError as h:
        ch.send({"event": Event.HARNESS_ERROR, "where": h.where, "error": h.error, "log": h.log})


def _start_triton() -> None:
    """Triton's one-time start in this process, begun beside the loading of
    the task, the kernel and the models instead of inside the first trial's
    compile: the hash of Triton's own files for its cache key and its CUDA
    driver, whose utilities the C compiler builds (about 0.8 s on an H200,
    most of it outside the GIL). Not the candidate's code: any failure here
    is left for the first real use to meet and report."""
    try:
        import triton
        from triton.runtime.cache import triton_key
        triton_key()
        triton.runtime.driver.active.get_current_target()
    except BaseException:
        pass


def _load(job: dict, device: torch.device, selfcheck: bool = False):
    with harness("loading the task", "load"):
        try:
            task = load_task(job["task_path"], "egg_task_c")
            task_consts = size_constants(task)
            init = init_inputs(task)
        except TaskError as e:
            # The reference loaded this task: failing here is egg's problem.
            raise HarnessError("loading the task", str(e).splitlines()[0], str(e)) from None
    if selfcheck:
        cand_cls = task.Model
    else:
        kernel_path = job["kernel_path"]
        try:
            cand = load_module(kernel_path, "egg_candidate")
        except SyntaxError as e:
            raise Failure("load", f"syntax error in kernel line {e.lineno}: {e.msg}", exception_log(e)) from None
        except BaseException as e:
            if is_oom(e):
                raise oom_failure(e, "load") from None
            raise Failure("load", f"kernel failed to import: {type(e).__name__}: {e}", exception_log(e)) from None
        cand_cls = getattr(cand, "ModelNew", None)
        if not isinstance(cand_cls, type):
            raise Failure("load", "kernel file defines no class ModelNew")
        if issubclass(cand_cls, task.Model):
            raise Failure("integrity", "ModelNew subclasses the reference Model")
        for name in ("get_inputs", "get_init_inputs"):
            if name in vars(cand):
                raise Failure("integrity", f"kernel file redefines {name}(); inputs come from the task only")
        changed = [k for k, v in size_constants(cand).items()
                   if k in task_consts and task_consts[k] != v and not k.startswith("BLOCK")]
        if changed:
            raise Failure("integrity", f"kernel file redefines the task's sizes: {', '.join(sorted(changed))}")
    with candidate_code("load"):
        try:
            reference = build(task.Model, init, job["weight_seed"], device)
            model = build(cand_cls, init, job["weight_seed"], device)
        except BaseException as e:
            if is_oom(e):
                raise
            raise Failure("load", f"ModelNew(*get_init_inputs()) raised {type(e).__name__}: {e}", exception_log(e)) from None
    if not isinstance(model, torch.nn.Module):
        raise Failure("load", "ModelNew is not a torch.nn.Module")
    # The weight rule: both models are built from the same seed; every
    # parameter or buffer of ModelNew whose name and shape match the
    # reference's gets the reference's value.
    ref_state = reference.state_dict()
    own = model.state_dict()
    matched = {k: v for k, v in ref_state.items() if k in own and own[k].shape == v.shape}
    with candidate_code("load"):
        try:
            model.load_state_dict(matched, strict=False)
            model = model.to(device)
            # The mode rule: the candidate runs in the reference's mode (a
            # task in eval mode says so in its constructor).
            model.train(reference.training)
        except BaseException as e:
            if is_oom(e):
                raise
            raise Failure("load", f"moving ModelNew to {device} failed: {type(e).__name__}: {e}", exception_log(e)) from None
    del reference
    return task, model, len(matched)


def _trial(ch: Channel, job: dict, task, model, guard: Guard, timer: Timer, device: torch.device,
           ref: dict, region, t: int, variant: str, threads0: set, flags0: dict) -> int:
    """One correctness trial; returns the Triton launches it made."""
    selfcheck = job["selfcheck"]
    with harness("making the trial's inputs"):
        inputs = trial_inputs(task, job["trial_seeds"][t], t, device, variant)
        before = [fingerprint(x) if isinstance(x, torch.Tensor) else None for x in inputs]
    stage = "compile" if t == 0 else "run"
    try:
        faults.inject("candidate-oom", job["alone"])
        with torch.no_grad(), guard.watch():
            out = model(*inputs)
        timer.sync()
    except Failure:
        raise
    except BaseException as e:
        if is_oom(e):
            raise oom_failure(e, stage) from None
        raise Failure(classify(e, first_call=t == 0), _first_line(e), exception_log(e)) from None
    if not (selfcheck or job["allow_torch"]):
        if guard.violations:
            ops = sorted(set(guard.violations))
            raise Failure("integrity", "forward ran PyTorch compute outside Triton kernels: " + ", ".join(ops[:8]))
        if guard.launches == 0:
            raise Failure("integrity", "forward launched no Triton kernel")
    if global_flags() != flags0:
        now = global_flags()
        diff = {k: now[k] for k in now if now[k] != flags0.get(k)}
        raise Failure("integrity", f"forward changed global settings: {diff}")
    try:
        outs, kinds = results(out, inputs, ref["mutated"])
    except OutputError as e:
        raise Failure("correctness", str(e)) from None
    _check_outputs(outs, kinds, inputs, ref, device)
    if isinstance(region, Region):
        with harness("mapping the output region", "load"):
            region.map()
    with harness("copying the outputs"):
        faults.inject("harness")
        first = [fingerprint(o) for o in outs]
        specs = write_outputs(region, outs, kinds, ref["outputs"])
        time.sleep(0.02)
        timer.sync()
        late = any(fingerprint(o) != f for o, f in zip(outs, first))
    if late:
        raise Failure("integrity", "output changed after forward returned (late writes)")
    with harness("checking the inputs"):
        changed = [k for k, (x, f) in enumerate(zip(inputs, before))
                   if f is not None and k not in ref["mutated"] and fingerprint(x) != f]
    if changed:
        raise Failure("integrity", f"forward modified input {changed[0]}")
    strays = candidate_threads(threads0, job.get("kernel_path") or "")
    if strays:
        raise Failure("integrity", f"forward left threads running: {', '.join(strays)}")
    ch.send({"event": Event.OUTPUTS, "trial": t, "specs": specs, "launches": guard.launches,
             "launch_configs": list(guard.configs.values())})
    return guard.launches


def _output_region(ref: dict, device: torch.device, region: Region, sock):
    """Where this process writes its outputs: the reference's device region
    when it made one and it maps here, else the host region, which then
    starts pinning in the background (a many-GB region takes seconds: it
    runs beside the first trial's compile, and the trial joins it)."""
    if ref.get("device_region") and sock is not None:
        try:
            return devregion.receive(sock, device, int(ref["region_bytes"]))
        except Exception as e:  # any failure: the host region, as without it
            print(f"egg: the device output region is unavailable here ({e}); using the host region", flush=True)
    region.map_in_background()
    return region


def _serve(ch: Channel, job: dict, facts: dict, device: torch.device, timer: Timer, guard: Guard,
           region: Region, sock) -> None:
    task, model, matched = _load(job, device, job["selfcheck"])
    ch.send({"event": Event.LOADED, "sandbox": facts, "state_copied": matched})
    cmd = ch.recv()
    if cmd.get("cmd") != Cmd.TRIALS:
        return
    ref = cmd["reference"]
    timer.mutated = list(ref["mutated"])  # timed calls' summaries cover them too
    with harness("mapping the output region", "load"):
        target = _output_region(ref, device, region, sock)
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True  # poison fresh allocations
    flags0 = global_flags()
    threads0 = set(threading.enumerate())
    compile_s = None
    launches = []
    while True:
        cmd = ch.recv()
        if cmd.get("cmd") != Cmd.TRIAL:
            break
        t0 = time.perf_counter()
        launches.append(_trial(ch, job, task, model, guard, timer, device, ref, target, int(cmd["trial"]),
                               str(cmd["variant"]), threads0, flags0))
        if compile_s is None:
            compile_s = time.perf_counter() - t0
    ch.send({"event": Event.TRIALS_DONE, "compile_s": compile_s, "launches_per_call": max(launches or [0])})

    torch.utils.deterministic.fill_uninitialized_memory = False
    torch.use_deterministic_algorithms(False)
    base = None
    dummy = None
    while True:
        cmd = ch.recv()
        what = cmd.get("cmd")
        if what == Cmd.EXIT:
            return
        if what == Cmd.STATS:
            ch.send(dict(memory_stats(), event=Event.STATS))
            continue
        try:
            if what in (Cmd.WARMUP, Cmd.CALIBRATE, Cmd.TIME):
                if base is None:
                    with harness("making the timing inputs", "timing"):
                        base = trial_inputs(task, cmd["base_seed"], 0, device, "task")
                        # Random, not zeros: their summaries then cost as much to
                        # send as real ones (a zero prints in 3 characters).
                        dummy = [torch.rand(s["shape"], device=device) for s in ref["outputs"]]
                with torch.no_grad():
                    if what == Cmd.WARMUP:
                        # Checksums here too: their one-time setup is paid before calibration.
                        timer.run(model, base, cmd["seed"], cmd["n"], checksums=True, warmup=True)
                        ch.send({"event": Event.WARM})
                    elif what == Cmd.CALIBRATE:
                        r = timer.run(None, base, cmd["seed"], cmd["n"], checksums=True, dummy_outputs=dummy)
                        # The same reply as a timed loop's: sending and reading a
                        # hundred summaries is part of both loops' wall time.
                        ch.send({"event": Event.CALIBRATED, **r})
                    else:
                        r = timer.run(model, base, cmd["seed"], cmd["n"], checksums=True)
                        ch.send({"event": Event.TIMED, "spin_ms": timer.spin_ms if timer.clock == "gpu" else 0.0, **r})
            elif what == Cmd.GUARDED:
                counts, bad = [], []
                for i in range(cmd["n"]):
                    inputs = fresh_like(base, cmd["seed"] + i, device)
                    with torch.no_grad(), guard.watch():
                        model(*inputs)
                    timer.sync()
                    counts.append(guard.launches)
                    bad.extend(guard.violations)
                if job["selfcheck"] or job["allow_torch"]:
                    counts, bad = [max(counts + [1])] * len(counts), []
                ch.send({"event": Event.GUARDED, "launches": counts, "violations": sorted(set(bad))})
        except (Failure, HarnessError):
            raise
        except BaseException as e:
            if is_oom(e):
                raise oom_failure(e, "timing") from None
            raise Failure("timing", f"{type(e).__name__} during timed calls: {str(e)[:300]}", exception_log(e)) from None
