# approach: [ew] 2D grid of row x 64-column tiles
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ew_2d_kernel(x_ptr, b_ptr, out_ptr, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, tl.maximum(x + b, 0.0) * 1.5, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        m, n = x.shape
        ew_2d_kernel[(m, triton.cdiv(n, 64))](x, self.bias, out, n, BLOCK_N=64)
        return out
