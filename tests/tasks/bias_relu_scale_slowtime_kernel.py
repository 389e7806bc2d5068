# A correct kernel for bias_relu_scale.py whose forward sleeps 1 s once the five
# correctness trials are over: its timing, not its correctness, runs out of time.
import time
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def brs(x_ptr, b_ptr, out_ptr, n_cols, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    b = tl.load(b_ptr + offs % n_cols, mask=m)
    tl.store(out_ptr + offs, tl.maximum(x + b, 0.0) * 1.5, mask=m)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls > 6:
            time.sleep(1.0)  # slow once the trials are over
        out = torch.empty_like(x)
        brs[(triton.cdiv(x.numel(), 1024),)](x, self.bias, out, x.shape[-1], x.numel(), BLOCK=1024)
        return out
