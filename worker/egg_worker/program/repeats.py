"""repeats.py: subgraphs that compute the same thing on the same shapes made one task.

Two subgraphs are the same task when their traced graphs are the same, node
for node, once their own names are set aside: the same operations in the same
order on the same values; the same layers (type, constructor attributes, the
shapes and dtypes of their parameters, train or eval mode), each used by the
same nodes (a layer called twice is not two layers alike); the same tensors
(parameters and buffers: their shapes, dtypes and strides, not their values)
and the same constants (every number, but the rate of a dropout or a
stochastic depth that is not training: it computes nothing then). Their inputs must have the same
shapes, dtypes and strides and be the same program inputs (see _inputs_key),
but need not be drawn from the same distribution. Weights are never part of
the key: each occurrence binds its own when composed, so a ResNet stage or a
transformer's twelve layers become one task each, however many times they
repeat. The key is read from the graph write_tasks.py rebuilt the subgraph's
task file from (its "_sub"), never from the file's text.

Each subgraph of the plan gets "task" (the file of its first occurrence: the
task egg optimizes), and a repeat gets "task_params": its own tensors under
the names the first occurrence's file gives them (matched by the order in
which the graph first uses them), which is what the composition binds to the
shared kernel. The first occurrence gets "occurrences" (how many subgraphs
its task serves) and "task_share" (their shares summed, when measured).
"""
from __future__ import annotations

import hashlib

import torch
import torch.nn as nn

from .noise import noise_words


def _tensor_record(t: torch.Tensor) -> tuple:
    """What a tensor the graph holds contributes: its kind and layout."""
    kind = "param" if isinstance(t, nn.Parameter) else "buffer"
    return kind, tuple(t.shape), str(t.dtype), tuple(t.stride())


def _module_record(m: nn.Module) -> tuple:
    """A layer: its type, its constructor's attributes (as its repr says
    them, children included), its mode, its tensors' names and layouts. A
    dropout layer not training is the identity, whatever its rate."""
    if isinstance(m, nn.modules.dropout._DropoutNd) and not m.training:
        return ("identity",)
    tensors = tuple((k, _tensor_record(v)) for k, v in m.state_dict(keep_vars=True).items())
    return f"{type(m).__module__}.{type(m).__qualname__}", repr(m), m.training, tensors


def _function_name(f) -> str:
    return f"{getattr(f, '__module__', None)}.{getattr(f, '__qualname__', None) or getattr(f, '__name__', repr(f))}"


def _argument(a, index: dict):
    """An argument with its nodes as positions and its constants as values
    (a constant tensor by its layout and a digest of its bytes)."""
    if isinstance(a, torch.fx.Node):
        return f"%{index[a]}"
    if isinstance(a, (tuple, list)):
        return type(a).__name__, tuple(_argument(x, index) for x in a)
    if isinstance(a, dict):
        return "dict", tuple((k, _argument(v, index)) for k, v in a.items())
    if isinstance(a, slice):
        return "slice", _argument((a.start, a.stop, a.step), index)
    if isinstance(a, torch.Tensor):
        data = a.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes() if a.numel() else b""
        return "tensor", tuple(a.shape), str(a.dtype), hashlib.sha256(data).hexdigest()
    if callable(a) and not isinstance(a, (int, float, bool, str)):
        return "callable", _function_name(a)
    return type(a).__name__, repr(a)


# Calls that return their input unchanged when not training (their
# `training` argument: its position, its keyword): the rate they drop at is
# then no part of what they compute (torchvision's ConvNeXt gives each block
# its own stochastic-depth rate; in eval mode all 18 blocks are alike).
_IDENTITY_UNLESS_TRAINING = {
    "torchvision.ops.stochastic_depth.stochastic_depth": (3, "training"),
    "torch.nn.functional.dropout": (2, "training"),
    "torch.nn.functional.dropout1d": (2, "training"),
    "torch.nn.functional.dropout2d": (2, "training"),
    "torch.nn.functional.dropout3d": (2, "training"),
    "torch.nn.functional.alpha_dropout": (2, "training"),
    "torch.nn.functional.feature_alpha_dropout": (2, "training"),
}


