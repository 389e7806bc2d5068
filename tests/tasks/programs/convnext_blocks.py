"""Two ConvNeXt-style blocks (depthwise convolution, a permute to channels
last, layer norm, an MLP, a permute back, a residual add): the second
block's convolution takes the residual add's output, which the program
lays out channels last (the scaled, permuted branch is the add's first
operand and decides its layout), as torchvision's ConvNeXt does. egg's split must
give that convolution's task a channels-last input (tests/cli/t75)."""
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.layer_scale = nn.Parameter(torch.full((dim, 1, 1), 0.5))

    def forward(self, x):
        y = self.dwconv(x)
        y = y.permute(0, 2, 3, 1)
        y = self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(y))))
        return self.layer_scale * y.permute(0, 3, 1, 2) + x


class Model(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.block1 = Block(dim)
        self.block2 = Block(dim)

    def forward(self, x):
        return self.block2(self.block1(x))


def get_inputs():
    return [torch.randn(2, 8, 6, 6)]


def get_init_inputs():
    return [8]
