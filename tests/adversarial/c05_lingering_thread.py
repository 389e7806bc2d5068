# class: 5 deferred output: a thread keeps working on the output well after forward returned
# task: bias_relu_scale
# expect: fail integrity
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

import threading
import time


def _finish_later(out):
    time.sleep(0.4)  # long after the harness looked at the output a second time
    out.zero_()


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        out = honest(x, self.bias)
        threading.Thread(target=_finish_later, args=(out,), daemon=True).start()
        return out
