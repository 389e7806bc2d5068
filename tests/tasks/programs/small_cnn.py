# A small CNN written for the tests of egg split / compose: two conv blocks
# (conv + batch norm + ReLU, the second with a residual add), pooling, a
# classifier. Small enough for the CPU interpreter.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
channels = 3
size = 8
classes = 5


class Model(nn.Module):
    def __init__(self, channels, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(x))
        x = F.relu(x + y)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


def get_inputs():
    return [torch.randn(batch, channels, size, size)]


def get_init_inputs():
    return [channels, classes]
