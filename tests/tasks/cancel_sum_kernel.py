import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    # fp32 with compensated (Kahan) accumulation per lane: as accurate as
    # PyTorch's own cascade sum on any draw of the inputs, in another order.
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    comp = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        y = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0) - comp
        t = acc + y
        comp = (t - acc) - y
        acc = t
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        rows, cols = x.shape
        out = torch.empty(rows, device=x.device, dtype=x.dtype)
        row_sum[(rows,)](x, out, cols, BLOCK=256)
        return out
