"""A forward that decides on its input's dtype and rank (as T5's layers do:
`if hidden_states.dtype == torch.float16`), not on its values: egg's split
settles such tests while tracing (tests/cli/t83-model-matrix.sh)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        if x.dtype == torch.float16:
            x = x.clamp(-1000, 1000)
        if x.ndim == 3:
            x = x.flatten(0, 1)
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(2, 4, 16)]


def get_init_inputs():
    return []
