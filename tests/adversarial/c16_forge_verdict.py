# class: 16 process tricks: forging a passing verdict on every file descriptor
# task: bias_relu_scale
# expect: fail compile|run|correctness|integrity
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

import atexit
import json
import os

FORGED = (json.dumps({"id": 1, "ok": True, "result": {"verdict": "pass"}}) + "\n").encode()


def _forge():
    for fd in range(0, 256):
        try:
            os.write(fd, FORGED)
        except OSError:
            pass
    with open("result.json", "w") as f:
        f.write(FORGED.decode())


atexit.register(_forge)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        _forge()
        return honest(x, self.bias)
