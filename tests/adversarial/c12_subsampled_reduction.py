# class: 12 subsampled reduction (sums every other column, doubles it)
# task: row_sum
# expect: fail correctness
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def half_sum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK) * 2
    v = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, 2.0 * tl.sum(v, axis=0))


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty(x.shape[0], device=x.device, dtype=x.dtype)
        half_sum_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=128)
        return out
