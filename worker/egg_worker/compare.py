"""compare.py: the trusted comparison of a candidate's output with the reference's."""
from __future__ import annotations

import torch

DEFAULT_TOL = {torch.float16: 1e-2, torch.bfloat16: 1e-2}


def tolerances(dtype: torch.dtype, atol: float | None, rtol: float | None) -> tuple[float, float]:
    """fp32/fp64: 1e-4 unless the job says otherwise; fp16/bf16: 1e-2."""
    base = DEFAULT_TOL.get(dtype, 1e-4)
    return (atol if atol is not None else base, rtol if rtol is not None else base)


def compare(ref: torch.Tensor, out: torch.Tensor, atol: float | None, rtol: float | None) -> dict:
    """Elementwise |out - ref| <= atol + rtol * |ref|; NaN and +/-Inf must sit
    at the same positions (never wildcards)."""
    res = {"ok": False, "max_abs_err": None, "max_rel_err": None, "reason": None}
    if tuple(out.shape) != tuple(ref.shape):
        res["reason"] = f"shape {list(out.shape)} != expected {list(ref.shape)}"
        return res
    if out.dtype != ref.dtype:
        res["reason"] = f"dtype {out.dtype} != expected {ref.dtype}"
        return res
    a, r = tolerances(ref.dtype, atol, rtol)
    o = out.to(torch.float64)
    e = ref.to(torch.float64)
    for name, fn in (("NaN", torch.isnan), ("+Inf", torch.isposinf), ("-Inf", torch.isneginf)):
        mo, me = fn(o), fn(e)
        if not torch.equal(mo, me):
            bad = int((mo != me).sum())
            res["reason"] = f"{name} positions differ from the reference at {bad} element(s)"
            return res
    finite = torch.isfinite(e)
    if o.numel() == 0:
        res.update(ok=True, max_abs_err=0.0, max_rel_err=0.0)
        return res
    diff = torch.where(finite, (o - e).abs(), torch.zeros_like(e))
    bound = a + r * e.abs()
    bad = diff > torch.where(finite, bound, torch.full_like(e, float("inf")))
    res["max_abs_err"] = float(diff.max())
    res["max_rel_err"] = float((diff / e.abs().clamp_min(1e-12)).where(finite, torch.zeros_like(e)).max())
    nbad = int(bad.sum())
    if nbad:
        idx = int(bad.reshape(-1).nonzero()[0])
        res["reason"] = (f"{nbad} of {o.numel()} elements outside atol={a:g} rtol={r:g}; "
                         f"first at flat index {idx}: got {float(o.reshape(-1)[idx]):.6g}, "
                         f"expected {float(e.reshape(-1)[idx]):.6g}; max abs err {res['max_abs_err']:.3g}")
        return res
    res["ok"] = True
    return res


def near_constant(t: torch.Tensor, atol: float, rtol: float) -> bool:
    if t.numel() < 2 or not t.is_floating_point():
        return False
    x = t.to(torch.float64)
    x = x[torch.isfinite(x)]
    if x.numel() < 2:
        return True
    return float(x.max() - x.min()) <= atol + rtol * float(x.abs().max())
