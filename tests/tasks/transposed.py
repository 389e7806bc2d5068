# A non-contiguous output: the reference returns a transposed view.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return (x * 2.0).t()


M, N = 48, 80


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
