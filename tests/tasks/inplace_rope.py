"""An in-place operator: rotates q's pairs of halves in place by angles
(cos, sin) and returns q's norm per row. Its results are the returned norm
and q as the forward leaves it (the evaluator compares both)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, q, cos, sin):
        half = q.shape[-1] // 2
        q1, q2 = q[:, :half].clone(), q[:, half:].clone()
        q[:, :half] = q1 * cos - q2 * sin
        q[:, half:] = q2 * cos + q1 * sin
        return q.square().sum(dim=-1)


rows, dim = 64, 32


def get_inputs():
    angles = torch.rand(rows, dim // 2) * 6.28
    return [torch.randn(rows, dim), torch.cos(angles), torch.sin(angles)]


def get_init_inputs():
    return []
