# Elementwise: SiLU times a constant (a task written for egg's real-model run).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.nn.functional.silu(x) * self.scale


batch_size = 256
dim = 2048
scale = 1.7


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [scale]
