# A program egg split cannot trace (for its tests): the forward decides on a
# tensor's values.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        if x.sum() > 0:
            return self.fc(x)
        return x


def get_inputs():
    return [torch.randn(2, 4)]


def get_init_inputs():
    return []
