"""practical.py: the practical bound: what egg's own Triton matrix-product kernels reach on this device.

The roofline's peaks (roofline.calibrate) are the hardware's: cuBLAS on the
tensor cores, FMA chains on the CUDA cores. A Triton kernel that must keep
fp32 accuracy reaches far less: on an H200 (bench/results/tf32x3-h200.txt,
4096^3) a plain fp32 dot ran at 41 TFLOP/s, Triton's three-pass tf32x3 split
at 33, the hand pre-split compensated scheme at 36, against the 133 TFLOP/s
that a third of cuBLAS's measured TF32 rate (398) would suggest. So the calibration also
times egg's own reference kernels, one tiled matrix product per scheme, at
one shape, and the prompts and reports state that figure beside the peaks:
what a Triton GEMM of this kind can be expected to reach here, measured.

The schemes (the names the verdicts and prompts use):
- fp32_ieee: fp32 operands on the FMA units (tl.dot input_precision "ieee");
- fp32_tf32x3: Triton's split of each tile into TF32 parts, three tensor-core
  passes inside the K loop;
- fp32_presplit: each operand split once, by a pass of its own (timed with
  the product), into a TF32 high part (the low 13 mantissa bits cleared) and
  the exact remainder, then three plain TF32 dots per tile;
- tf32: one TF32 pass (not fp32-accurate; the rate --precision tf32 allows);
- bf16: bf16 operands, fp32 accumulation.

Only on a GPU: under Triton's interpreter the figures would say nothing.
`products(device, m)` runs every scheme once at size m and returns the
results, for the tests to check against torch on the CPU.
"""
from __future__ import annotations

import torch

SIZE = 4096                     # M = N = K of the timed product
TILE = {"fp32": (128, 128, 32), "bf16": (128, 128, 64)}   # BM, BN, BK
WARPS, STAGES = 8, 3
SCHEMES = ("fp32_ieee", "fp32_tf32x3", "fp32_presplit", "tf32", "bf16")
FP32_ACCURATE = ("fp32_ieee", "fp32_tf32x3", "fp32_presplit")

_kernels = None


