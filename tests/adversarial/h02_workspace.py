# class: control: a workspace allocation shared by two kernels
# task: row_sum
# expect: pass
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def partial_kernel(x_ptr, ws_ptr, n_cols, stride, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    part = tl.program_id(1)
    cols = part * CHUNK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * stride + cols, mask=(cols < n_cols) & (cols < part * CHUNK + CHUNK), other=0.0)
    tl.store(ws_ptr + row * tl.num_programs(1) + part, tl.sum(v, axis=0))


@triton.jit
def finish_kernel(ws_ptr, out_ptr, parts, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    i = tl.arange(0, BLOCK)
    v = tl.load(ws_ptr + row * parts + i, mask=i < parts, other=0.0)
    tl.store(out_ptr + row, tl.sum(v, axis=0))


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        chunk = 64
        parts = triton.cdiv(cols, chunk)
        ws = torch.empty((rows, parts), device=x.device, dtype=torch.float32)
        out = torch.empty(rows, device=x.device, dtype=x.dtype)
        partial_kernel[(rows, parts)](x, ws, cols, x.stride(0), CHUNK=chunk, BLOCK=64)
        finish_kernel[(rows,)](ws, out, parts, BLOCK=triton.next_power_of_2(parts))
        return out
