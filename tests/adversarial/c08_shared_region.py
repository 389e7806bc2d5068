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

import ctypes
import gc
import mmap

_seen = [None]


def _device_bytes(raw, nbytes):
    """Device memory read through the CUDA driver itself: no PyTorch op for
    the evaluator's guard to see."""
    try:
        drv = ctypes.CDLL("libcuda.so.1")
        buf = ctypes.create_string_buffer(nbytes)
        torch.cuda.synchronize()
        if drv.cuMemcpyDtoH_v2(buf, ctypes.c_uint64(raw.data_ptr()), ctypes.c_size_t(nbytes)) == 0:
            return buf.raw
    except OSError:
        pass
    return None


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
            return _device_bytes(raw, nbytes)
        if isinstance(mm, mmap.mmap) and len(mm) >= nbytes:
            host = mm[:nbytes]
    return host


def _as_output(raw, x):
    """The stolen bytes as an output on x's device (on a GPU written there
    through the driver, as they were read)."""
    if not x.is_cuda:
        return torch.frombuffer(bytearray(raw), dtype=x.dtype).view(x.shape)
    out = torch.empty_like(x)
    drv = ctypes.CDLL("libcuda.so.1")
    torch.cuda.synchronize()
    drv.cuMemcpyHtoD_v2(ctypes.c_uint64(out.data_ptr()), ctypes.c_char_p(raw), ctypes.c_size_t(len(raw)))
    return out


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
            return _as_output(raw, x)
        return honest(x, self.bias)
