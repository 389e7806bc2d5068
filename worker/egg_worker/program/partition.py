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


# A block egg offers as one coarse part holds at most this many anchors (a
# decoder's attention block: q, k and v projections, attention, output
# projection).
MAX_BLOCK_ANCHORS = 6


def _derived_in(h, group_nodes: set, names: set) -> set:
    """The values of one group that are `h` or computed from it inside the
    group (a norm of the residual stream in the group that wrote it)."""
    out, stack = {h.name}, [h]
    while stack:
        v = stack.pop()
        for u in v.users:
            if u.name in group_nodes and u.name not in out:
                out.add(u.name)
                stack.append(u)
    return out & names if names else out


def residual_blocks(gm: torch.fx.GraphModule, groups: list, kinds: dict) -> list:
    """The residual blocks of the program as runs of consecutive groups
    [(first, last), ...] (indices into `groups`), found from the graph: a
    block ends at the group whose elementwise add reads a value h that an
    earlier group wrote (x + f(x)), and starts at the group after the one
    that wrote h, which reads h or what that group computed from h (the
    stream enters there; a mask added in attention does not start one).
    Only blocks of two anchors or more, and at most MAX_BLOCK_ANCHORS; where
    blocks overlap, the shorter is kept. Across a block's groups a kernel
    spanning them keeps every intermediate out of device memory: the
    round trips the fine cut pays and torch.compile cannot fuse away."""
    mods = dict(gm.named_modules())
    at = {n.name: i for i, g in enumerate(groups) for n in g.nodes}
    names = [{n.name for n in g.nodes} for g in groups]
    found = set()
    for q, g in enumerate(groups):
        for a in g.nodes:
            if op_name(a, mods) not in ("add", "add_", "iadd") or kinds.get(a.name) == "scalar":
                continue
            operands = [x for x in a.args if isinstance(x, torch.fx.Node)]
            if len(operands) != 2:
                continue
            for h, other in (operands, operands[::-1]):
                p = at.get(h.name, -1) if h.op != "placeholder" else -1
                first = p + 1
                if p >= q - 1 or at.get(other.name, -1) < first:
                    continue
                if sum(groups[k].has_anchor for k in range(first, q + 1)) < 2 or \
                        sum(groups[k].has_anchor for k in range(first, q + 1)) > MAX_BLOCK_ANCHORS:
                    continue
                stream = {h.name} if p < 0 else _derived_in(h, names[p], names[p])
                reads = {x.name for n in groups[first].nodes for x in n.all_input_nodes}
                if stream & reads:
                    found.add((first, q))
    kept = []
    for first, last in sorted(found, key=lambda b: (b[1] - b[0], b[0])):
        if all(last < f or first > l for f, l in kept):
            kept.append((first, last))
    return sorted(kept)
