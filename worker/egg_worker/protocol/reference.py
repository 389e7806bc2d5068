"""reference.py: the trusted reference process (and the baseline process).

It never loads a candidate. It loads the task before the candidate's
process exists, computes the reference outputs of each trial on the same
hidden inputs (one trial at a time, so that a many-GB output is held once),
compares what the candidate copied into the shared region, judges misses
against the float64 truth, verifies the outputs of timed calls, and times
the eager and torch.compile baselines.
"""
from __future__ import annotations

import copy
import os
import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .. import faults, sandbox
from ..device import roofline
from ..logs import exception_log, trim
from ..messages import Cmd, Event
from ..proto import Channel
from ..taskload import OutputError, TaskError, build, init_inputs, load_task
from ..usage import memory_stats, note_start
from . import devregion, inductor
from .checksums import checksum, checksum_close
from .compare import TRUTH_K, compare, default_tolerances, judge_by_truth, near_constant, tolerances
from .guards import apply_precision
from .inputs import VARIANTS, fresh_like, nbytes, trial_inputs
from .outputs import Region, fingerprint, layout, mismatch, results, spec
from .timing import Timer, stats


class OutOfMemory(Exception):
    """The reference ran out of memory (never the candidate's fault)."""


def _is_oom(e: BaseException) -> bool:
    if isinstance(e, (MemoryError, torch.OutOfMemoryError)):
        return True
    return isinstance(e, RuntimeError) and ("out of memory" in str(e) or "can't allocate memory" in str(e))


def setup_process(job: dict, subdir: str) -> torch.device:
    """A trusted process (the reference, a baseline, the user's clock): its
    environment scrubbed, only its GPU visible, its caches in `subdir` of
    the job's scratch folder, and the job's precision settings."""
    note_start()
    sandbox.scrub_environment()
    sandbox.only_gpu(job)
    sandbox.set_dumpable(False)
    home = os.path.join(job["scratch"], subdir)
    os.makedirs(home, exist_ok=True)
    os.environ.update(TRITON_CACHE_DIR=os.path.join(home, "triton"),
                      TORCHINDUCTOR_CACHE_DIR=os.path.join(home, "inductor"), TMPDIR=home)
    os.chdir(home)
    device = torch.device(job["device"])
    if device.type == "cpu":
        torch.set_num_threads(job["cpu_threads"])
    apply_precision(job["precision"])
    return device


def _build(job: dict, device: torch.device):
    task = load_task(job["task_path"], "egg_task_r")
    init = init_inputs(task)
    try:
        model = build(task.Model, init, job["weight_seed"], device).to(device)
    except Exception as e:
        if _is_oom(e):
            raise OutOfMemory(f"building Model: {e}") from None
        raise TaskError(f"Model(*get_init_inputs()) raised {type(e).__name__}: {e}") from None
    return task, model


class _Writes(TorchDispatchMode):
    """Storages that a forward's operators write into (arguments their
    schema marks as written: relu_, copy_, index_put_, out=): an in-place
    write counts even where it leaves the bytes as they were."""

    def __init__(self):
        super().__init__()
        self.storages: set = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        for i, arg in enumerate(func._schema.arguments):
            if arg.alias_info is None or not arg.alias_info.is_write:
                continue
            value = kwargs.get(arg.name) if arg.name in kwargs else (args[i] if i < len(args) else None)
            for t in value if isinstance(value, (list, tuple)) else [value]:
                if isinstance(t, torch.Tensor):
                    self.storages.add(t.untyped_storage().data_ptr())
        return func(*args, **kwargs)


def _forward(model, inputs: list, device: torch.device, mutated: list = ()) -> tuple[list, list]:
    """The reference's outputs (flattened, on the device, then the inputs at
    `mutated`, modified in place) and their kinds."""
    try:
        with torch.no_grad():
            result = model(*inputs)
    except Exception as e:
        if _is_oom(e):
            raise OutOfMemory(f"the reference forward: {e}") from None
        raise TaskError(f"the reference forward raised {type(e).__name__}: {e}\n{exception_log(e, 1500)}") from None
    try:
        outs, kinds = results(result, inputs, list(mutated))
    except OutputError as e:
        raise TaskError(f"the reference {str(e)[8:]}") from None
    return [o.detach() if o.device == device else o.detach().to(device) for o in outs], kinds


def _finite(outs: list) -> bool:
    return all(bool(torch.isfinite(o).all()) for o in outs if o.is_floating_point())


