# A boolean output.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x > 0.25


def get_inputs():
    return [torch.randn(8, 32)]


def get_init_inputs():
    return []
