"""practical.py: the practical bound: what egg's own Triton matrix products reach on this device.

The roofline's peaks (roofline.calibrate) are the hardware's: cuBLAS on the
tensor cores, FMA chains on the CUDA cores. What a Triton kernel reaches is
less, by a margin that depends on the scheme: an fp32-accurate product has
no tensor-core pass of its own (on an H200, 4096^3, a plain fp32 dot ran at
41 TFLOP/s and the compensated TF32 schemes at 33 to 36). So the calibration
also times egg's own reference kernels, each scheme at one shape, beside
cuBLAS at the same shape and layout, and the prompts and reports state that
figure: what a Triton GEMM of this kind can be expected to reach here.

The schemes (the names the verdicts and prompts use):
- fp32_ieee: fp32 operands on the FMA units (tl.dot input_precision "ieee");
- fp32_tf32x3: Triton's split of each tile into TF32 parts, three tensor-core
  passes inside the K loop;
- fp32_presplit: each operand split once, by a pass of its own (timed with
  the product), into a TF32 high part (the low 13 mantissa bits cleared) and
  the exact remainder, then three plain TF32 dots per tile;
- tf32: one TF32 pass (not fp32-accurate; the rate --precision tf32 allows);
- bf16: bf16 operands, fp32 accumulation, a bf16 result.

The product is C = A @ W^T with W stored (N, K), as a Linear layer holds its
weight: both operands K-contiguous, the layout Hopper's tensor-core
instructions read 32-bit operands in. Each scheme is tuned by hand over a
few tilings (CONFIGS) and two kernel forms, loads through pointers
("pointer") and through tensor-memory descriptors ("tma", Hopper and
later); the fastest is the scheme's rate, and "kernels" names it. cuBLAS
(torch.matmul, TF32 allowed for tf32) at the same shape is "cublas_flops_s":
a Triton rate far below it is no bound, and the C side says so
(roofline.c, eval_practical_is_bound).

Only on a GPU: under Triton's interpreter the figures would say nothing.
`products(device, m)` runs every scheme once at size m and returns the
results, for the tests to check against torch on the CPU.
"""
from __future__ import annotations

import torch

