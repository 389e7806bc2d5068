"""draws.py: how a subgraph's task draws its values: its inputs (the shapes,
dtypes, strides and value ranges the program gives them: non-negative after
a ReLU, rows that sum to one after a softmax, a channels-last view kept
one), its parameters' stand-ins (a buffer's exact values, a weight drawn
with the program's statistics) and the program's own inputs where a
subgraph takes them. write_tasks.py puts these expressions into the task
file; the evaluator's fresh inputs keep the same layouts
(protocol/inputs.py).
"""
from __future__ import annotations

import ast
import math

import torch
import torch.fx

from ..dtypes import FLAG_DTYPES, INPUT_INT_DTYPES
from ..dtypes import source as dtype_source
from .partition import is_tensor


# Producers whose outputs have a range of their own: how get_inputs draws a
# value that one of them made.
RANGE_OPS = {
    "relu": "torch.relu({})", "relu6": "torch.clamp({}, 0, 6)", "sigmoid": "torch.sigmoid({})",
    "tanh": "torch.tanh({})", "gelu": "torch.nn.functional.gelu({})", "silu": "torch.nn.functional.silu({})",
    "hardtanh": "torch.clamp({}, -1, 1)", "softplus": "torch.nn.functional.softplus({})",
    "elu": "torch.nn.functional.elu({})", "mish": "torch.nn.functional.mish({})", "exp": "torch.exp({})",
    "abs": "torch.abs({})", "hardswish": "torch.nn.functional.hardswish({})",
    "hardsigmoid": "torch.nn.functional.hardsigmoid({})", "leaky_relu": "torch.nn.functional.leaky_relu({}, 0.01)",
}


def draw_value(value: torch.Tensor, producer: str | None, softmax_dim: int | None) -> str:
    """An expression drawing a tensor like `value` (shape, dtype, range)."""
    shape = ", ".join(str(s) for s in value.shape) or ""
    shape_t = f"({shape},)" if len(value.shape) == 1 else f"({shape})"
    d = value.dtype
    if d == torch.bool:
        return f"torch.rand{shape_t} < 0.5"
    if not d.is_floating_point:
        return f"torch.randint(0, 2, {shape_t}, dtype={dtype_source(d)})"
    base = f"torch.randn{shape_t}" if shape else "torch.randn(())"
    if producer in ("softmax", "log_softmax") and softmax_dim is not None:
        base = f"torch.{producer}({base}, dim={softmax_dim})"
    elif producer in RANGE_OPS:
        base = RANGE_OPS[producer].format(base)
    if d != torch.float32:
        base = f"({base}).to({dtype_source(d)})"
    return base


# A task input the program lays out other than contiguous (a channels-last
# view, a transposed operand, a chunk of a larger tensor, a broadcast): the
# task draws it in that layout, so that its part is judged, and timed in
# eager, as the program runs it (a cuDNN convolution on a channels-last view
# runs another kernel than on a contiguous copy).
STRIDED_HELPER = '''def _strided(x, stride, offset=0):
    """x's values laid out as the program lays out this input: its strides
    and its offset in its storage (stride 0: a broadcast dimension)."""
    base = x
    for d, s in enumerate(stride):
        if s == 0 and x.shape[d] > 1:
            base = base.narrow(d, 0, 1)
    span = offset + 1 + sum((n - 1) * s for n, s in zip(base.shape, stride))
    out = torch.empty(span, dtype=x.dtype, device=x.device).as_strided(base.shape, stride, offset)
    out.copy_(base)
    return out.expand(x.shape)'''


def layout_of(value: torch.Tensor) -> tuple | None:
    """(strides, storage offset) of a value the program does not hold
    contiguous from the start of its storage; None for a contiguous one, or
    for a layout whose elements overlap other than by broadcasting (drawn
    contiguous)."""
    if value.is_contiguous() and value.storage_offset() == 0:
        return None
    stride = tuple(value.stride())
    if any(st < 0 for st in stride):
        return None
    dims = sorted((st, n) for n, st in zip(value.shape, stride) if n > 1 and st != 0)
    extent = 1
    for st, n in dims:
        if st < extent:
            return None
        extent = max(extent, st * (n - 1) + 1)
    return stride, value.storage_offset()


def softmax_dim(n: torch.fx.Node) -> int | None:
    dim = n.kwargs.get("dim")
    if dim is None and len(n.args) > 1:
        dim = n.args[1]
    return dim if isinstance(dim, int) else -1


def _constant_expr(t: torch.Tensor) -> str | None:
    """A short expression for a tensor of a recognisable pattern."""
    if t.device.type == "meta" or t.numel() == 0:
        return None
    shape = tuple(t.shape)
    d = dtype_source(t.dtype)
    x = t.detach().float()
    if bool((x == 0).all()):
        return f"torch.zeros({shape}, dtype={d})"
    if bool((x == 1).all()):
        return f"torch.ones({shape}, dtype={d})"
    if x.dim() >= 2:
        sq = x.reshape(-1, x.shape[-2], x.shape[-1])
        if sq.shape[-1] == sq.shape[-2]:
            tri = torch.tril(torch.ones(sq.shape[-2:], dtype=x.dtype))
            if bool((sq == tri).all()):
                return f"torch.tril(torch.ones({sq.shape[-1]}, {sq.shape[-1]}, dtype={d})).reshape({shape})"
            eye = torch.eye(sq.shape[-1], dtype=x.dtype)
            if bool((sq == eye).all()):
                return f"torch.eye({sq.shape[-1]}, dtype={d}).reshape({shape})"
    if t.numel() <= 256:
        vals = t.detach().reshape(-1).tolist()
        return f"torch.tensor({vals!r}, dtype={d}).reshape({shape})"
    return None


