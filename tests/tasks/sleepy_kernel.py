# A kernel for argmax.py whose forward sleeps for a minute: the signal test
# interrupts egg while this candidate is inside a trial.
import time

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def argmax_rows(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=float("-inf"))
    tl.store(out_ptr + row, tl.argmax(x, axis=0).to(tl.int64))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        time.sleep(60)
        rows, cols = x.shape
        out = torch.empty(rows, device=x.device, dtype=torch.int64)
        argmax_rows[(rows,)](x, out, cols, BLOCK=triton.next_power_of_2(cols))
        return out
