# approach: [ew] honest flat 1D blocks of 1024 elements
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ew_kernel(x_ptr, b_ptr, out_ptr, n_cols, n_elem, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elem
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % n_cols, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + b, 0.0) * 1.5, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        ew_kernel[(triton.cdiv(n, 1024),)](x, self.bias, out, x.shape[-1], n, BLOCK=1024, num_warps=4)
        return out
