"""A CPU-sized elementwise task whose output (128 MiB) is larger than glibc's
largest mmap and trim thresholds (32 and 64 MiB): every fresh output buffer
is a new mapping, whose pages read as zero unless egg poisons fresh
allocations."""
import torch
import torch.nn as nn

M, N = 4096, 8192


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        return torch.relu(x + self.bias) * 1.5


def get_inputs():
    return [torch.rand(M, N)]


def get_init_inputs():
    return [N]
