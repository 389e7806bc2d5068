"""candidate.py: the harness inside a candidate's own, sandboxed process.

It loads the task and the candidate, runs the correctness trials under the
guards, streams the outputs to the trusted side, and runs the timing loops
on command. Everything here may be tampered with by the candidate; the
trusted parent and the reference process decide the verdict.
"""
from __future__ import annotations

import os
import time

import torch

from . import sandbox
from .guards import Guard, apply_precision, candidate_threads, global_flags
from .inputs import fresh_like, init_inputs, trial_inputs
from .logs import exception_log
from .proto import Channel
from .taskload import TaskError, load_module, load_task, size_constants
from .tensors import send_tensor
from .timing import Timer


class Failure(Exception):
    def __init__(self, stage: str, reason: str, log: str = ""):
        super().__init__(reason)
        self.stage, self.reason, self.log = stage, reason, log


def _enter_sandbox(job: dict) -> dict:
    # The candidate's home is the folder holding its kernel (owned by nobody
    # when privileges are dropped): caches and temporary files go there.
    home = os.path.dirname(job["kernel_path"])
    sandbox.scrub_environment()
    os.environ.update(HOME=home, TMPDIR=os.path.join(home, "tmp"),
                      TRITON_CACHE_DIR=os.path.join(home, "triton"),
                      TORCHINDUCTOR_CACHE_DIR=os.path.join(home, "inductor"))
    if job["device"] == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
    os.chdir(home)
    facts = {"network_isolated": False, "uid": os.getuid()}
    if job.get("isolate_network", True):
        why = sandbox.isolate_network()
        facts["network_isolated"] = why is None
        if why:
            facts["network_error"] = why
    sandbox.limit_resources(file_bytes=job.get("file_limit", 2 << 30), nofile=4096,
                            address_space=job.get("memory_limit"))
    if job.get("drop_privileges"):
        why = sandbox.drop_privileges()
        if why:
            facts["privileges_error"] = why
    facts["uid"] = os.getuid()
    for sub in ("tmp", "triton", "inductor"):
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


def _flatten(out) -> list:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)) and out and all(isinstance(o, torch.Tensor) for o in out):
        return list(out)
    raise Failure("run", f"forward returned {type(out).__name__}, not a tensor or a tuple of tensors")


def _storage_span(t: torch.Tensor) -> tuple[int, int]:
    s = t.untyped_storage()
    return s.data_ptr(), s.data_ptr() + s.nbytes()


def _check_outputs(outs: list, inputs: list, ref: dict, device: torch.device) -> None:
    sigs = ref["outputs"]
    if len(outs) != len(sigs):
        raise Failure("correctness", f"forward returned {len(outs)} output(s), the reference {len(sigs)}")
    spans = [_storage_span(x) for x in inputs if isinstance(x, torch.Tensor) and x.numel()]
    for k, o in enumerate(outs):
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


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.detach().contiguous().view(torch.uint8) if t.numel() else t


def run(ch: Channel, job: dict) -> None:
    """Entry point of the candidate's process."""
    try:
        facts = _enter_sandbox(job)
        device = torch.device(job["device"])
        if device.type == "cpu":
            torch.set_num_threads(job["cpu_threads"])
        apply_precision(job["precision"])
        timer = Timer(device, job["l2_bytes"], job.get("clock", "gpu"))
        guard = Guard()
        _serve(ch, job, facts, device, timer, guard)
    except Failure as f:
        ch.send({"event": "fail", "stage": f.stage, "reason": f.reason, "log": f.log})
    except TaskError as e:
        ch.send({"event": "fail", "stage": "load", "reason": f"task: {e}", "log": ""})


def _load(job: dict, device: torch.device):
    task = load_task(job["task_path"], "egg_task_c")
    task_consts = size_constants(task)
    init = init_inputs(task)
    kernel_path = job["kernel_path"]
    try:
        cand = load_module(kernel_path, "egg_candidate")
    except SyntaxError as e:
        raise Failure("load", f"syntax error in kernel line {e.lineno}: {e.msg}", exception_log(e)) from None
    except BaseException as e:
        raise Failure("load", f"kernel failed to import: {type(e).__name__}: {e}", exception_log(e)) from None
    if not isinstance(getattr(cand, "ModelNew", None), type):
        raise Failure("load", "kernel file defines no class ModelNew")
    if issubclass(cand.ModelNew, task.Model):
        raise Failure("integrity", "ModelNew subclasses the reference Model")
    for name in ("get_inputs", "get_init_inputs"):
        if name in vars(cand):
            raise Failure("integrity", f"kernel file redefines {name}(); inputs come from the task only")
    changed = [k for k, v in size_constants(cand).items()
               if k in task_consts and task_consts[k] != v and not k.startswith("BLOCK")]
    if changed:
        raise Failure("integrity", f"kernel file redefines the task's sizes: {', '.join(sorted(changed))}")
    try:
        torch.manual_seed(job["weight_seed"])
        reference = task.Model(*init)
        torch.manual_seed(job["weight_seed"])
        model = cand.ModelNew(*init)
    except BaseException as e:
        raise Failure("load", f"ModelNew(*get_init_inputs()) raised {type(e).__name__}: {e}", exception_log(e)) from None
    if not isinstance(model, torch.nn.Module):
        raise Failure("load", "ModelNew is not a torch.nn.Module")
    # The weight rule: both models are built from the same seed; every
    # parameter or buffer of ModelNew whose name and shape match the
    # reference's gets the reference's value.
    ref_state = reference.state_dict()
    own = model.state_dict()
    matched = {k: v for k, v in ref_state.items() if k in own and own[k].shape == v.shape}
    try:
        model.load_state_dict(matched, strict=False)
        model = model.to(device)
    except BaseException as e:
        raise Failure("load", f"moving ModelNew to {device} failed: {type(e).__name__}: {e}", exception_log(e)) from None
    del reference
    return task, model, len(matched)


