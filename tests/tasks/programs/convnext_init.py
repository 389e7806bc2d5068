"""Two ConvNeXt-style blocks as torchvision builds them before training: the
residual branch scaled by a layer scale of 1e-6 and a new LayerNorm (ones
and zeros). Under these values a block's output is its input to within
1e-5, so a block kernel that skipped the whole MLP would pass a check made
with them; egg's task draws them instead (tests/cli/t86)."""
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.layer_scale = nn.Parameter(torch.full((dim, 1, 1), 1e-6))

    def forward(self, x):
        y = self.dwconv(x).permute(0, 2, 3, 1)
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
