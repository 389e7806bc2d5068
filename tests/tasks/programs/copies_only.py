"""A forward that computes nothing but moves data: a pad, a cast and a
concatenation write new memory, so its one subgraph is work a kernel can
do, not glue that stays PyTorch (tests/cli/t83-model-matrix.sh)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return torch.cat([F.pad(x, (1, 1)), y.to(torch.float32).clone()], dim=1)


def get_inputs():
    return [torch.randn(8, 30), torch.randn(8, 32, dtype=torch.float64)]


def get_init_inputs():
    return []
