"""Softmax over rows, GPU-sized (512 MiB)."""
import torch
import torch.nn as nn

B, D = 32768, 4096


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
