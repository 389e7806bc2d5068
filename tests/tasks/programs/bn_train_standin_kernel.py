# A stand-in for a kernel of bn_train.py's one part (fc+bn+relu), written
# in PyTorch for the test of the composed runtime (t85): like a kernel that
# computes a train-mode batch norm, it updates the running statistics
# bound to it. It is never evaluated as a kernel (it has no Triton).
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 32)
        self.bn = nn.BatchNorm1d(32)

    def forward(self, x):
        h = F.linear(x, self.fc.weight, self.fc.bias)
        h = F.batch_norm(h, self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias,
                         self.training, self.bn.momentum, self.bn.eps)
        if self.training:
            self.bn.num_batches_tracked.add_(1)
        return torch.relu(h)
