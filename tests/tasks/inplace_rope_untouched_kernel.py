"""A wrong kernel for inplace_rope.py: the right norm, but q is left as it
was, where the reference rotates it in place."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rope_rows(q_ptr, cos_ptr, sin_ptr, norm_ptr, HALF: tl.constexpr, IN_PLACE: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, HALF)
    q1 = tl.load(q_ptr + row * 2 * HALF + offs)
    q2 = tl.load(q_ptr + row * 2 * HALF + HALF + offs)
    c = tl.load(cos_ptr + row * HALF + offs)
    s = tl.load(sin_ptr + row * HALF + offs)
    r1 = q1 * c - q2 * s
    r2 = q2 * c + q1 * s
    if IN_PLACE:
        tl.store(q_ptr + row * 2 * HALF + offs, r1)
        tl.store(q_ptr + row * 2 * HALF + HALF + offs, r2)
    tl.store(norm_ptr + row, tl.sum(r1 * r1, axis=0) + tl.sum(r2 * r2, axis=0))


IN_PLACE = False  # computes the norm but leaves q as it was


class ModelNew(nn.Module):
    def forward(self, q, cos, sin):
        norm = torch.empty(q.shape[0], device=q.device, dtype=q.dtype)
        rope_rows[(q.shape[0],)](q, cos, sin, norm, HALF=q.shape[1] // 2, IN_PLACE=IN_PLACE)
        return norm
