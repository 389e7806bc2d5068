# A Triton kernel for subgraph 1 of tests/tasks/programs/scaled_mlp.py
# (fc1+mul: a linear layer times 1000), honest: one program per output row.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_scaled_rows(x_ptr, w_ptr, b_ptr, out_ptr, K, N, scale, BK: tl.constexpr, BN: tl.constexpr):
    row = tl.program_id(0)
    k = tl.arange(0, BK)
    n = tl.arange(0, BN)
    x = tl.load(x_ptr + row * K + k, mask=k < K, other=0.0)
    w = tl.load(w_ptr + n[:, None] * K + k[None, :], mask=(n[:, None] < N) & (k[None, :] < K), other=0.0)
    acc = tl.sum(w * x[None, :], axis=1) + tl.load(b_ptr + n, mask=n < N, other=0.0)
    tl.store(out_ptr + row * N + n, acc * scale, mask=n < N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(in_features=8, out_features=8, bias=True)

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty(x.shape[0], self.fc1.out_features, device=x.device, dtype=x.dtype)
        linear_scaled_rows[(x.shape[0],)](x, self.fc1.weight, self.fc1.bias, out, x.shape[1],
                                          self.fc1.out_features, 1000.0, BK=8, BN=8)
        return out
