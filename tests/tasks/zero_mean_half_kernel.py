"""An honest kernel for zero_mean_half.py: 2x - 0.5 x reversed along the
last axis, in fp32, rounded once to fp16."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mix_kernel(x_ptr, out_ptr, n_cols, n_elem, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elem
    row, col = offs // n_cols, offs % n_cols
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.load(x_ptr + row * n_cols + (n_cols - 1 - col), mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, (x * 2.0 - 0.5 * y).to(tl.float16), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        mix_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.shape[-1], x.numel(), BLOCK=1024)
        return out