def param_expr(t: torch.Tensor, is_param: bool) -> tuple[str, str | None]:
    """The expression that makes a parameter or buffer, and a note when its
    values are not the program's."""
    # A parameter's values are weights (the composition binds the
    # program's own): only a buffer's (a mask, a table) are written exactly.
    exact = _constant_expr(t) if not is_param or t.numel() == 1 else None
    if exact:
        expr, note = exact, None
    elif t.device.type != "meta" and t.is_floating_point() and t.numel() > 1 and bool((t >= 0).all()):
        # Non-negative values (a variance, a scale) stay in their range.
        lo, hi = float(t.detach().float().min()), float(t.detach().float().max())
        expr = f"(torch.rand({tuple(t.shape)}) * {hi - lo:.6g} + {lo:.6g}).to({dtype_source(t.dtype)})"
        note = "random within the program's range"
        if lo == hi and is_param:
            expr = f"torch.full({tuple(t.shape)}, {lo:.6g}, dtype={dtype_source(t.dtype)})"
            note = f"all {lo:.6g} in the program; drawn at random here (_egg_varied_constants)"
    elif t.device.type != "meta" and t.is_floating_point() and t.numel() > 1:
        std, mean = torch.std_mean(t.detach().float())
        expr = f"torch.randn({tuple(t.shape)}, dtype={dtype_source(t.dtype)}) * {float(std):.6g} + {float(mean):.6g}"
        note = "random with the program's mean and standard deviation"
    else:
        fan_in = t.shape[-1] if t.dim() else 1
        scale = 1 / math.sqrt(max(1, fan_in))
        expr = f"(torch.rand({tuple(t.shape)}) * {2 * scale:.6g} - {scale:.6g}).to({dtype_source(t.dtype)})"
        note = "random (the program was built on the meta device: its values were not read)"
    return (f"nn.Parameter({expr})" if is_param else expr), note


# A model spec's names (the flag's) of its floating dtype and of its integer inputs.
_SPEC_DTYPES = {k: dtype_source(v) for k, v in FLAG_DTYPES.items()}
_SPEC_INT_DTYPES = {k: dtype_source(v) for k, v in INPUT_INT_DTYPES.items() if v is not torch.bool}


def _drawn_by_shape(spec: dict | None) -> bool:
    """Whether a model spec's inputs are given by shape (egg can write their
    draws itself), not by a function or rescaled for another shape."""
    return (isinstance(spec, dict) and isinstance(spec.get("inputs"), list) and not spec.get("rescale")
            and spec.get("dtype") in _SPEC_DTYPES
            and all(isinstance(i, dict) and i.get("dtype") in ("float", "bool", *_SPEC_INT_DTYPES)
                    for i in spec["inputs"]))


def _spec_draw(i: dict, dtype: str) -> str:
    """One input of a model spec drawn as the program's runtime draws it
    (model_runtime._egg_draw, floats cast to the program's dtype)."""
    shape = repr(tuple(int(d) for d in i["shape"]))
    if i["dtype"] == "bool":
        return f"torch.rand({shape}) < 0.5"
    if i["dtype"] in _SPEC_INT_DTYPES:
        return f"torch.randint(0, {int(i.get('high') or 2)}, {shape}, dtype={_SPEC_INT_DTYPES[i['dtype']]})"
    return f"torch.randn({shape}).to({_SPEC_DTYPES[dtype]})"


def program_inputs_source(task_source: str, spec: dict | None = None) -> str:
    """The program's own input code (its constants, helpers and get_inputs,
    renamed _program_inputs), for subgraphs that take the program's inputs.
    For a model spec given by shapes (`spec`, the loaded program's
    EGG_MODEL), just its draws: the whole runtime egg wrote around the
    model (about 150 lines) says nothing about the subgraph, and the agents
    read this file."""
    if _drawn_by_shape(spec):
        draws = ", ".join(_spec_draw(i, spec["dtype"]) for i in spec["inputs"])
        return f"def _program_inputs():\n    return [{draws}]"
    tree = ast.parse(task_source)
    keep = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)):
            keep.append(node)
        elif isinstance(node, ast.FunctionDef) and node.name not in ("get_init_inputs",):
            if node.name == "get_inputs":
                node.name = "_program_inputs"
            keep.append(node)
    return ast.unparse(ast.Module(body=keep, type_ignores=[]))


def draws_of(inputs: list, values: dict, producers: dict, program_inputs: dict) -> tuple:
    """How the task's get_inputs draws each input: (the expressions, whether
    one is the program's own input, whether one needs _strided)."""
    draws, uses_program, strided = [], False, False
    for a in inputs:
        v = values[a.name]
        if a.op == "placeholder":
            draws.append(f"_program_inputs()[{program_inputs[a.name]}]")
            uses_program = True
        elif is_tensor(v):
            prod = producers.get(a.name)
            draw = draw_value(v, prod, softmax_dim(a) if prod in ("softmax", "log_softmax") else None)
            layout = layout_of(v)
            if layout is not None:
                stride, offset = layout
                draw = f"_strided({draw}, {stride!r}" + (f", {offset})" if offset else ")")
                strided = True
            draws.append(draw)
        else:
            draws.append(repr(v))
    return draws, uses_program, strided
