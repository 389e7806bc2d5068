#!/usr/bin/env python3
"""tf32x3.py: how accurate and how fast Triton's dot products are on a GPU in
each input precision ("ieee": fp32 on the FMA units; "tf32": one TF32
tensor-core pass; "tf32x3": Triton's three-pass split inside the K loop,
which recovers most of fp32's mantissa; "presplit": the compensated scheme
done by hand: A and B split once into a TF32 high part and the remainder
(hi = x with its low 13 mantissa bits cleared, lo = x - hi, both exact in
fp32) by a pass of their own, then per tile three plain TF32 dots, hi*hi +
hi*lo + lo*hi, accumulated in fp32), on GEMM shapes taken from KernelBench's
matmul and convolution tasks (a convolution as its implicit GEMM: M =
N*Hout*Wout, K = Cin*k^d, N = Cout) and the batched matmul of level 1/3,
with KernelBench's inputs (torch.rand).

For each shape and precision it prints the worst |out - ref| / (atol +
rtol*|ref|) against the fp32 reference (cuBLAS with TF32 off; egg's rule
passes at <= 1 with atol = rtol = 1e-4), the error against the float64
truth relative to the fp32 reference's own, and the TFLOP/s at that shape
(presplit: its split pass included, and without it).

    python3 bench/tf32x3.py [--json OUT]
"""
from __future__ import annotations

import json
import os
import sys

import torch
import triton

SHAPES = [
    # name, M, K, N (a batched shape: name, (BATCH, M), K, N)
    ("level1/1 square matmul 4096", 4096, 4096, 4096),
    ("level1/2 matmul 2048x8192x4096", 2048, 8192, 4096),
    ("level1/6 large K (256x524288x256)", 256, 524288, 256),
    ("level1/63 conv2d 16x16x1024^2, k3 -> 128 (1M rows)", 1 << 20, 144, 128),
    ("level1/54 conv3d 16x3x64^3, k3 -> 64 (1M rows)", 1 << 20, 81, 64),
    ("level1/3 bmm 128 x (512x1024x2048)", (128, 512), 1024, 2048),
]
ATOL = RTOL = 1e-4


# egg's own reference kernels (the calibration's practical bound uses them too).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "worker"))
from egg_worker.device import practical  # noqa: E402

_K = practical.kernels()
matmul, split_tf32, matmul_presplit = _K["matmul"], _K["split"], _K["presplit"]


def presplit(x):
    hi, lo = torch.empty_like(x), torch.empty_like(x)
    n = x.numel()
    split_tf32[(triton.cdiv(n, 4096),)](x, hi, lo, n, BLOCK=4096)
    return hi, lo


def run_presplit(a, b, parts=None):
    """a: (M, K) or (Z, M, K); parts: the split operands, when given (the
    product alone), else split here (the whole scheme)."""
    ah, al, bh, bl = parts if parts else (*presplit(a), *presplit(b))
    z = a.shape[0] if a.dim() == 3 else 1
    M, K = a.shape[-2:]
    N = b.shape[-1]
    c = torch.empty(*a.shape[:-1], N, device=a.device)
    grid = (triton.cdiv(M, 128), triton.cdiv(N, 128), z)
    matmul_presplit[grid](ah, al, bh, bl, c, M, N, K, M * K if z > 1 else 0, K * N if z > 1 else 0,
                          M * N if z > 1 else 0, BM=128, BN=128, BK=32, num_warps=8, num_stages=3)
    return c


def run(a, b, prec: str):
    if prec == "presplit":
        return run_presplit(a, b)
    if a.dim() == 3:
        return torch.stack([run(x, y, prec) for x, y in zip(a, b)])
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty(M, N, device=a.device)
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128),)
    # egg's kernel takes the second operand as a Linear layer's weight, (N, K).
    matmul[grid](a, b.t().contiguous(), c, M, N, K, K, 1, PREC=prec, BM=128, BN=128, BK=32, GROUP=8, num_warps=8,
                 num_stages=3)
    return c


def seconds(fn, reps=5) -> float:
    best = float("inf")
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        best = min(best, s.elapsed_time(e) / 1e3)
    return best


def main() -> int:
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    rows = []
    for name, M, K, N in SHAPES:
        Z, M = M if isinstance(M, tuple) else (None, M)
        a = torch.rand(*((Z,) if Z else ()), M, K, device="cuda")
        b = torch.rand(*((Z,) if Z else ()), K, N, device="cuda")
        ref = a @ b  # the fp32 reference, TF32 off
        truth = (a.double() @ b.double())
        ref_err = ((ref.double() - truth).abs() / (ATOL + RTOL * truth.abs())).max().item()
        flops = 2 * (Z or 1) * M * N * K
        for prec in ("ieee", "tf32", "tf32x3", "presplit"):
            out = run(a, b, prec)
            torch.cuda.synchronize()
            vs_ref = ((out - ref).abs() / (ATOL + RTOL * ref.abs())).max().item()
            vs_truth = ((out.double() - truth).abs() / (ATOL + RTOL * truth.abs())).max().item()
            sec = seconds(lambda: run(a, b, prec))
            row = {"shape": name, "batch": Z, "M": M, "K": K, "N": N, "precision": prec, "err_vs_fp32_ref": vs_ref,
                   "passes_1e-4": vs_ref <= 1.0, "err_vs_truth": vs_truth, "ref_err_vs_truth": ref_err,
                   "tflops": flops / sec / 1e12}
            extra = ""
            if prec == "presplit":
                parts = (*presplit(a), *presplit(b))
                row["tflops_product_only"] = flops / seconds(lambda: run_presplit(a, b, parts)) / 1e12
                extra = f" ({row['tflops_product_only']:.1f} without the split pass)"
                del parts
            rows.append(row)
            print(f"{name:52s} {prec:8s} err/tol vs fp32 ref {vs_ref:9.3g} ({'pass' if vs_ref <= 1 else 'FAIL'}); "
                  f"vs fp64 {vs_truth:9.3g} (fp32 ref {ref_err:9.3g}); {row['tflops']:7.1f} TFLOP/s{extra}",
                  flush=True)
        del a, b, ref, truth, out
        torch.cuda.empty_cache()
    if len(sys.argv) > 2 and sys.argv[1] == "--json":
        with open(sys.argv[2], "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