def _serve(ch: Channel, job: dict, facts: dict, device: torch.device, timer: Timer, guard: Guard) -> None:
    task, model, matched = _load(job, device)
    ch.send({"event": "loaded", "sandbox": facts, "state_copied": matched})
    cmd = ch.recv()
    if cmd.get("cmd") != "trials":
        return
    ref = cmd["reference"]
    kernel_path = job["kernel_path"]
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True  # poison fresh allocations
    flags0 = global_flags()
    threads0 = set(__import__("threading").enumerate())
    compile_s = None
    launches = []
    for t, seed in enumerate(job["trial_seeds"]):
        inputs = trial_inputs(task, seed, t, device)
        kept = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        t0 = time.perf_counter()
        try:
            with torch.no_grad(), guard.watch():
                out = model(*inputs)
            timer.sync()
        except Failure:
            raise
        except BaseException as e:
            stage = classify(e, first_call=t == 0)
            raise Failure(stage, f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300] if str(e).strip() else ''}",
                          exception_log(e)) from None
        if t == 0:
            compile_s = time.perf_counter() - t0
        if guard.violations:
            ops = sorted(set(guard.violations))
            raise Failure("integrity", "forward ran PyTorch compute outside Triton kernels: " + ", ".join(ops[:8]))
        if guard.launches == 0:
            raise Failure("integrity", "forward launched no Triton kernel")
        launches.append(guard.launches)
        if global_flags() != flags0:
            now = global_flags()
            diff = {k: now[k] for k in now if now[k] != flags0.get(k)}
            raise Failure("integrity", f"forward changed global settings: {diff}")
        outs = _flatten(out)
        _check_outputs(outs, inputs, ref, device)
        snap = [_bits(o).clone() for o in outs]
        time.sleep(0.02)
        timer.sync()
        if any(not torch.equal(s, _bits(o)) for s, o in zip(snap, outs)):
            raise Failure("integrity", "output changed after forward returned (late writes)")
        for k, (x, y) in enumerate(zip(kept, inputs)):
            if isinstance(x, torch.Tensor) and not torch.equal(_bits(x), _bits(y)):
                raise Failure("integrity", f"forward modified input {k}")
        strays = candidate_threads(threads0, kernel_path)
        if strays:
            raise Failure("integrity", f"forward left threads running: {', '.join(strays)}")
        ch.send({"event": "outputs", "trial": t, "count": len(outs), "launches": guard.launches})
        for o in outs:
            send_tensor(ch, o)
        del out, outs, snap, kept, inputs
    ch.send({"event": "trials_done", "compile_s": compile_s, "launches_per_call": max(launches)})

    torch.utils.deterministic.fill_uninitialized_memory = False
    torch.use_deterministic_algorithms(False)
    base = None
    dummy = None
    while True:
        cmd = ch.recv()
        what = cmd.get("cmd")
        if what == "exit":
            return
        try:
            if what in ("warmup", "calibrate", "time"):
                if base is None:
                    base = trial_inputs(task, cmd["base_seed"], 0, device)
                    dummy = [torch.zeros(s["shape"], dtype=getattr(torch, s["dtype"]), device=device)
                             for s in ref["outputs"]]
                with torch.no_grad():
                    if what == "warmup":
                        # Checksums here too: their one-time setup is paid before calibration.
                        timer.run(model, base, cmd["seed"], cmd["n"], checksums=True, warmup=True)
                        ch.send({"event": "warm"})
                    elif what == "calibrate":
                        timer.run(None, base, cmd["seed"], cmd["n"], checksums=True, dummy_outputs=dummy)
                        ch.send({"event": "calibrated"})
                    else:
                        r = timer.run(model, base, cmd["seed"], cmd["n"], checksums=True)
                        ch.send({"event": "timed", "spin_ms": timer.spin_ms if timer.clock == "gpu" else 0.0, **r})
            elif what == "guarded":
                counts, bad = [], []
                for i in range(cmd["n"]):
                    inputs = fresh_like(base, cmd["seed"] + i, device)
                    with torch.no_grad(), guard.watch():
                        model(*inputs)
                    timer.sync()
                    counts.append(guard.launches)
                    bad.extend(guard.violations)
                ch.send({"event": "guarded", "launches": counts, "violations": sorted(set(bad))})
        except BaseException as e:
            raise Failure("timing", f"{type(e).__name__} during timed calls: {str(e)[:300]}", exception_log(e)) from None
