"""Elementwise fusion: relu(x + bias) * scale."""
import torch
import torch.nn as nn

M, N = 64, 96
SCALE = 1.5


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        return torch.relu(x + self.bias) * SCALE


def get_inputs():
    return [torch.rand(M, N)]


def get_init_inputs():
    return [N]
