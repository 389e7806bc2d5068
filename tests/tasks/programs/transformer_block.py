# A plain-PyTorch transformer block written for the tests of egg split /
# compose (and docs/programs.md's worked example): pre-norm causal
# self-attention with a registered mask, then a GELU MLP, both residual.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
seq = 8
dim = 16
heads = 2


class Model(nn.Module):
    def __init__(self, dim, heads, seq):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq)).view(1, 1, seq, seq))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.proj(y)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def get_inputs():
    return [torch.randn(batch, seq, dim)]


def get_init_inputs():
    return [dim, heads, seq]
