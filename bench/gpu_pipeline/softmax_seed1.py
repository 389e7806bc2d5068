# approach: [softmax] three passes per row over 1024-column chunks (max, sum, write)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax3_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * stride
    m = tl.full((BLOCK,), -float("inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = tl.maximum(m, tl.load(base + cols, mask=cols < n_cols, other=-float("inf")))
    row_max = tl.max(m, axis=0)
    s = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        s += tl.exp(tl.load(base + cols, mask=cols < n_cols, other=-float("inf")) - row_max)
    total = tl.sum(s, axis=0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(base + cols, mask=cols < n_cols, other=-float("inf"))
        tl.store(out_ptr + row * stride + cols, tl.exp(v - row_max) / total, mask=cols < n_cols)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        softmax3_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=1024, num_warps=4)
        return out
