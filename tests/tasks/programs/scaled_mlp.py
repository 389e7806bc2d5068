# Two linear layers with a large scale between them, written for the test of
# egg optimize --split's fallback (t75): the second layer's subgraph task
# draws unit-scale inputs, while in the program its inputs are about 1000
# times larger, so a kernel can pass its subgraph task and fail in the
# program (tests/tasks/programs/scaled_mlp_fc2_kernel.py does).
import torch
import torch.nn as nn

batch = 4
width = 8


class Model(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)

    def forward(self, x):
        return self.fc2(self.fc1(x) * 1000.0)


def get_inputs():
    return [torch.randn(batch, width)]


def get_init_inputs():
    return [width]
