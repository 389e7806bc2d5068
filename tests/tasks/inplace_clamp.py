"""An in-place operator whose write changes nothing on the task's own inputs:
clamps x at 0 in place (x is drawn non-negative) and returns 2x. Other input
distributions (the trials' variants) do have negative values, which it then
overwrites: the write itself, not a change of bytes on the first inputs,
makes x a result."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        x.clamp_(min=0.0)
        return x * 2.0


def get_inputs():
    return [torch.rand(32, 64)]


def get_init_inputs():
    return []
