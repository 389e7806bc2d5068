# A Triton kernel for the classifier subgraph of tests/tasks/models/tiny_resnet.py
# that is specialised to the batch it was written for (2), and says so: at
# any other batch it raises. For tests/cli/t78-models.sh: egg's check at
# other shapes reports it specialised, and the composed module runs the
# program's PyTorch at the shapes it refuses.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_rows(x_ptr, w_ptr, b_ptr, out_ptr, K, N, BK: tl.constexpr, BN: tl.constexpr):
    row = tl.program_id(0)
    k = tl.arange(0, BK)
    n = tl.arange(0, BN)
    x = tl.load(x_ptr + row * K + k, mask=k < K, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + n[:, None] * K + k[None, :], mask=(n[:, None] < N) & (k[None, :] < K), other=0.0)
    acc = tl.sum(w.to(tl.float32) * x[None, :], axis=1)
    acc += tl.load(b_ptr + n, mask=n < N, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * N + n, acc.to(out_ptr.dtype.element_ty), mask=n < N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.model_fc = nn.Linear(in_features=8, out_features=10, bias=True)

    def forward(self, mean):
        x = mean.contiguous()
        if x.shape[0] != 2:
            raise ValueError("this kernel is written for a batch of 2")
        w = self.model_fc.weight
        out = torch.zeros(x.shape[0], w.shape[0], device=x.device, dtype=x.dtype)
        linear_rows[(2,)](x, w, self.model_fc.bias, out, x.shape[1], w.shape[0], BK=8, BN=16)
        return out
