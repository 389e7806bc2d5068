"""[softmax] Row softmax over a 16384 x 4096 fp32 tensor."""
import torch
import torch.nn as nn

B, D = 16384, 4096


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(B, D, device="cuda" if torch.cuda.is_available() else "cpu")]


def get_init_inputs():
    return []
