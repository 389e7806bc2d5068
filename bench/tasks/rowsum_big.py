"""Row sums, GPU-sized (1 GiB)."""
import torch
import torch.nn as nn

B, D = 32768, 8192


class Model(nn.Module):
    def forward(self, x):
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return []
