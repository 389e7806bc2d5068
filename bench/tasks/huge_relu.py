# huge_relu.py: a KernelBench-form task whose input alone (200 GB of fp32) is
# larger than any single GPU's memory: `egg eval --device cuda` must refuse it
# up front, from the meta-device estimate, with needed vs available, before
# allocating anything (issue "What a new user found", item 2).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


batch_size = 50000
dim = 1000000


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
