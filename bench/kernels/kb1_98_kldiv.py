# An honest Triton kernel for KernelBench level 1, 98_KLDivLoss (a 0-dim output:
# kl_div(log(p), t, reduction="batchmean") over two 16384 x 16384 inputs). One
# program per row sums its terms in fp32; one more program adds the rows.
# Used by bench/gpu-kernelbench.sh.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def kl_rows(p_ptr, t_ptr, part_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        p = tl.load(p_ptr + row * n_cols + offs, mask=mask, other=1.0)
        t = tl.load(t_ptr + row * n_cols + offs, mask=mask, other=0.0)
        acc += tl.where(t > 0, t * (tl.log(t) - tl.log(p)), 0.0)
    tl.store(part_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def add_rows(part_ptr, out_ptr, n_rows, inv_batch, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_rows, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + offs, mask=offs < n_rows, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) * inv_batch)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        predictions, targets = predictions.contiguous(), targets.contiguous()
        rows, cols = predictions.shape
        parts = torch.empty(rows, device=predictions.device, dtype=torch.float32)
        out = torch.empty((), device=predictions.device, dtype=torch.float32)
        kl_rows[(rows,)](predictions, targets, parts, cols, BLOCK=2048, num_warps=8)
        add_rows[(1,)](parts, out, rows, 1.0 / rows, BLOCK=1024)
        return out
