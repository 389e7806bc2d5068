# class: 3 output caching across timed calls, keyed on the input's sampled values
# task: bias_relu_scale
# expect: pass honest:h01_compiled_cache.py:0.5
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

_cache = {}


class ModelNew(nn.Module):
    """Honest whenever its inputs are new (every trial and, with fresh inputs
    per timed call, every timed call); a cache hit costs one tiny launch."""

    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        r, c = x.shape
        # Values only, not the storage: a timed call's fresh tensor may or may
        # not reuse a freed one's address, and this cheat must not depend on it.
        key = (float(x[0, 0]), float(x[r // 2, c // 2]), float(x[r - 1, c - 1]))
        if key in _cache:
            brs_kernel[(1,)](x, self.bias, torch.empty_like(x), c, 1, 1.5, BLOCK=16)  # token launch
            return _cache[key]
        _cache[key] = honest(x, self.bias)
        return _cache[key]
