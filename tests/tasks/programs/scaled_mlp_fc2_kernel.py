# A Triton kernel for subgraph 2 of tests/tasks/programs/scaled_mlp.py (fc2:
# a linear layer) that is right only for inputs within +-50: it passes its
# subgraph task, whose inputs are unit-scale draws (every correctness trial
# stays far inside that range), and fails in the program, where fc1's output
# times 1000 reaches it. The test of egg optimize --split's fallback (t75)
# needs exactly such a kernel: passed alone, wrong together.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_rows_small_inputs(x_ptr, w_ptr, b_ptr, out_ptr, K, N, BK: tl.constexpr, BN: tl.constexpr):
    row = tl.program_id(0)
    k = tl.arange(0, BK)
    n = tl.arange(0, BN)
    x = tl.load(x_ptr + row * K + k, mask=k < K, other=0.0)
    x = tl.where(tl.abs(x) > 50.0, 0.0, x)
    w = tl.load(w_ptr + n[:, None] * K + k[None, :], mask=(n[:, None] < N) & (k[None, :] < K), other=0.0)
    acc = tl.sum(w * x[None, :], axis=1) + tl.load(b_ptr + n, mask=n < N, other=0.0)
    tl.store(out_ptr + row * N + n, acc, mask=n < N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc2 = nn.Linear(in_features=8, out_features=8, bias=True)

    def forward(self, mul):
        x = mul.contiguous()
        out = torch.empty(x.shape[0], self.fc2.out_features, device=x.device, dtype=x.dtype)
        linear_rows_small_inputs[(x.shape[0],)](x, self.fc2.weight, self.fc2.bias, out, x.shape[1],
                                                self.fc2.out_features, BK=8, BN=8)
        return out
