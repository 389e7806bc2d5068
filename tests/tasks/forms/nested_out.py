# A nested list holding a tensor, a 0-dim tensor and a Python int.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return [x * 2, (x.sum(), 3)]


def get_inputs():
    return [torch.randn(8, 32)]


def get_init_inputs():
    return []
