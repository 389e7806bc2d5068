"""An int8 x int8 matmul with row-wise dequantization, the PyTorch reference
for TritonBench-G's int8_dequant_matmul operator (bitsandbytes' SwitchBack
layout): a (M, K) holds activations quantized per row with absmax state_x,
b (K, N) weights quantized per output column with absmax state_w, both to
[-127, 127]. out = (a @ b) * state_x[:, None] * state_w[None, :] / 127^2
+ bias, in fp16. The integer product is exact (int32, torch._int_mm); the
scaling is fp32, rounded once to fp16. Shapes: 4096 tokens through a
Llama-8B-sized MLP projection (4096 -> 14336)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, state_x, state_w, bias):
        acc = torch._int_mm(a, b).float()
        scale = state_x[:, None] * state_w[None, :] * (1.0 / (127.0 * 127.0))
        return (acc * scale + bias.float()).to(torch.float16)


M = 4096
K = 4096
N = 14336


def get_inputs():
    a = torch.randint(-127, 128, (M, K), dtype=torch.int8)
    b = torch.randint(-127, 128, (K, N), dtype=torch.int8)
    state_x = torch.rand(M) * 4.0 + 0.5
    state_w = torch.rand(N) * 0.1 + 0.01
    bias = torch.randn(N, dtype=torch.float16)
    return [a, b, state_x, state_w, bias]


def get_init_inputs():
    return []