def _identity_call(n: torch.fx.Node) -> bool:
    """Whether call_function node `n` is one of those, not training."""
    where = _IDENTITY_UNLESS_TRAINING.get(_function_name(n.target))
    if where is None:
        return False
    at, key = where
    training = n.kwargs.get(key, n.args[at] if len(n.args) > at else True)
    return training is False


def structure(sub: torch.fx.GraphModule) -> tuple[str, list]:
    """The subgraph's key (a digest of its graph, node by node, its own
    names set aside) and its parameter keys ("up.weight", "scale") in the
    order the graph first uses them."""
    index, owners, records, order = {}, {}, [], []
    for n in sub.graph.nodes:
        index[n] = len(index)
        what = None
        if n.op in ("call_module", "get_attr"):
            first_use = n.target not in owners
            owner = owners.setdefault(n.target, len(owners))
            if n.op == "call_module":
                m = sub.get_submodule(n.target)
                what = owner, _module_record(m)
                if first_use:
                    order += [f"{n.target}.{k}" for k in m.state_dict()]
            else:
                what = owner, _tensor_record(getattr(sub, n.target))
                if first_use:
                    order.append(n.target)
        elif n.op == "call_function" and _identity_call(n):
            records.append(("identity", _argument(n.args[:1], index)))
            continue
        elif n.op == "call_function":
            what = _function_name(n.target)
        elif n.op == "call_method":
            what = n.target
        records.append((n.op, what, _argument(n.args, index), _argument(n.kwargs, index)))
    return hashlib.sha256(repr(records).encode()).hexdigest(), order


def _inputs_key(sg: dict) -> str:
    """What must match of two subgraphs' inputs, from the plan's records:
    their shapes, dtypes and strides (a kernel is judged in the layout the
    program feeds it) and which of the program's own inputs they are; not
    the distribution each is drawn from (an input after a ReLU in one block,
    after a pooling in the next). A kernel judged on its first occurrence's
    draws is judged again, in every occurrence, by the program's end-to-end
    evaluation."""
    layouts = [(l["dtype"], tuple(l["stride"])) if l else None for l in sg.get("input_layouts") or []]
    return repr((sg.get("input_shapes"), layouts, sg.get("input_program_index")))


def merge_repeats(plan: dict) -> None:
    """Marks each subgraph's task in `plan` (see the module's text), and
    each block's among the blocks (a block repeats a block). Each entry
    must still hold its rebuilt graph ("_sub"). Repeats of one task
    measured far apart (noise.py) are each "noise", said so."""
    for part in (plan["subgraphs"], plan.get("blocks") or []):
        _merge(part)
        _repeats_noise(part)


def _repeats_noise(subgraphs: list) -> None:
    """The repeats of one task do the same work on the same shapes: their
    times in the program should agree. Where they do not (noise.NOISY),
    each occurrence says so, unless its own rounds already did."""
    times: dict = {}
    for sg in subgraphs:
        if not sg.get("glue") and sg.get("eager_ms") is not None:
            times.setdefault(sg["task"], []).append(sg["eager_ms"])
    for sg in subgraphs:
        ms = times.get(sg["task"], [])
        noise = noise_words(ms, f"the {len(ms)} repeats of its task") if len(ms) > 1 else None
        if noise and not sg.get("noise"):
            sg["noise"] = noise


def _merge(subgraphs: list) -> None:
    firsts: dict = {}
    for sg in subgraphs:
        sg["task"] = sg["file"]
        if sg.get("glue"):
            continue
        key, order = structure(sg["_sub"])
        key += _inputs_key(sg)
        first = firsts.get(key)
        params = sg.get("params", {})
        if first is None or set(order) != set(params):
            firsts.setdefault(key, (sg, order))
            sg["occurrences"] = 1
            sg["task_share"] = sg.get("share")
            continue
        rep, rep_order = first
        sg["task"] = rep["file"]
        sg["task_params"] = {mine: params[theirs] for mine, theirs in zip(rep_order, order)}
        rep["occurrences"] += 1
        if rep.get("task_share") is not None and sg.get("share") is not None:
            rep["task_share"] += sg["share"]
        else:
            rep["task_share"] = None
