# An honest Triton kernel for KernelBench level 1, 1_Square_matrix_multiplication_
# (4096 x 4096 fp32): tiles of 128 x 128 with Triton's three-pass TF32 split
# (tf32x3), which stays within fp32's tolerance. Used by bench/eval-phases.sh.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        ka = k0 + rk
        x = tl.load(a + rm[:, None].to(tl.int64) * K + ka[None, :], mask=(rm[:, None] < M) & (ka[None, :] < K), other=0.0)
        y = tl.load(b + ka[:, None].to(tl.int64) * N + rn[None, :], mask=(ka[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc, input_precision="tf32x3")
    tl.store(c + rm[:, None].to(tl.int64) * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        A, B = A.contiguous(), B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty(M, N, device=A.device, dtype=torch.float32)
        matmul[(triton.cdiv(M, 128), triton.cdiv(N, 128))](A, B, C, M, N, K, BM=128, BN=128, BK=32,
                                                            num_warps=8, num_stages=3)
        return C