class Reference:
    """The reference side of one evaluation."""

    def __init__(self, job: dict, device: torch.device, task, model, region: Region, sock=None):
        self.job, self.device, self.task, self.model, self.region = job, device, task, model, region
        self.sock = sock  # where a device region's descriptor goes to the candidate (devregion.py)
        self.dev: devregion.DeviceRegion | None = None
        self.atol, self.rtol = job["atol"], job["rtol"]
        self.truth_on = job["truth"]
        self.always_truth = job["selfcheck"]
        self.model64 = None
        self.current: tuple | None = None  # (trial, outputs, variant)
        self.variants: dict = {}
        self.sums: list = []  # per trial, the checksums of its outputs
        self.out_of_domain: list = []  # variants that made the outputs NaN or Inf
        self.near_const: set = set()
        self.ref_err = 0.0
        self.mutated: list = []  # inputs the reference modifies in place (start)
        self.truth_missing: str | None = None

    def start(self) -> dict:
        """Trial 0 (the task's own distribution): the outputs' signature."""
        seed = self.job["trial_seeds"][0]
        inputs = trial_inputs(self.task, seed, 0, self.device, "task")
        in_bytes = nbytes(inputs)
        before = [fingerprint(x) if isinstance(x, torch.Tensor) else None for x in inputs]
        writes = _Writes()
        with writes:
            outs, kinds = _forward(self.model, inputs, self.device)
        # Inputs the reference modifies in place (written by an operator, or
        # with other bytes after the call): their final values are results
        # too, which a candidate must leave the same way.
        self.mutated = [k for k, (x, f) in enumerate(zip(inputs, before)) if f is not None and (
            fingerprint(x) != f or (x.numel() and x.untyped_storage().data_ptr() in writes.storages))]
        outs, kinds = outs + [inputs[k].detach() for k in self.mutated], kinds + ["tensor"] * len(self.mutated)
        spans = [(x.untyped_storage().data_ptr(), x.untyped_storage().data_ptr() + x.untyped_storage().nbytes())
                 for x in inputs if isinstance(x, torch.Tensor) and x.numel()]
        aliases = []
        for o in outs:
            lo = o.untyped_storage().data_ptr()
            hi = lo + o.untyped_storage().nbytes()
            aliases.append(any(lo < b and a < hi for a, b in spans))
        del inputs
        self.finite0 = _finite(outs)
        self.kinds = kinds
        self.dtypes = [o.dtype for o in outs]
        self.sigs = [spec(o, k) for o, k in zip(outs, kinds)]
        self.offsets, self.region_size = layout(self.sigs)
        self._keep(0, outs, "task")
        ready = {"event": Event.READY, "outputs": self.sigs, "aliases": aliases, "mutated": self.mutated,
                 "region_bytes": self.region_size,
                 "input_bytes": in_bytes, "output_bytes": sum(s["nbytes"] for s in self.sigs)}
        if self.sock is not None:
            ready.update(self._share_device_region())
        return ready

    def _share_device_region(self) -> dict:
        """The device region, made and its descriptor sent to the candidate;
        what READY says of it."""
        try:
            self.dev = devregion.DeviceRegion(self.device, self.region_size)
            devregion.send(self.sock, self.dev)
            return {"device_region": True}
        except torch.OutOfMemoryError as e:
            self.dev = None
            return {"device_region": False, "device_region_error": f"out of memory: {str(e)[:200]}"}
        except Exception as e:  # any failure: the host region, as without it
            self.dev = None
            return {"device_region": False, "device_region_error": f"{type(e).__name__}: {str(e)[:300]}"}
        finally:
            self.sock.close()
            self.sock = None

    def _keep(self, t: int, outs: list, variant: str) -> None:
        self.current = (t, outs, variant)
        self.variants[t] = variant
        self.sums.append([checksum(o) for o in outs])
        for k, o in enumerate(outs):
            a, r = tolerances(o.dtype, self.atol, self.rtol)
            if near_constant(o, a, r):
                self.near_const.add(k)

    def prepare(self, t: int) -> dict:
        """The reference outputs of trial t. A variant that makes the
        reference's outputs NaN or Inf where the task's own inputs did not
        has left the task's domain (log of a negative number, say): the
        trial then uses the task's own distribution."""
        # The parent has sealed the host region by the first PREPARE: where
        # it is the candidate's way, pinning it runs while the candidate
        # compiles (outputs.py); compare() joins.
        if self.dev is None:
            self.region.map_in_background()
        if self.current and self.current[0] == t:
            return {"event": Event.PREPARED, "trial": t, "variant": self.current[2]}
        self.current = None
        seed = self.job["trial_seeds"][t]
        variant = VARIANTS[t % len(VARIANTS)]
        try:
            faults.inject("reference-oom", self.job["alone"])
        except torch.OutOfMemoryError as e:
            raise OutOfMemory(str(e)) from None
        outs, _ = _forward(self.model, trial_inputs(self.task, seed, t, self.device, variant), self.device,
                          self.mutated)
        if self.finite0 and not _finite(outs):
            if variant not in self.out_of_domain:
                self.out_of_domain.append(variant)
            del outs
            variant = "task"
            outs, _ = _forward(self.model, trial_inputs(self.task, seed, t, self.device, variant), self.device,
                          self.mutated)
        self._keep(t, outs, variant)
        return {"event": Event.PREPARED, "trial": t, "variant": variant}

    def truth(self, t: int) -> list | None:
        """The trial's outputs from the model and inputs upcast to float64."""
        seed = self.job["trial_seeds"][t]
        try:
            if self.model64 is None:
                self.model64 = copy.deepcopy(self.model).to(torch.float64)
            inputs = trial_inputs(self.task, seed, t, self.device, self.variants[t])
            up = [x.to(torch.float64) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
            del inputs
            old = torch.get_default_dtype()
            torch.set_default_dtype(torch.float64)
            try:
                with torch.no_grad():
                    outs, _ = results(self.model64(*up), up, self.mutated)
            finally:
                torch.set_default_dtype(old)
            return [o.detach().to(self.device) for o in outs]
        except Exception as e:
            if _is_oom(e):
                if not self.job["alone"]:
                    raise OutOfMemory(f"the float64 reference: {e}") from None
                self.truth_missing = "out of memory"
            else:
                self.truth_missing = f"{type(e).__name__}: {str(e)[:200]}"
            return None

    def compare(self, t: int, specs) -> dict:
        res = {"event": Event.COMPARED, "ok": False, "reason": None, "max_abs_err": None, "max_rel_err": None,
               "truth": None}
        if not (self.current and self.current[0] == t):
            raise RuntimeError(f"compare of trial {t} before it was prepared")
        refs = self.current[1]
        if not isinstance(specs, list) or len(specs) != len(refs):
            res["reason"] = f"forward returned {len(specs) if isinstance(specs, list) else '?'} output(s), " \
                            f"the reference {len(refs)}"
            return res
        errs, rels, truth, reason = [], [], None, None
        for k, (got, want) in enumerate(zip(specs, self.sigs)):
            if not isinstance(got, dict):
                reason = f"output {k}: malformed description"
                break
            try:
                why = mismatch(got, want)
            except (KeyError, TypeError):
                why = "malformed description"
            if why or not got.get("written"):
                reason = f"trial {t} output {k}: {why or 'not written'}"
                break
            if got.get("where") == "device" and self.dev is not None:
                out = self.dev.view(want, self.offsets[k])
            else:
                self.region.map()
                out = self.region.view(want, self.offsets[k])
            r = compare(refs[k], out, self.atol, self.rtol, self.device)
            errs.append(r["max_abs_err"])
            rels.append(r["max_rel_err"])
            # A selfcheck measures how ill-conditioned the task is on its
            # first trial even when nothing missed.
            judge = (self.truth_on and refs[k].is_floating_point() and
                     ((self.always_truth and t == 0) or r["miss"] == "values"))
            if judge and truth is None:
                truth = self.truth(t) or []
            if judge and k < len(truth):
                j = judge_by_truth(refs[k], out, truth[k], self.atol, self.rtol, self.device)
                self.ref_err = max(self.ref_err, j["ref_err"])
                worst = res["truth"]
                if worst is None or j["out_err"] / j["bound"] > worst["out_err"] / worst["bound"]:
                    res["truth"] = {key: j[key] for key in ("ref_err", "out_err", "bound", "k")}
                if r["miss"] == "values" and j["ok"]:
                    r["ok"] = True
            if not r["ok"]:
                reason = f"trial {t} output {k}: {r['reason']}"
                if judge and self.truth_missing:
                    reason += f" (no float64 check was possible: {self.truth_missing})"
                elif judge and res["truth"]:
                    tr = res["truth"]
                    reason += (f"; against float64 its error is {tr['out_err']:.3g} tolerances, "
                               f"PyTorch's fp32 {tr['ref_err']:.3g} (allowed {tr['bound']:.3g})")
                break
        res["max_abs_err"] = max(errs) if errs else None
        res["max_rel_err"] = max(rels) if rels else None
        res["ok"] = reason is None
        res["reason"] = reason
        return res

    def task_flags(self) -> list:
        flags = []
        if self.out_of_domain:
            flags.append(f"input_domain: the {', '.join(self.out_of_domain)} input variant(s) make the reference's "
                         "outputs NaN or Inf (the task's inputs have a domain); those trials used the task's own "
                         "input distribution")
        if self.ref_err > 1:
            flags.append(f"ill_conditioned: PyTorch's own fp32 result is {self.ref_err:.3g} tolerances from the "
                         "float64 truth; outputs were judged against float64 with the tolerance widened to "
                         f"max(1, {TRUTH_K:g} x that error)")
        if self.mutated:
            flags.append(f"in_place: the reference modifies input(s) {', '.join(map(str, self.mutated))} in place; "
                         "their final values were compared as outputs")
        if self.truth_missing:
            flags.append(f"truth_unavailable: the float64 reference could not run ({self.truth_missing})")
        for k in range(len(self.sigs)):
            if len(self.sums) > 1 and self.sigs[k]["nbytes"]:
                a, r = tolerances(self.dtypes[k], self.atol, self.rtol)
                if all(checksum_close(self.sums[0][k], s[k], a, r) for s in self.sums[1:]):
                    flags.append(f"degenerate_task: output {k} does not change with the inputs")
                    continue
            if k in self.near_const:
                flags.append(f"near_constant_output: output {k} is nearly constant")
        return flags


def run(ch: Channel, job: dict, region: Region, sock=None) -> None:
    """Entry point of the reference process. `sock`: its end of the pair on
    which it sends the candidate a device region (devregion.py), or None."""
    try:
        device = setup_process(job, "ref")
        task, model = _build(job, device)
        ch.send({"event": Event.LOADED})
        ref = Reference(job, device, task, model, region, sock)
        ch.send(ref.start())
    except TaskError as e:
        ch.send({"event": Event.TASK_ERROR, "error": str(e)})
        return
    except OutOfMemory as e:
        ch.send({"event": Event.OOM, "error": str(e)[:500], "memory": memory_stats()})
        return
    base = None
    while True:
        cmd = ch.recv()
        what = cmd.get("cmd")
        try:
            if what == Cmd.EXIT:
                return
            if what == Cmd.STATS:
                # The device region is the driver's allocation, outside PyTorch's figures.
                extra = {"device_region_bytes": ref.dev.mapped} if ref.dev is not None else {}
                ch.send(dict(memory_stats(), event=Event.STATS, **extra))
            elif what == Cmd.PREPARE:
                ch.send(ref.prepare(int(cmd["trial"])))
            elif what == Cmd.COMPARE:
                ch.send(ref.compare(int(cmd["trial"]), cmd.get("specs")))
            elif what == Cmd.TASK_FLAGS:
                ch.send({"event": Event.TASK_FLAGS, "flags": ref.task_flags()})
            elif what == Cmd.VERIFY:
                # Recompute the outputs of chosen timed calls and compare checksums.
                ref.current = None
                if base is None:
                    base = trial_inputs(task, cmd["base_seed"], 0, device, "task")
                bad = []
                # A kernel the float64 rule admitted may sit up to its allowance
                # from the truth, and the fp32 reference ref_err from it.
                widen = max(1.0, TRUTH_K * ref.ref_err) + ref.ref_err if ref.ref_err else 1.0
                for i, claimed in zip(cmd["indices"], cmd["checksums"]):
                    outs, _ = _forward(model, fresh_like(base, cmd["seed"] + i, device), device, ref.mutated)
                    if not isinstance(claimed, list) or len(claimed) != len(outs):
                        bad.append(i)
                        continue
                    for o, c in zip(outs, claimed):
                        a, r = tolerances(o.dtype, job["atol"], job["rtol"])
                        if not checksum_close(checksum(o, cmd["seed"] + i), c, a, r, widen):
                            bad.append(i)
                            break
                ch.send({"event": Event.VERIFIED, "bad": bad})
        except OutOfMemory as e:
            ch.send({"event": Event.OOM, "error": str(e)[:500], "memory": memory_stats()})
            return
        except TaskError as e:
            ch.send({"event": Event.TASK_ERROR, "error": str(e)})
            return


def _timing_stats(r: dict, timer: Timer) -> dict:
    """Statistics of a timed loop, with the clock and launch figures."""
    return dict(stats(r["events_ms"]), clock=timer.clock, launch_ms=stats(r["launch_ms"])["median"],
                spin_ms=timer.spin_ms if timer.clock == "gpu" else 0.0)


def _work(model, inputs: list) -> dict:
    """The reference's FLOPs and least bytes per forward (roofline.py), or
    why they could not be counted (never a reason to fail the baseline)."""
    try:
        outs, work = roofline.count(model, inputs)
        del outs
        return work
    except Exception as e:
        if _is_oom(e):
            raise
        return {"error": trim(f"{type(e).__name__}: {e}", 300)}


# Inductor's output code kept with the baseline (egg writes it into the
# task's folder): enough for any one part, cut beyond.
COMPILE_CODE_LIMIT = 256 * 1024


def baseline(ch: Channel, job: dict) -> None:
    """Entry point of the baseline process: eager and torch.compile timings
    with the same loop and precision as candidates."""
    try:
        device = setup_process(job, "baseline")
        task, model = _build(job, device)
        timer = Timer(device, job["l2_bytes"], job["clock"])
        base = trial_inputs(task, job["base_seed"], 0, device, "task")
        outs, _ = _forward(model, base, device)
        io = {"input_bytes": nbytes(base), "output_bytes": nbytes(outs), "tolerance": default_tolerances(outs)}
        del outs
        io["work"] = _work(model, base)
    except TaskError as e:
        ch.send({"event": Event.TASK_ERROR, "error": str(e)})
        return
    except OutOfMemory as e:
        ch.send({"event": Event.OOM, "error": str(e)[:500], "memory": memory_stats()})
        return
    out = {"event": Event.BASELINE, **io}
    compiled = None
    try:
        with torch.no_grad():
            # Compile before the device lock is taken: only timing is exclusive.
            if job["compile_mode"] != "none":
                try:
                    compiled = torch.compile(model, mode=None if job["compile_mode"] == "default" else job["compile_mode"])
                    t0 = time.perf_counter()
                    # Inductor's output code, captured as it compiles: what
                    # torch.compile does with the task, for the prompts.
                    _, code = inductor.capture(compiled, fresh_like(base, job["seed"] - 1, device))
                    timer.sync()
                    out["compile_s"] = time.perf_counter() - t0
                    out["compile_summary"] = inductor.summarize(code, device.type)
                    if code:
                        out["compile_code"] = code[:COMPILE_CODE_LIMIT]
                except Exception as e:
                    if _is_oom(e):
                        raise
                    compiled = None
                    out["compile_error"] = trim(f"{type(e).__name__}: {e}", 600)
            out["eager_peak"] = memory_stats()
            ch.send({"event": Event.READY_TO_TIME})
            if ch.recv().get("cmd") != Cmd.TIME:
                return
            timer.run(model, base, job["seed"], job["warmup"], checksums=False, warmup=True)
            r = timer.run(model, base, job["seed"] + 1_000_000, job["iters"], checksums=False)
            out["eager"] = _timing_stats(r, timer)
            if compiled is not None:
                try:
                    timer.run(compiled, base, job["seed"], job["warmup"], checksums=False, warmup=True)
                    r = timer.run(compiled, base, job["seed"] + 2_000_000, job["iters"], checksums=False)
                    out["compiled"] = _timing_stats(r, timer)
                    try:
                        inductor.launch_times(out.get("compile_summary"), compiled, base)
                    except Exception as e:  # the summary's times only: the baseline stands
                        if _is_oom(e):
                            raise
                        if out.get("compile_summary"):
                            out["compile_summary"]["times_error"] = trim(f"{type(e).__name__}: {e}", 300)
                except Exception as e:
                    if _is_oom(e):
                        raise
                    out["compile_error"] = trim(f"{type(e).__name__}: {e}", 600)
    except Exception as e:
        if not _is_oom(e):
            raise
        ch.send({"event": Event.OOM, "error": str(e)[:500], "memory": memory_stats()})
        return
    out["memory"] = memory_stats()
    ch.send(out)
