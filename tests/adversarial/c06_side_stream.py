# class: 6 side-stream work invisible to current-stream events
# task: ew_big
# device: cuda
# expect: fail integrity
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def brs_kernel(x_ptr, b_ptr, out_ptr, n_cols, n_elem, scale, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elem
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % n_cols, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + b, 0.0) * scale, mask=mask)


def launch(x, bias, out):
    n = x.numel()
    brs_kernel[(triton.cdiv(n, 4096),)](x, bias, out, x.shape[-1], n, 1.5, BLOCK=4096)

_side = []


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        if not _side:
            _side.append(torch.cuda.Stream())
        out = torch.empty_like(x)
        _side[0].wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(_side[0]):
            launch(x, self.bias, out)
        return out  # the current stream never waits for the side stream
