# approach: flat 1D blocks of 1024 elements, bias fused (refined)
import torch
import torch.nn as nn
import triton
import triton.language as tl


# One configuration, so that Triton's interpreter runs the autotuner too (it
# cannot time several there): the tuning stages' prompts state its choice.
@triton.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=4)], key=["n_elem"])
@triton.jit
def brs_kernel(x_ptr, b_ptr, out_ptr, n_cols, n_elem, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elem
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % n_cols, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + b, 0.0) * 1.5, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        brs_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, self.bias, out, x.shape[-1], n)
        return out
