# A part of the scripted network (network.py): its baseline for the fake worker.
# fake-eager-ms: 0.06
# fake-compile-ms: 0.05
# fake-roofline-ms: 0.01
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x


def get_inputs():
    return [torch.randn(4, 16)]


def get_init_inputs():
    return []
