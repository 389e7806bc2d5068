# A stand-in for a kernel of repeated_blocks.py's repeated part (up+act),
# written in PyTorch for the test of a drop-in shared by threads (t85): it
# reads its weights, lets other threads run (as a kernel's Python wrapper
# may, before its launch), then computes with what it read, so that an
# instance whose weights another thread rebinds in the meantime gives a
# wrong result. It is never evaluated as a kernel.
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks_0_up = nn.Linear(16, 64)

    def forward(self, blocks_0_norm):
        w, b = self.blocks_0_up.weight, self.blocks_0_up.bias
        time.sleep(0.0002)
        w2, b2 = self.blocks_0_up.weight, self.blocks_0_up.bias
        if w2 is not w or b2 is not b:
            raise RuntimeError("the kernel's weights changed while it ran")
        return F.gelu(F.linear(blocks_0_norm, w, b))
