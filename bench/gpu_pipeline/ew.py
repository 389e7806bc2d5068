"""[ew] Fused elementwise: relu(x + bias) * 1.5 over a 4096 x 16384 fp32 tensor."""
import torch
import torch.nn as nn

M, N = 4096, 16384


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        return torch.relu(x + self.bias) * 1.5


def get_inputs():
    return [torch.rand(M, N, device="cuda" if torch.cuda.is_available() else "cpu")]


def get_init_inputs():
    return [N]
