"""roofline.py: the least work a task needs, and what the device can do.

`count(model, inputs)` runs one forward of the reference under PyTorch's
FLOP counter and returns the floating-point operations it counted
(matrix products, convolutions, attention: the operations with a FLOP
formula; elementwise work is not counted, which can only make the bound
lower, never higher; a causal attention counts only the pairs its mask
keeps; int8 matrix products are counted apart, for the int8 peak) and the bytes one forward must move at least: each
input, parameter, buffer and output once.

`calibrate(device)` measures the device's peaks with short kernels, in the
calibration process: memory bandwidth (the fastest of a torch copy, a Triton
copy and a Triton read of 2 GiB), FP32 FMA throughput
(a Triton kernel of independent multiply-add chains) and, on a GPU, the
tensor-core rates of TF32 and BF16 matrix products (cuBLAS, 8192^3) and of
int8 ones (torch._int_mm), and what egg's own Triton matrix products reach
(practical.py: the practical bound). egg
caches the result per device and driver, and derives the roofline bound
max(FLOPs / peak, bytes / bandwidth) for the precision in force.
"""
from __future__ import annotations

import time

import torch

from ..taskload import flatten

HALF = (torch.float16, torch.bfloat16)


def _tensor_bytes(tensors) -> int:
    """Bytes of the distinct storages among `tensors` (a view shares its base's)."""
    seen, total = set(), 0
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            continue
        try:
            key = (t.untyped_storage().data_ptr(), t.device.type)
            size = t.untyped_storage().nbytes()
        except (RuntimeError, NotImplementedError):
            key, size = id(t), t.numel() * t.element_size()
        if key in seen:
            continue
        seen.add(key)
        total += size
    return total


def _causal_pairs(sq: int, sk: int) -> int:
    """(query, key) pairs a causal mask keeps: query i sees keys 0..i (PyTorch's
    is_causal, aligned to the top left)."""
    if sq <= sk:
        return sq * (sq + 1) // 2
    return sk * (sk + 1) // 2 + (sq - sk) * sk


def _attention_formula(causal_at: int):
    """A FLOP formula for a fused attention op whose is_causal argument sits at
    position causal_at: PyTorch's own counts every (query, key) pair, so a
    causal attention would get twice the work it needs and a bound twice too
    high (a kernel at 50% of the real bound would read as 100%)."""
    from torch.utils.flop_counter import sdpa_flop_count

    def formula(*args, out_val=None, **kwargs) -> int:
        q, k, v = args[0], args[1], args[2]
        full = sdpa_flop_count(tuple(q.shape), tuple(k.shape), tuple(v.shape))
        causal = kwargs.get("is_causal", args[causal_at] if len(args) > causal_at else False)
        if not causal:
            return full
        sq, sk = q.shape[-2], k.shape[-2]
        return full * _causal_pairs(sq, sk) // max(1, sq * sk)

    formula._get_raw = True
    return formula


def _int_mm_formula(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    """int8 x int8 -> int32 matrix product: 2 M K N integer operations."""
    return 2 * a_shape[0] * a_shape[1] * b_shape[1]


def _formulas() -> dict:
    """Formulas PyTorch's counter lacks or gets wrong for a least-work bound:
    causal attention (per fused op, by where its is_causal argument sits;
    the CPU's flash op is not counted at all otherwise) and int8 matmul."""
    aten = torch.ops.aten
    table = {"_scaled_dot_product_flash_attention": 4, "_scaled_dot_product_efficient_attention": 6,
             "_scaled_dot_product_cudnn_attention": 6, "_scaled_dot_product_flash_attention_for_cpu": 4}
    out = {getattr(aten, name): _attention_formula(at) for name, at in table.items() if hasattr(aten, name)}
    if hasattr(aten, "_int_mm"):
        out[aten._int_mm] = _int_mm_formula
    return out


def count(model, inputs: list) -> tuple:
    """(outputs, work) for one forward; work: flops (every counted operation,
    integer ones included), int8_ops (those of int8 matrix products, which
    run at the int8 peak), flops_by_op, bytes, half (whether the task
    computes in fp16/bf16)."""
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False, custom_mapping=_formulas())
    with torch.no_grad(), counter:
        outs = model(*inputs)
    flat, _ = flatten(outs)
    by_op = {str(op).split(".")[-2] if str(op).count(".") >= 2 else str(op): int(n)
             for op, n in counter.get_flop_counts().get("Global", {}).items()}
    params = list(model.parameters()) + list(model.buffers())
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    floats = [t for t in tensors + params if t.is_floating_point()]
    work = {"flops": int(counter.get_total_flops()), "int8_ops": sum(n for op, n in by_op.items() if op.endswith("_int_mm")), "flops_by_op": by_op,
            "bytes": _tensor_bytes(tensors) + _tensor_bytes(params) + _tensor_bytes(flat),
            "half": bool(floats) and all(t.dtype in HALF for t in floats)}
    return outs, work


