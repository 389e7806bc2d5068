"""compare.py: the trusted comparison of a candidate's output with the reference's.

Everything here works on flat chunks (2M elements on the CPU, 64M on a GPU) on the
evaluation device, so that comparing a many-GB output needs a few hundred MB
of temporaries, not several copies of the output in float64.

Rules (PROTOCOL.md, "Correctness"):
- floating outputs: |out - ref| <= atol + rtol * |ref| elementwise; NaN, +Inf
  and -Inf must sit at the same positions (never wildcards);
- integer and boolean outputs: exactly equal;
- when a floating output misses, it may still pass against the float64 truth
  (the reference run in float64 on the same inputs): its worst error,
  measured in tolerances, may be at most max(1, TRUTH_K x the fp32
  reference's own worst error). A kernel as accurate as PyTorch then passes
  on an ill-conditioned task (fp32 kernels summing in another order were
  measured at up to 3.4x PyTorch's worst error), and a precision downgrade
  (TF32 or bf16 inputs, fp16 math: errors thousands of times PyTorch's)
  still fails.
"""
from __future__ import annotations

import torch

from ..dtypes import record_name

DEFAULT_TOL = {torch.float16: 1e-2, torch.bfloat16: 1e-2}
CPU_CHUNK, GPU_CHUNK = 1 << 21, 1 << 26  # small enough for caches / few launches
TRUTH_K = 10.0


def tolerances(dtype: torch.dtype, atol: float | None, rtol: float | None) -> tuple[float, float]:
    """fp32/fp64: 1e-4 unless the job says otherwise; fp16/bf16: 1e-2;
    integer and boolean outputs: exact. The one place egg's defaults are set:
    the baseline reports them per output (default_tolerances) for the prompts."""
    if not dtype.is_floating_point:
        return (0.0, 0.0)
    base = DEFAULT_TOL.get(dtype, 1e-4)
    return (atol if atol is not None else base, rtol if rtol is not None else base)


def default_tolerances(outputs: list) -> list[dict]:
    """What the comparison applies to each output when the job names no
    tolerance: [{"output", "dtype", "atol", "rtol", "exact"}]."""
    rows = []
    for i, t in enumerate(outputs):
        if isinstance(t, torch.Tensor):
            a, r = tolerances(t.dtype, None, None)
            rows.append({"output": i, "dtype": record_name(t.dtype), "atol": a, "rtol": r,
                         "exact": not t.dtype.is_floating_point})
    return rows


def _chunks(n: int, device: torch.device):
    step = CPU_CHUNK if device.type == "cpu" else GPU_CHUNK
    for start in range(0, n, step):
        yield start, min(n, start + step)


def _flat(t: torch.Tensor) -> torch.Tensor:
    return t.reshape(-1)


def _work_dtype(dtype: torch.dtype) -> torch.dtype:
    """Arithmetic for comparisons: float32 data in float32 (a difference of
    two float32 numbers within a tolerance of each other is exact), float64
    in float64, half types in float32, integers in float64."""
    return torch.float64 if dtype in (torch.float64,) or not dtype.is_floating_point else torch.float32


def _index(shape: list, flat: int) -> list:
    """A flat index as one index per dimension."""
    idx = []
    for d in reversed(shape):
        idx.append(flat % d if d else 0)
        flat = flat // d if d else 0
    return list(reversed(idx))


