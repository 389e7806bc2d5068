# class: 11 precision downgrade: fp32 math, results rounded to bf16 precision (8-bit mantissa)
# task: bias_relu_scale
# expect: fail correctness
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def brs_bf16_kernel(x_ptr, b_ptr, out_ptr, n_cols, n_elem, scale, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elem
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % n_cols, mask=mask)
    y = tl.maximum(x + b, 0.0) * scale
    # Round to nearest bf16 and keep the fp32 container (what a bf16 output
    # buffer upcast afterwards would hold; works in the CPU interpreter too).
    y = ((y.to(tl.int32, bitcast=True) + 0x8000) & -65536).to(tl.float32, bitcast=True)
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        brs_bf16_kernel[(triton.cdiv(n, 1024),)](x, self.bias, out, x.shape[-1], n, 1.5, BLOCK=1024)
        return out
