#!/usr/bin/env python3
"""tf32x3.py: how accurate and how fast Triton's dot products are on a GPU in
each input precision ("ieee": fp32 on the FMA units; "tf32": one TF32
tensor-core pass; "tf32x3": the three-pass split that recovers most of
fp32's mantissa), on GEMM shapes taken from KernelBench's matmul and
convolution tasks (a convolution as its implicit GEMM: M = N*Hout*Wout,
K = Cin*k^d, N = Cout), with KernelBench's inputs (torch.rand).

For each shape and precision it prints the worst |out - ref| / (atol +
rtol*|ref|) against the fp32 reference (cuBLAS with TF32 off; egg's rule
passes at <= 1 with atol = rtol = 1e-4), the error against the float64
truth relative to the fp32 reference's own, and the TFLOP/s at that shape.

    python3 bench/tf32x3.py [--json OUT]
"""
from __future__ import annotations

import json
import sys

import torch
import triton
import triton.language as tl

SHAPES = [
    # name, M, K, N
    ("level1/1 square matmul 4096", 4096, 4096, 4096),
    ("level1/2 matmul 2048x8192x4096", 2048, 8192, 4096),
    ("level1/6 large K (256x524288x256)", 256, 524288, 256),
    ("level1/63 conv2d 16x16x1024^2, k3 -> 128 (1M rows)", 1 << 20, 144, 128),
    ("level1/54 conv3d 16x3x64^3, k3 -> 64 (1M rows)", 1 << 20, 81, 64),
]
ATOL = RTOL = 1e-4


@triton.jit
def matmul(a, b, c, M, N, K, PREC: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        ka = k0 + rk
        x = tl.load(a + rm[:, None].to(tl.int64) * K + ka[None, :], mask=(rm[:, None] < M) & (ka[None, :] < K), other=0.0)
        y = tl.load(b + ka[:, None].to(tl.int64) * N + rn[None, :], mask=(ka[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc, input_precision=PREC)
    tl.store(c + rm[:, None].to(tl.int64) * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def run(a, b, prec: str):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty(M, N, device=a.device)
    grid = (triton.cdiv(M, 128), triton.cdiv(N, 128))
    matmul[grid](a, b, c, M, N, K, PREC=prec, BM=128, BN=128, BK=32, num_warps=8, num_stages=3)
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
        a = torch.rand(M, K, device="cuda")
        b = torch.rand(K, N, device="cuda")
        ref = a @ b  # the fp32 reference, TF32 off
        truth = (a.double() @ b.double())
        ref_err = ((ref.double() - truth).abs() / (ATOL + RTOL * truth.abs())).max().item()
        for prec in ("ieee", "tf32", "tf32x3"):
            out = run(a, b, prec)
            torch.cuda.synchronize()
            vs_ref = ((out - ref).abs() / (ATOL + RTOL * ref.abs())).max().item()
            vs_truth = ((out.double() - truth).abs() / (ATOL + RTOL * truth.abs())).max().item()
            sec = seconds(lambda: run(a, b, prec))
            row = {"shape": name, "M": M, "K": K, "N": N, "precision": prec, "err_vs_fp32_ref": vs_ref,
                   "passes_1e-4": vs_ref <= 1.0, "err_vs_truth": vs_truth, "ref_err_vs_truth": ref_err,
                   "tflops": 2 * M * N * K / sec / 1e12}
            rows.append(row)
            print(f"{name:52s} {prec:7s} err/tol vs fp32 ref {vs_ref:9.3g} ({'pass' if vs_ref <= 1 else 'FAIL'}); "
                  f"vs fp64 {vs_truth:9.3g} (fp32 ref {ref_err:9.3g}); {row['tflops']:7.1f} TFLOP/s", flush=True)
        del a, b, ref, truth, out
        torch.cuda.empty_cache()
    if len(sys.argv) > 2 and sys.argv[1] == "--json":
        with open(sys.argv[2], "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
