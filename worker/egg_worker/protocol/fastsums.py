"""fastsums.py: a timed output's three sums in one read, as a Triton kernel.

checksums.checksum sums an output three ways (plain, weighted, absolute).
In PyTorch that is three reductions and a product written to memory: about
six reads' worth of traffic, 12 ms for a 6.4 GB output on an H200, taken
after each of a timed loop's 150-odd calls. This kernel reads the output
once and computes the weights from the element's position as
checksums._weights_for does (so no weight tensor is read either).

Its rounding is the one checksums.ROUNDING allows for: each row of ROW
elements is summed in float32 (in any order, which is within the same
bound as the sequential sum), the row sums in float64. So a summary made
here and one made by the PyTorch path (the reference's) compare within
checksum_close's bounds.

Used only in the candidate's process on a GPU, for large outputs (where the
saving outweighs compiling the kernel): that process has imported Triton
for the candidate's own kernels. Like every part of the candidate's
process, it can be tampered with; a summary is only ever believed when the
trusted reference's own summary of the same call agrees.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from .sumlayout import CPU_CHUNK, ROW

ROWS = 32  # rows of ROW elements per program
# The weight of element i: ((i mod CPU_CHUNK) * 2654435761 mod 2^20) / 2^20 + 0.5.
# Only the low 20 bits of the product matter, so only the multiplier's low
# 20 bits: 2654435761 mod 2^20 = 489905, which keeps the product in int64.
HASH_LOW = 2654435761 & 0xFFFFF


@triton.jit
def _three_sums(x_ptr, out_ptr, n, CHUNK: tl.constexpr, MULT: tl.constexpr,
                ROWS: tl.constexpr, ROW: tl.constexpr):
    pid = tl.program_id(0)
    base = pid.to(tl.int64) * (ROWS * ROW)
    offs = base + tl.arange(0, ROWS)[:, None] * ROW + tl.arange(0, ROW)[None, :]
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    k = ((offs % CHUNK) * MULT) & 0xFFFFF
    w = k.to(tl.float32) * (1.0 / 1048576.0) + 0.5
    plain = tl.sum(x, axis=1).to(tl.float64)
    weighted = tl.sum(x * w, axis=1).to(tl.float64)
    absolute = tl.sum(tl.abs(x), axis=1).to(tl.float64)
    tl.store(out_ptr + pid * 3, tl.sum(plain, axis=0))
    tl.store(out_ptr + pid * 3 + 1, tl.sum(weighted, axis=0))
    tl.store(out_ptr + pid * 3 + 2, tl.sum(absolute, axis=0))


def three_sums(flat: torch.Tensor) -> torch.Tensor:
    """[sum, weighted sum, sum of |x|] of a contiguous flat float32, float16
    or bfloat16 tensor, in float64 on its device."""
    n = flat.numel()
    programs = triton.cdiv(n, ROWS * ROW)
    partial = torch.empty((programs, 3), dtype=torch.float64, device=flat.device)
    _three_sums[(programs,)](flat, partial, n, CHUNK=CPU_CHUNK, MULT=HASH_LOW, ROWS=ROWS, ROW=ROW)
    return partial.sum(0)
