# A stack of identical residual blocks, written for the test of repeated
# subgraphs (t75): the same block, with its own weights, at every layer, so
# that egg split makes one task of it however many layers there are
# (LAYERS=2 and LAYERS=4 give the same number of distinct tasks).
import os

import torch
import torch.nn as nn

batch = 4
width = 16
layers = int(os.environ.get("LAYERS", "3"))


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, 4 * width)
        self.act = nn.GELU()
        self.down = nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.down(self.act(self.up(self.norm(x))))


class Model(nn.Module):
    def __init__(self, width, layers):
        super().__init__()
        self.embed = nn.Linear(width, width)
        self.blocks = nn.ModuleList([Block(width) for _ in range(layers)])
        self.head = nn.Linear(width, 3)

    def forward(self, x):
        h = self.embed(x)
        for block in self.blocks:
            h = block(h)
        return self.head(h)


def get_inputs():
    return [torch.randn(batch, width)]


def get_init_inputs():
    return [width, layers]
