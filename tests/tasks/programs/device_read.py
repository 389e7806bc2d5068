"""A forward that reads a layer's output only for its device and dtype (as
transformers' position ids do: `torch.arange(n, device=h.device)`): that
read makes the output no extra output of its subgraph, which a kernel
would have to write (tests/cli/t83-model-matrix.sh)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 16)
        self.fc = nn.Linear(16, 16)

    def forward(self, ids):
        h = self.emb(ids)
        pos = torch.arange(ids.shape[1], device=h.device)
        return self.fc(h + pos[None, :, None].to(h.dtype))


def get_inputs():
    return [torch.randint(0, 100, (2, 8))]


def get_init_inputs():
    return []