SIZE = 4096                     # M = N = K of the timed product
SCHEMES = ("fp32_ieee", "fp32_tf32x3", "fp32_presplit", "tf32", "bf16")
FP32_ACCURATE = ("fp32_ieee", "fp32_tf32x3", "fp32_presplit")
PREC = {"fp32_ieee": "ieee", "fp32_tf32x3": "tf32x3", "fp32_presplit": "tf32", "tf32": "tf32", "bf16": "default"}
# The tilings tried per scheme: (BM, BN, BK, warps, stages). 16-bit operands
# take twice the K depth in the same shared memory.
_T32 = [(128, 256, 32, 8, 3), (256, 128, 32, 8, 3), (128, 128, 32, 8, 4), (128, 128, 32, 4, 4), (128, 256, 32, 8, 4)]
CONFIGS = {
    "fp32_ieee": [(128, 128, 32, 8, 3), (64, 128, 32, 4, 4), (128, 64, 32, 4, 3)],
    "fp32_tf32x3": _T32[:3],
    "fp32_presplit": [(128, 128, 32, 8, 3), (128, 256, 32, 8, 3)],
    "tf32": _T32,
    "bf16": [(128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (128, 128, 64, 8, 4), (128, 128, 64, 4, 4),
             (128, 256, 64, 8, 4), (256, 128, 64, 8, 4), (128, 128, 128, 8, 3), (256, 128, 64, 4, 3)],
}
GROUP = 8                       # tile rows per group of programs (L2 reuse)

_kernels = None
tile_of = None                  # the programs' order (kernels())
presplit_dots = None            # one tile of the pre-split scheme (kernels())


def kernels() -> dict:
    """The kernels ({"triton", "matmul", "matmul_tma", "split", "presplit", "presplit_wt"};
    bench/tf32x3.py uses them too), compiled on first use (Triton is imported
    late: the interpreter's switch is read at import)."""
    global _kernels, tile_of, presplit_dots
    if _kernels is not None:
        return _kernels
    import triton
    import triton.language as tl

    # Module globals (tile_of, presplit_dots): Triton finds the functions a
    # kernel calls among its module's globals, not in an enclosing function.
    @triton.jit
    def tile_of(M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP: tl.constexpr):
        # Programs in groups of GROUP tile rows, column by column within a
        # group, so that a group's operands stay in L2.
        pid = tl.program_id(0)
        rows, cols = tl.cdiv(M, BM), tl.cdiv(N, BN)
        first = (pid // (GROUP * cols)) * GROUP
        height = tl.minimum(rows - first, GROUP)
        return first + (pid % (GROUP * cols)) % height, (pid % (GROUP * cols)) // height

    @triton.jit
    def matmul(a, w, c, M, N, K, swn, swk, PREC: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr, GROUP: tl.constexpr):
        # C (M, N) = A (M, K) @ W^T; A row-major, W's element (n, k) at
        # n * swn + k * swk: (N, K) row-major, or stored (K, N).
        pm, pn = tile_of(M, N, BM, BN, GROUP)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        pa = a + (rm % M)[:, None].to(tl.int64) * K + rk[None, :]
        pw = w + (rn % N)[None, :].to(tl.int64) * swn + rk[:, None] * swk
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        for k0 in range(0, K, BK):
            x = tl.load(pa, mask=rk[None, :] < K - k0, other=0.0)
            y = tl.load(pw, mask=rk[:, None] < K - k0, other=0.0)
            if PREC == "default":  # 16-bit operands: the tensor cores' own precision
                acc = tl.dot(x, y, acc)
            else:
                acc = tl.dot(x, y, acc, input_precision=PREC)
            pa += BK
            pw += BK * swk
        tl.store(c + rm[:, None].to(tl.int64) * N + rn[None, :], acc.to(c.dtype.element_ty),
                 mask=(rm[:, None] < M) & (rn[None, :] < N))

    @triton.jit
    def matmul_tma(a_d, w_d, c_d, M, N, K, PREC: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr, GROUP: tl.constexpr):
        # The same product through tensor-memory descriptors (host-made:
        # a_d blocks [BM, BK], w_d [BN, BK], c_d [BM, BN]).
        pm, pn = tile_of(M, N, BM, BN, GROUP)
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        for k0 in range(0, K, BK):
            x = a_d.load([pm * BM, k0])
            y = w_d.load([pn * BN, k0])
            if PREC == "default":
                acc = tl.dot(x, y.T, acc)
            else:
                acc = tl.dot(x, y.T, acc, input_precision=PREC)
        c_d.store([pm * BM, pn * BN], acc.to(c_d.dtype))

    @triton.jit
    def presplit_dots(xh, xl, yh, yl, acc):
        # One tile of the compensated product: the small terms first.
        acc = tl.dot(xl, yh, acc, input_precision="tf32")
        acc = tl.dot(xh, yl, acc, input_precision="tf32")
        return tl.dot(xh, yh, acc, input_precision="tf32")

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
        # B (K, N) row-major; a batch of products along grid axis 2 (strides
        # sab, sbb, scb; 0 for one).
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
            acc = presplit_dots(xh, xl, yh, yl, acc)
        tl.store(c + z * scb + rm[:, None].to(tl.int64) * N + rn[None, :], acc,
                 mask=(rm[:, None] < M) & (rn[None, :] < N))

    @triton.jit
    def matmul_presplit_wt(ah, al, wh, wl, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                           GROUP: tl.constexpr):
        # The pre-split scheme on C = A @ W^T, W (N, K): K-contiguous parts.
        pm, pn = tile_of(M, N, BM, BN, GROUP)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        ia = (rm % M)[:, None].to(tl.int64) * K + rk[None, :]
        iw = (rn % N)[None, :].to(tl.int64) * K + rk[:, None]
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        for k0 in range(0, K, BK):
            ma = rk[None, :] < K - k0
            mw = rk[:, None] < K - k0
            xh = tl.load(ah + ia, mask=ma, other=0.0)
            xl = tl.load(al + ia, mask=ma, other=0.0)
            yh = tl.load(wh + iw, mask=mw, other=0.0)
            yl = tl.load(wl + iw, mask=mw, other=0.0)
            acc = presplit_dots(xh, xl, yh, yl, acc)
            ia += BK
            iw += BK
        tl.store(c + rm[:, None].to(tl.int64) * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))

    _kernels = {"triton": triton, "matmul": matmul, "matmul_tma": matmul_tma, "split": split_tf32,
                "presplit": matmul_presplit, "presplit_wt": matmul_presplit_wt}
    return _kernels


def _runner(scheme: str, form: str, config, a: torch.Tensor, w: torch.Tensor):
    """A function that computes a @ w.T by `scheme` in kernel form `form`
    ("pointer"; "pointer, W (K, N)": W stored transposed, N contiguous,
    which the FMA units' fp32 product reads faster; "tma") with tiling
    `config` (BM, BN, BK, warps, stages) into a new tensor (fp32; bf16 for
    bf16)."""
    k = kernels()
    triton = k["triton"]
    M, K = a.shape
    N = w.shape[0]
    bm, bn, bk, warps, stages = config
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    extra = {"num_warps": warps, "num_stages": stages} if a.device.type == "cuda" else {}
    c = torch.empty(M, N, device=a.device, dtype=a.dtype if scheme == "bf16" else torch.float32)
    if scheme == "fp32_presplit":
        if form != "pointer":
            raise ValueError("the pre-split scheme has a pointer kernel only")
        parts = [torch.empty_like(a), torch.empty_like(a), torch.empty_like(w), torch.empty_like(w)]

        def run():
            for x, hi, lo in ((a, parts[0], parts[1]), (w, parts[2], parts[3])):
                n = x.numel()
                k["split"][(triton.cdiv(n, 4096),)](x, hi, lo, n, BLOCK=4096)
            k["presplit_wt"][grid](*parts, c, M, N, K, BM=bm, BN=bn, BK=bk, GROUP=GROUP, **extra)
            return c
        return run
    consts = dict(PREC=PREC[scheme], BM=bm, BN=bn, BK=bk, GROUP=GROUP, **extra)
    if form == "tma":
        from triton.tools.tensor_descriptor import TensorDescriptor
        descs = (TensorDescriptor.from_tensor(a, [bm, bk]), TensorDescriptor.from_tensor(w, [bn, bk]),
                 TensorDescriptor.from_tensor(c, [bm, bn]))

        def run():
            k["matmul_tma"][grid](*descs, M, N, K, **consts)
            return c
        return run

    if form == KN:
        wt = w.t().contiguous()  # the stored layout, made once: not timed

        def run():
            k["matmul"][grid](a, wt, c, M, N, K, 1, N, **consts)
            return c
        return run

    def run():
        k["matmul"][grid](a, w, c, M, N, K, K, 1, **consts)
        return c
    return run


KN = "pointer, W (K, N)"


def _forms(device: torch.device, scheme: str):
    """The kernel forms worth trying: tensor-memory descriptors from Hopper
    (9.0) on; W stored (K, N) for the FMA units' product (tensor cores read
    32-bit operands K-contiguous)."""
    forms = ["pointer"]
    if scheme == "fp32_ieee":
        forms.append(KN)
    if device.type == "cuda" and torch.cuda.get_device_capability(device)[0] >= 9 and scheme != "fp32_presplit":
        forms.append("tma")
    return tuple(forms)


def _operands(scheme: str, m: int, device: torch.device, half=torch.bfloat16):
    gen = torch.Generator(device="cpu").manual_seed(0)
    a = torch.rand(m, m, generator=gen).to(device)
    w = torch.rand(m, m, generator=gen).to(device)
    if scheme == "bf16":
        a, w = a.to(half), w.to(half)
    return a, w


def products(device: torch.device, m: int, config=None, half=torch.bfloat16, form: str = "pointer") -> dict:
    """{scheme: (a, w, a @ w.T by the scheme)} at size m with one tiling
    (default: each scheme's first): the tests' check that each kernel
    computes the product (on the CPU with half=torch.float16: Triton 3.6's
    interpreter reads bf16 operands of tl.dot as integers)."""
    out = {}
    for scheme in SCHEMES:
        if form != "pointer" and scheme == "fp32_presplit":
            continue
        a, w = _operands(scheme, m, device, half)
        out[scheme] = (a, w, _runner(scheme, form, config or CONFIGS[scheme][0], a, w)())
    return out


def _cublas(scheme: str, a: torch.Tensor, w: torch.Tensor, seconds, m: int):
    """cuBLAS's rate for the same product (TF32 allowed for tf32 only)."""
    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = scheme == "tf32"
    try:
        torch.matmul(a, w.t())
        return 2 * m ** 3 / seconds(lambda: torch.matmul(a, w.t()), 5)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old


def _name(form: str, config) -> str:
    bm, bn, bk, warps, stages = config
    return f"{form} {bm}x{bn}x{bk}, {warps} warps, {stages} stages"


def measure(device: torch.device, seconds, m: int = SIZE) -> dict:
    """The practical rates on a GPU: {"flops_s": {scheme: FLOP/s}, "kernels":
    {scheme: the fastest kernel's form and tiling}, "cublas_flops_s": {"tf32",
    "bf16": cuBLAS at the same shape}, "fp32_best", "size", "method"};
    `seconds(fn, reps)` is the calibration's clock. Each scheme tries each
    form and tiling; one that fails to compile or run is passed over, and a
    scheme none of whose kernels ran is left out and named in "errors"
    (egg's own kernel failing is no reason to lose the calibration)."""
    rates, names, errors, cublas = {}, {}, {}, {}
    for scheme in SCHEMES:
        try:
            a, w = _operands(scheme, m, device)
        except Exception as e:  # noqa: BLE001: no memory for this scheme's operands costs that scheme only
            errors[scheme] = f"operands: {type(e).__name__}: {str(e)[:200]}"
            continue
        last = None
        for form in _forms(device, scheme):
            for config in CONFIGS[scheme]:
                try:
                    run = _runner(scheme, form, config, a, w)
                    run()
                    rate = 2 * m ** 3 / seconds(run, 5)
                except Exception as e:  # noqa: BLE001: any failure of egg's own kernel is reported, not raised
                    last = f"{_name(form, config)}: {type(e).__name__}: {str(e)[:200]}"
                    continue
                if rate > rates.get(scheme, 0):
                    rates[scheme], names[scheme] = rate, _name(form, config)
        if scheme not in rates:
            errors[scheme] = last or "no kernel form for this device"
        if scheme in ("tf32", "bf16") and device.type == "cuda":
            try:
                cublas[scheme] = _cublas(scheme, a, w, seconds, m)
            except Exception as e:  # noqa: BLE001: without cuBLAS's figure the scheme is stated as no bound
                errors[f"cublas_{scheme}"] = f"{type(e).__name__}: {str(e)[:200]}"
        del a, w
    accurate = {s: r for s, r in rates.items() if s in FP32_ACCURATE}
    out = {"flops_s": rates, "kernels": names, "cublas_flops_s": cublas, "size": m,
           "method": (f"egg's reference Triton matrix products A @ W^T, {m}^3, W stored (N, K) as a Linear "
                      "layer's weight; per scheme the fastest of its tilings and kernel forms (\"kernels\"), "
                      "each the fastest of 5; fp32_presplit includes its split pass; cuBLAS (torch.matmul) "
                      "at the same shape beside tf32 and bf16")}
    if accurate:
        out["fp32_best"] = max(accurate, key=accurate.get)
    if errors:
        out["errors"] = errors
    return out