def kernels() -> dict:
    """The kernels ({"triton", "matmul", "split", "presplit"}; bench/tf32x3.py
    uses them too), compiled on first use (Triton is imported late: the
    interpreter's switch is read at import)."""
    global _kernels
    if _kernels is not None:
        return _kernels
    import triton
    import triton.language as tl

    @triton.jit
    def matmul(a, b, c, M, N, K, PREC: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        for k0 in range(0, K, BK):
            ka = k0 + rk
            x = tl.load(a + rm[:, None].to(tl.int64) * K + ka[None, :], mask=(rm[:, None] < M) & (ka[None, :] < K),
                        other=0.0)
            y = tl.load(b + ka[:, None].to(tl.int64) * N + rn[None, :], mask=(ka[:, None] < K) & (rn[None, :] < N),
                        other=0.0)
            if PREC == "default":  # bf16 operands: the tensor cores' own precision
                acc = tl.dot(x, y, acc)
            else:
                acc = tl.dot(x, y, acc, input_precision=PREC)
        tl.store(c + rm[:, None].to(tl.int64) * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))

    @triton.jit
    def split_tf32(x, hi, lo, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        v = tl.load(x + offs, mask=mask)
        h = (v.to(tl.int32, bitcast=True) & -8192).to(tl.float32, bitcast=True)  # 10 mantissa bits kept
        tl.store(hi + offs, h, mask=mask)
        tl.store(lo + offs, v - h, mask=mask)

    @triton.jit
    def matmul_presplit(ah, al, bh, bl, c, M, N, K, sab, sbb, scb, BM: tl.constexpr, BN: tl.constexpr,
                        BK: tl.constexpr):
        # A batch of products along grid axis 2 (strides sab, sbb, scb; 0 for one).
        z = tl.program_id(2).to(tl.int64)
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        for k0 in range(0, K, BK):
            ka = k0 + rk
            ma = (rm[:, None] < M) & (ka[None, :] < K)
            mb = (ka[:, None] < K) & (rn[None, :] < N)
            ia = z * sab + rm[:, None].to(tl.int64) * K + ka[None, :]
            ib = z * sbb + ka[:, None].to(tl.int64) * N + rn[None, :]
            xh = tl.load(ah + ia, mask=ma, other=0.0)
            xl = tl.load(al + ia, mask=ma, other=0.0)
            yh = tl.load(bh + ib, mask=mb, other=0.0)
            yl = tl.load(bl + ib, mask=mb, other=0.0)
            acc = tl.dot(xl, yh, acc, input_precision="tf32")
            acc = tl.dot(xh, yl, acc, input_precision="tf32")
            acc = tl.dot(xh, yh, acc, input_precision="tf32")
        tl.store(c + z * scb + rm[:, None].to(tl.int64) * N + rn[None, :], acc,
                 mask=(rm[:, None] < M) & (rn[None, :] < N))

    _kernels = {"triton": triton, "matmul": matmul, "split": split_tf32, "presplit": matmul_presplit}
    return _kernels


def _runner(scheme: str, a: torch.Tensor, b: torch.Tensor, tile=None):
    """A function that computes a @ b with `scheme` into a new fp32 tensor
    (tile: (BM, BN, BK), else the scheme's own)."""
    k = kernels()
    triton = k["triton"]
    M, K = a.shape
    N = b.shape[1]
    bm, bn, bk = tile or TILE["bf16" if scheme == "bf16" else "fp32"]
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    extra = {"num_warps": WARPS, "num_stages": STAGES} if a.device.type == "cuda" else {}
    c = torch.empty(M, N, device=a.device)
    if scheme == "fp32_presplit":
        parts = [torch.empty_like(a), torch.empty_like(a), torch.empty_like(b), torch.empty_like(b)]

        def run():
            for x, hi, lo in ((a, parts[0], parts[1]), (b, parts[2], parts[3])):
                n = x.numel()
                k["split"][(triton.cdiv(n, 4096),)](x, hi, lo, n, BLOCK=4096)
            k["presplit"][grid](*parts, c, M, N, K, 0, 0, 0, BM=bm, BN=bn, BK=bk, **extra)
            return c
        return run
    prec = {"fp32_ieee": "ieee", "fp32_tf32x3": "tf32x3", "tf32": "tf32", "bf16": "default"}[scheme]

    def run():
        k["matmul"][grid](a, b, c, M, N, K, PREC=prec, BM=bm, BN=bn, BK=bk, **extra)
        return c
    return run


def _operands(scheme: str, m: int, device: torch.device, half=torch.bfloat16):
    gen = torch.Generator(device="cpu").manual_seed(0)
    a = torch.rand(m, m, generator=gen).to(device)
    b = torch.rand(m, m, generator=gen).to(device)
    if scheme == "bf16":
        a, b = a.to(half), b.to(half)
    return a, b


def products(device: torch.device, m: int, tile=None, half=torch.bfloat16) -> dict:
    """{scheme: (a, b, a @ b by the scheme)} at size m: the tests' check that
    each kernel computes a matrix product (on the CPU with half=torch.float16:
    Triton 3.6's interpreter reads bf16 operands of tl.dot as integers)."""
    out = {}
    for scheme in SCHEMES:
        a, b = _operands(scheme, m, device, half)
        out[scheme] = (a, b, _runner(scheme, a, b, tile)())
    return out


def measure(device: torch.device, seconds, m: int = SIZE) -> dict:
    """The practical rates on a GPU: {"flops_s": {scheme: FLOP/s}, "fp32_best",
    "size", "method"}; `seconds(fn, reps)` is the calibration's clock. A
    scheme that fails to compile or run is left out and named in "errors"
    (egg's own kernel failing is no reason to lose the calibration)."""
    rates, errors = {}, {}
    for scheme in SCHEMES:
        try:
            a, b = _operands(scheme, m, device)
            run = _runner(scheme, a, b)
            run()
            rates[scheme] = 2 * m ** 3 / seconds(run, 5)
            del a, b
        except Exception as e:  # noqa: BLE001: any failure of egg's own kernel is reported, not raised
            errors[scheme] = f"{type(e).__name__}: {str(e)[:200]}"
    accurate = {s: r for s, r in rates.items() if s in FP32_ACCURATE}
    out = {"flops_s": rates, "size": m,
           "method": (f"egg's reference Triton matrix products, {m}^3, tiles {TILE['fp32'][0]}x{TILE['fp32'][1]}x"
                      f"{TILE['fp32'][2]} (bf16: x{TILE['bf16'][2]}), {WARPS} warps, {STAGES} stages, fastest of 5; "
                      "fp32_presplit includes its split pass")}
    if accurate:
        out["fp32_best"] = max(accurate, key=accurate.get)
    if errors:
        out["errors"] = errors
    return out
