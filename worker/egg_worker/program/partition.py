"""partition.py: the second step of a split: the traced graph cut into
fusable subgraphs in one pass in program order.

- an anchor (a matrix product, a convolution, attention, a recurrent layer,
  an embedding, a layer this module does not know) starts a subgraph,
  unless the subgraph has no anchor yet (its elementwise prologue joins it);
- elementwise operations, normalisations, reductions and pooling that follow
  an anchor are its epilogue; views and reshapes fold into the subgraph in
  which they occur;
- a matrix product after a softmax joins the one before it (attention:
  scores, softmax, weighted sum);
- values that are not tensors (sizes) are "scalar": they belong to no
  subgraph, and are recomputed where they are used (write_tasks.py).
"""
from __future__ import annotations

import torch
import torch.fx

from .ops import MATMULS, op_kind, op_name


class Group:
    """One subgraph: its nodes in program order, and its anchor's name once it has one."""

    def __init__(self):
        self.nodes: list = []
        self.has_anchor = False
        self.anchor_name = None
        self.softmax = False

    def compute(self, kinds: dict) -> bool:
        """Whether it computes anything (a subgraph of views alone is glue)."""
        return any(kinds[n.name] != "view" for n in self.nodes)


def is_tensor(v) -> bool:
    return isinstance(v, torch.Tensor)


def partition(gm: torch.fx.GraphModule, values: dict) -> tuple:
    """(groups, kinds): the subgraphs in program order, and each node's kind
    by node name (ops.op_kind, or "scalar" for a value that is no tensor)."""
    mods = dict(gm.named_modules())
    kinds, groups, g = {}, [], Group()
    for n in gm.graph.nodes:
        if n.op in ("placeholder", "output", "get_attr"):
            continue
        if not is_tensor(values.get(n.name)) and not (isinstance(values.get(n.name), (tuple, list)) and any(
                is_tensor(x) for x in values[n.name])):
            kinds[n.name] = "scalar"
            continue
        k = kinds[n.name] = op_kind(n, mods)
        name = op_name(n, mods)
        if k == "anchor":
            attention = g.has_anchor and g.softmax and g.anchor_name in MATMULS and name in MATMULS
            if g.has_anchor and not attention:
                groups.append(g)
                g = Group()
            g.has_anchor, g.anchor_name = True, name
        if name in ("softmax", "log_softmax"):
            g.softmax = True
        g.nodes.append(n)
    if g.nodes:
        groups.append(g)
    return groups, kinds
