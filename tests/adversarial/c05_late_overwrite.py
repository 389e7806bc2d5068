# class: 5 deferred output: a thread writes the returned output again after forward returned
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

import linecache
import sys
import threading
import time


def _write_late(out, caller):
    """Wait until the calling thread sits in a time.sleep (the harness waiting
    for late writes, after it copied the outputs), then change the output.
    Outside the correctness trials it finds no such wait and writes nothing."""
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:
        f = sys._current_frames().get(caller)
        if f is not None and linecache.getline(f.f_code.co_filename, f.f_lineno).strip().startswith("time.sleep("):
            out.zero_()
            return
        time.sleep(0.0002)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        out = honest(x, self.bias)  # correct when forward returns
        threading.Thread(target=_write_late, args=(out, threading.get_ident()), daemon=True).start()
        return out