def compare(ref: torch.Tensor, out: torch.Tensor, atol: float | None, rtol: float | None,
            device: torch.device) -> dict:
    """Compare `out` (any device, e.g. the shared region on the host) with
    `ref` (on `device`). Same shape and dtype are the caller's check.
    Returns ok, max_abs_err, max_rel_err (|out - ref| / max(|ref|, atol)),
    reason, and `miss`: None, "nonfinite" or "values" (only a "values" miss
    may be rescued by the float64 truth)."""
    res = {"ok": False, "max_abs_err": 0.0, "max_rel_err": 0.0, "reason": None, "miss": None}
    a, r = tolerances(ref.dtype, atol, rtol)
    n = ref.numel()
    if n == 0:
        res["ok"] = True
        return res
    rf, of = _flat(ref), _flat(out)
    exact = not ref.dtype.is_floating_point
    work = _work_dtype(ref.dtype)
    nbad, first, nonfinite = 0, None, {"NaN": 0, "+Inf": 0, "-Inf": 0}
    floor = max(a, 1e-30)
    for s, e in _chunks(n, device):
        o = of[s:e].to(device, non_blocking=False).to(work)
        x = rf[s:e].to(work)
        if exact:
            bad = o != x
            diff = (o - x).abs_()
        else:
            fin = torch.isfinite(o) & torch.isfinite(x)
            if not bool(fin.all()):
                for name, fn in (("NaN", torch.isnan), ("+Inf", torch.isposinf), ("-Inf", torch.isneginf)):
                    nonfinite[name] += int((fn(o) != fn(x)).sum())
                o = torch.where(fin, o, x)  # non-finite positions are judged above
            diff = (o - x).abs_()
            bad = diff > x.abs().mul_(r).add_(a)
            res["max_rel_err"] = max(res["max_rel_err"], float((diff / x.abs().clamp_min_(floor)).max()))
        res["max_abs_err"] = max(res["max_abs_err"], float(diff.max()))
        k = int(bad.sum())
        if k and first is None:
            j = s + int(bad.nonzero()[0])
            first = (j, float(of[j]), float(rf[j]))
        nbad += k
    shape = list(ref.shape)
    for name, count in nonfinite.items():
        if count:
            res["miss"] = "nonfinite"
            res["reason"] = f"{name} positions differ from the reference at {count} element(s)"
            return res
    if nbad:
        j, got, want = first
        where = f"index {_index(shape, j)}" + (f" (flat {j})" if len(shape) > 1 else "")
        tol = "exact match required" if exact else f"atol={a:g} rtol={r:g}"
        res["miss"] = "values"
        res["reason"] = (f"{nbad} of {n} elements outside {tol}; first at {where}: got {got:.6g}, "
                         f"expected {want:.6g}; max abs err {res['max_abs_err']:.3g}")
        return res
    res["ok"] = True
    return res


def worst_error(x: torch.Tensor, truth: torch.Tensor, atol: float, rtol: float, device: torch.device) -> float:
    """The largest |x - truth| / (atol + rtol * |truth|) over the elements
    where both are finite: an error measured in tolerances."""
    worst = 0.0
    xf, tf = _flat(x), _flat(truth)
    for s, e in _chunks(truth.numel(), device):
        xd = xf[s:e].to(device).to(torch.float64)
        td = tf[s:e].to(torch.float64)
        finite = torch.isfinite(xd) & torch.isfinite(td)
        err = torch.where(finite, (xd - td).abs() / (atol + rtol * td.abs()), torch.zeros_like(td))
        worst = max(worst, float(err.max()))
    return worst


def judge_by_truth(ref: torch.Tensor, out: torch.Tensor, truth: torch.Tensor, atol: float | None,
                   rtol: float | None, device: torch.device) -> dict:
    """The float64-truth rule for an output that missed the plain check."""
    a, r = tolerances(ref.dtype, atol, rtol)
    ref_err = worst_error(ref, truth, a, r, device)
    out_err = worst_error(out, truth, a, r, device)
    bound = max(1.0, TRUTH_K * ref_err)
    return {"ok": out_err <= bound, "ref_err": ref_err, "out_err": out_err, "bound": bound, "k": TRUTH_K}


def value_range(t: torch.Tensor) -> tuple[float, float] | None:
    """(min, max) of the finite values of a floating tensor, chunked; None
    when it has none."""
    lo, hi = float("inf"), float("-inf")
    flat = _flat(t)
    for s, e in _chunks(t.numel(), t.device):
        x = flat[s:e]
        if not bool(torch.isfinite(x).all()):
            x = x[torch.isfinite(x)]
        if x.numel():
            a, b = torch.aminmax(x)
            lo, hi = min(lo, float(a)), max(hi, float(b))
    return None if lo > hi else (lo, hi)


def near_constant(t: torch.Tensor, atol: float, rtol: float) -> bool:
    if t.numel() < 2 or not t.is_floating_point():
        return False
    span = value_range(t)
    if span is None:
        return True
    lo, hi = span
    return hi - lo <= atol + rtol * max(abs(lo), abs(hi))
