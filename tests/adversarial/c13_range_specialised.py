# class: 13 fixture specialisation: assumes the task's input range (x in [0, 1.5]), wrong outside it
# task: bias_relu_scale
# expect: fail correctness
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def brs_clamped_kernel(x_ptr, b_ptr, out_ptr, n_cols, n_elem, scale, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elem
    x = tl.load(x_ptr + offs, mask=mask)
    x = tl.minimum(tl.maximum(x, 0.0), 1.5)  # a no-op on torch.rand() data, and on the timed calls' rescaling of it
    b = tl.load(b_ptr + offs % n_cols, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + b, 0.0) * scale, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        brs_clamped_kernel[(triton.cdiv(n, 1024),)](x, self.bias, out, x.shape[-1], n, 1.5, BLOCK=1024)
        return out