def _stream_kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def read_all(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        # One block per program, one number written per program: the read
        # bandwidth with (almost) nothing written.
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(out_ptr + tl.program_id(0), tl.sum(x, axis=0))

    @triton.jit
    def copy_all(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    return read_all, copy_all


def _fma_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def fma_chains(out_ptr, n_iter, BLOCK: tl.constexpr):
        # Four independent multiply-add chains per element: the FMA units'
        # throughput, not their latency, bounds the loop.
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        a = offs.to(tl.float32) * 1e-9
        b = a + 0.25
        c = a + 0.5
        d = a + 0.75
        for _ in range(n_iter):
            a = a * 0.9999 + 0.0001
            b = b * 0.9999 + 0.0001
            c = c * 0.9999 + 0.0001
            d = d * 0.9999 + 0.0001
        tl.store(out_ptr + offs, a + b + c + d)

    return fma_chains


class _Clock:
    def __init__(self, device: torch.device):
        self.gpu = device.type == "cuda"

    def seconds(self, fn, reps: int) -> float:
        """The fastest of `reps` runs of fn, in seconds."""
        best = float("inf")
        for _ in range(reps):
            if self.gpu:
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                torch.cuda.synchronize()
                start.record()
                fn()
                end.record()
                end.synchronize()
                best = min(best, start.elapsed_time(end) / 1e3)
            else:
                t0 = time.perf_counter()
                fn()
                best = min(best, time.perf_counter() - t0)
        return best


def calibrate(device: torch.device) -> dict:
    """The device's measured peaks (FLOP/s and bytes/s) and how each was measured."""
    gpu = device.type == "cuda"
    clock = _Clock(device)
    out: dict = {"device": str(device), "method": {}}

    # Memory bandwidth: a copy reads and writes every byte once; the bound
    # is the fastest of torch's copy, a Triton copy and a Triton read (HBM
    # reads alone can run faster), so that a kernel cannot beat it by much.
    n = (1 << 29) if gpu else (1 << 24)  # 2 GiB of fp32 on a GPU, 64 MiB on the CPU
    reps = 10 if gpu else 3
    src = torch.ones(n, device=device)
    dst = torch.empty_like(src)
    dst.copy_(src)
    sec = clock.seconds(lambda: dst.copy_(src), reps)
    rates = {"torch copy": 2 * n * 4 / sec}
    if gpu:
        read_all, copy_all = _stream_kernels()
        block = 8192
        programs = (n + block - 1) // block
        sums = torch.empty(programs, device=device)
        read_all[(programs,)](src, sums, n, BLOCK=block, num_warps=8)
        rates["Triton read"] = n * 4 / clock.seconds(lambda: read_all[(programs,)](src, sums, n, BLOCK=block, num_warps=8), reps)
        copy_all[(programs,)](src, dst, n, BLOCK=block, num_warps=8)
        rates["Triton copy"] = 2 * n * 4 / clock.seconds(lambda: copy_all[(programs,)](src, dst, n, BLOCK=block, num_warps=8), reps)
        del sums
    out["bandwidth_rates"] = rates
    out["copy_bytes_s"] = rates["torch copy"]
    out["bandwidth_bytes_s"] = max(rates.values())
    out["method"]["bandwidth"] = (f"fastest of {', '.join(rates)} over {n * 4 >> 20} MiB "
                                  f"(each the best of {reps}): {max(rates, key=rates.get)}")
    del src, dst

    # FP32 FMA: a Triton kernel of independent multiply-add chains.
    if gpu:
        props = torch.cuda.get_device_properties(device)
        block, iters = 1024, 4096
        programs = props.multi_processor_count * 16
        buf = torch.empty(programs * block, device=device)
        k = _fma_kernel()
        k[(programs,)](buf, iters, BLOCK=block, num_warps=4)
        sec = clock.seconds(lambda: k[(programs,)](buf, iters, BLOCK=block, num_warps=4), 5)
        out["fp32_flops_s"] = 2 * 4 * iters * programs * block / sec
        out["method"]["fp32"] = f"Triton FMA chains, {programs} programs x {block} x {iters} x 4, fastest of 5"
        # Tensor cores: cuBLAS matrix products with TF32 allowed, and in BF16.
        m = 8192
        for name, dtype, tf32 in (("tf32", torch.float32, True), ("bf16", torch.bfloat16, False)):
            a = torch.randn(m, m, device=device, dtype=dtype)
            b = torch.randn(m, m, device=device, dtype=dtype)
            old = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = tf32
            try:
                torch.mm(a, b)
                sec = clock.seconds(lambda: torch.mm(a, b), 5)
            finally:
                torch.backends.cuda.matmul.allow_tf32 = old
            out[f"{name}_flops_s"] = 2 * m ** 3 / sec
            out["method"][name] = f"cuBLAS {m}^3 matrix product, fastest of 5"
            del a, b
        # int8 tensor cores: torch._int_mm (int8 x int8 -> int32), with the
        # second matrix row-major and column-major: cuBLASLt's fast int8
        # kernels want the latter (on the H200 the former ran at 126 TOP/s,
        # below a Triton kernel's 318, which made a bound no bound).
        a = torch.randint(-127, 128, (m, m), device=device, dtype=torch.int8)
        b = torch.randint(-127, 128, (m, m), device=device, dtype=torch.int8)
        rates = {}
        for layout, bb in (("row-major", b), ("column-major", b.t().contiguous().t())):
            try:
                torch._int_mm(a, bb)
                rates[layout] = 2 * m ** 3 / clock.seconds(lambda: torch._int_mm(a, bb), 5)
            except RuntimeError:
                continue
        if rates:
            best = max(rates, key=rates.get)
            out["int8_ops_s"] = rates[best]
            out["method"]["int8"] = (f"torch._int_mm {m}^3 int8 matrix product, second matrix "
                                     f"{' or '.join(rates)}, fastest of 5 each: {best}")
        del a, b
        # The practical bound: egg's own Triton matrix products (practical.py).
        from . import practical
        try:
            out["practical"] = practical.measure(device, clock.seconds)
        except Exception as e:  # noqa: BLE001: egg's own kernel failing must not cost the calibration
            out["practical"] = {"flops_s": {}, "errors": {"all": f"{type(e).__name__}: {str(e)[:200]}"}}
        out["method"]["practical"] = out["practical"].get("method", "failed")
    else:
        # No tensor cores, and Triton is interpreted: a float32 matrix
        # product is the fastest arithmetic the CPU does; it stands for all.
        m = 1024
        a, b = torch.randn(m, m), torch.randn(m, m)
        torch.mm(a, b)
        sec = clock.seconds(lambda: torch.mm(a, b), 3)
        out["fp32_flops_s"] = out["tf32_flops_s"] = out["bf16_flops_s"] = out["int8_ops_s"] = 2 * m ** 3 / sec
        out["method"]["fp32"] = f"torch {m}^3 float32 matrix product, fastest of 3 (stands for every precision)"
    return out


def calibration_process(job: dict) -> dict:
    """Entry point of the calibration process: only the job's GPU visible,
    its own caches in the scratch folder."""
    import os

    from .. import sandbox
    from ..usage import note_start

    note_start()
    sandbox.scrub_environment()
    sandbox.only_gpu(job)
    os.environ.update(TRITON_CACHE_DIR=os.path.join(job["scratch"], "triton"), TMPDIR=job["scratch"])
    device = torch.device(job["device"])
    if device.type == "cpu":
        torch.set_num_threads(job["cpu_threads"])
    return calibrate(device)
