# A train-mode program whose part updates a batch norm's running
# statistics (t85): composed, under torch.compile too, the program's own
# buffers must hold the update.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 32)
        self.bn = nn.BatchNorm1d(32)

    def forward(self, x):
        return torch.relu(self.bn(self.fc(x)))


def get_inputs():
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
