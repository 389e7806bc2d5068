"""Rotary position embedding (RoPE) of queries and keys in bf16, the PyTorch
reference for TritonBench-G's fast_rope_embedding operator (Unsloth's): each
head's first and second halves (x1, x2) become (x1 cos - x2 sin,
x2 cos + x1 sin), computed in fp32 and rounded once to bf16. q and k are
(batch, heads, seq, head_dim); cos and sin are (seq, head_dim / 2) in fp32,
the angles pos x 10000^(-2i / head_dim) of a Llama-style model."""
import torch
import torch.nn as nn


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).to(x.dtype)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, cos, sin):
        return rotate(q, cos, sin), rotate(k, cos, sin)


batch = 8
heads = 32
seq_len = 4096
head_dim = 128


def get_inputs():
    shape = (batch, heads, seq_len, head_dim)
    q = torch.randn(shape, dtype=torch.bfloat16)
    k = torch.randn(shape, dtype=torch.bfloat16)
    inv_freq = 10000.0 ** (-torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.arange(seq_len, dtype=torch.float32)[:, None] * inv_freq[None, :]
    return [q, k, torch.cos(angles), torch.sin(angles)]


def get_init_inputs():
    return []
