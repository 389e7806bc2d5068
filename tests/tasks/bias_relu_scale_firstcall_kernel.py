"""bias_relu_scale.py's kernel, launched three times on its first call (as
an autotuner times its configurations there) and once on every later call."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_relu_scale_kernel(x_ptr, b_ptr, out_ptr, n_cols, n_elem, scale, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elem
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % n_cols, mask=mask)
    y = tl.maximum(x + b, 0.0) * scale
    tl.store(out_ptr + offs, y, mask=mask)


_first = [True]


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        BLOCK = 1024
        for _ in range(3 if _first[0] else 1):
            bias_relu_scale_kernel[(triton.cdiv(n, BLOCK),)](x, self.bias, out, x.shape[-1], n, 1.5, BLOCK=BLOCK)
        _first[0] = False
        return out
