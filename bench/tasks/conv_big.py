"""conv2d 3x3, GPU-sized: 16 x 32 x 128 x 128 -> 32 channels."""
import torch
import torch.nn as nn

BATCH, C_IN, C_OUT, H, W, KS = 16, 32, 32, 128, 128, 3


class Model(nn.Module):
    def __init__(self, c_in, c_out, ks):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, ks)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, C_IN, H, W)]


def get_init_inputs():
    return [C_IN, C_OUT, KS]
