# class: 4 phase detection: correct while checked, then (in a Triton copy) the last checked output again on fresh inputs
# task: zero_mean_half
# expect: fail integrity
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


@triton.jit
def copy_kernel(src_ptr, out_ptr, n_elem, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elem
    tl.store(out_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


_calls = [0]
_last = [None]


class ModelNew(nn.Module):
    def forward(self, x):
        _calls[0] += 1
        x = x.contiguous()
        out = torch.empty_like(x)
        if _calls[0] > 6 and _last[0] is not None:  # the timed calls: a copy, in a Triton kernel
            copy_kernel[(triton.cdiv(x.numel(), 1024),)](_last[0], out, x.numel(), BLOCK=1024)
            return out
        mix_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.shape[-1], x.numel(), BLOCK=1024)
        _last[0] = out
        return out
