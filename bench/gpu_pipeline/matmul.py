"""[matmul] relu(x @ W^T + b): a 2048 x 2048 x 2048 fp32 linear layer with a ReLU epilogue."""
import torch
import torch.nn as nn

M, K, N = 2048, 2048, 2048


class Model(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.linear = nn.Linear(k, n)

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
