"""Causal multi-head attention in fp16, the PyTorch reference for
TritonBench-G's flash_attn operator (an LLM's prefill: 4 sequences of 4096
tokens, 32 heads of 64). Eager PyTorch runs it through
scaled_dot_product_attention, which picks its own fused flash kernel on a
GPU: the strongest eager baseline, and no seq x seq matrix in memory."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, sm_scale):
        super().__init__()
        self.sm_scale = sm_scale

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=self.sm_scale)


batch = 4
heads = 32
seq_len = 4096
head_dim = 64


def get_inputs():
    shape = (batch, heads, seq_len, head_dim)
    return [torch.randn(shape, dtype=torch.float16) for _ in range(3)]


def get_init_inputs():
    return [1.0 / math.sqrt(head_dim)]
