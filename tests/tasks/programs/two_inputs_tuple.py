# A program whose forward takes an input no part reads and returns a tuple:
# the composed file must still import, take its inputs by name, and give
# back the same tuple (t85).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 32)

    def forward(self, x, unused):
        h = torch.relu(self.fc(x))
        return h, h.sum(dim=1)


def get_inputs():
    return [torch.randn(4, 16), torch.randn(4, 8)]


def get_init_inputs():
    return []
