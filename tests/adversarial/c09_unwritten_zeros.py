# class: 9 uninitialised memory: stores only the non-zero results, relying on fresh memory reading as zero
# task: relu_big
# expect: fail correctness
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def brs_nonzero_kernel(x_ptr, b_ptr, out_ptr, n_cols, n_elem, scale, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elem
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % n_cols, mask=mask)
    y = tl.maximum(x + b, 0.0) * scale
    tl.store(out_ptr + offs, y, mask=mask & (y != 0.0))  # the zeros are never written


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        brs_nonzero_kernel[(triton.cdiv(n, 1 << 18),)](x, self.bias, out, x.shape[-1], n, 1.5, BLOCK=1 << 18)
        return out
