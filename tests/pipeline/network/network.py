# A scripted network for the fake worker (tests/mock/fakeworker.py with
# FAKEWORKER_SPLIT=plan.json): never run, only read. Its parts (a.py, b.py,
# c.py, d.py, the block blk.py) each say their own baseline, so that what
# each can win is known exactly: a holds 60% of the time at stake, b twice
# as a repeat, c 5%, d is at its roofline bound; the block spans b and c.
# fake-eager-ms: 1.26
# fake-compile-ms: 1.0
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x


def get_inputs():
    return [torch.randn(4, 16)]


def get_init_inputs():
    return []
