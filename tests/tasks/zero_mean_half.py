"""An fp16 task whose output is zero-mean (128K elements): the sums of two
unrelated outputs differ by about sqrt(n), far inside the n x tolerance a
checksum of sums allows, so only sampled elements tell them apart."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 2.0 - 0.5 * x.flip(-1)


def get_inputs():
    return [torch.randn(256, 512, dtype=torch.float16)]


def get_init_inputs():
    return []
