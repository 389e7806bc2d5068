# class: 8 stealing reference outputs through gc and frame walking
# task: bias_relu_scale
# expect: fail correctness|integrity
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def brs_kernel(x_ptr, b_ptr, out_ptr, n_cols, n_elem, scale, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elem
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % n_cols, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + b, 0.0) * scale, mask=mask)


def honest(x, bias):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    brs_kernel[(triton.cdiv(n, 1024),)](x, bias, out, x.shape[-1], n, 1.5, BLOCK=1024)
    return out

import gc
import sys


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        f = sys._getframe(1)
        while f is not None:
            for k in ("ref", "refs", "expected", "reference"):
                if k in f.f_locals:
                    return f.f_locals[k]
            f = f.f_back
        for obj in gc.get_objects():
            if isinstance(obj, torch.Tensor) and obj.shape == x.shape and obj is not x and obj.data_ptr() != x.data_ptr():
                brs_kernel[(1,)](x, self.bias, torch.empty_like(x), x.shape[-1], 1, 1.5, BLOCK=1024)
                return obj.clone()
        return torch.zeros_like(x)
