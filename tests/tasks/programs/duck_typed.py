"""A program whose forward makes a duck-typed check on its input, as
libraries do (transformers looks for other frameworks' tensors): false for
a real tensor, but a traced value has every attribute, so tracing records a
call of a method no tensor has (tests/cli/t78-models.sh: egg split drops it)."""
import torch
import torch.nn as nn


def _is_other_framework(x):
    return hasattr(x, "jax") and x.jax() is not None


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 8)

    def forward(self, x):
        if _is_other_framework(x):
            pass
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(4, 16)]


def get_init_inputs():
    return []
