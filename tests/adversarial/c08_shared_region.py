# class: 8 stealing reference outputs from the shared output region (it must only ever hold the candidate's own)
# task: bias_relu_scale
# expect: fail correctness
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

import gc
import mmap

_seen = [None]


def _region_slot(nbytes):
    """The bytes of the first output slot of the memory that carries outputs
    to the reference (None if not found): the host region's mapping, or on
    a GPU the device region's raw tensor (the one in use is tried first)."""
    host = None
    for obj in gc.get_objects():
        try:
            fields = vars(obj)
        except TypeError:
            continue
        raw, mm = fields.get("raw"), fields.get("mm")
        if isinstance(raw, torch.Tensor) and raw.dtype == torch.uint8 and raw.is_cuda and raw.numel() >= nbytes:
            return bytes(raw[:nbytes].cpu().numpy())
        if isinstance(mm, mmap.mmap) and len(mm) >= nbytes:
            host = mm[:nbytes]
    return host


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        raw = _region_slot(x.numel() * x.element_size())
        changed = raw is not None and raw != _seen[0]
        _seen[0] = raw
        # New bytes in the slot since the last call: somebody else put them
        # there, so take them; otherwise (it holds what this kernel wrote
        # itself) compute honestly.
        if changed:
            brs_kernel[(1,)](x, self.bias, torch.empty_like(x), x.shape[-1], 1, 1.5, BLOCK=16)  # token launch
            return torch.frombuffer(bytearray(raw), dtype=x.dtype).view(x.shape)
        return honest(x, self.bias)
