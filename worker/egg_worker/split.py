"""split.py: a whole program (a KernelBench-form task) cut into subgraphs that
egg can optimize one by one, and put back together (egg split / compose).

The forward is captured with torch.fx (symbolic tracing: standard layers
whose constructor can be rebuilt from their repr stay whole, everything else
is traced through), the shapes and dtypes of every value are propagated on
PyTorch's meta device (nothing is allocated: a 20 GB model splits on a
laptop), and the graph is cut into fusable subgraphs in one pass in program
order:

- an anchor (a matrix product, a convolution, attention, a recurrent layer,
  an embedding, a layer this module does not know) starts a subgraph,
  unless the subgraph has no anchor yet (its elementwise prologue joins it);
- elementwise operations, normalisations, reductions and pooling that follow
  an anchor are its epilogue; views and reshapes fold into the subgraph in
  which they occur;
- a matrix product after a softmax joins the one before it (attention:
  scores, softmax, weighted sum);
- sizes and other non-tensor values are recomputed where they are used, and
  parameters go with the subgraphs that read them.

A subgraph of views alone is glue: it stays PyTorch and is not a task.
Each subgraph becomes a KernelBench-form task file: its own `Model` (the
program's layers rebuilt from their repr, its parameters and buffers under
flat names that map back to the program's), `get_inputs` drawing inputs of
the captured shapes and dtypes with the value ranges the program gives them
(non-negative after a ReLU, rows that sum to one after a softmax), and
`get_init_inputs`. On a device the program fits on, each subgraph's share of
the program's eager time is measured there.
"""
from __future__ import annotations

import ast
import keyword
import math
import operator
import os
import re
import time
import traceback
import warnings

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

from .inputs import build, init_inputs, task_inputs
from .taskload import TaskError

# ---- what each operation is ----------------------------------------------

ANCHOR_FUNCS = {
    "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "matmul", "mm", "bmm", "addmm", "baddbmm", "einsum", "scaled_dot_product_attention", "embedding",
    "bilinear", "tensordot", "mv", "dot", "outer", "addbmm", "cdist", "unfold", "fold",
}
MATMULS = {"matmul", "mm", "bmm", "baddbmm", "einsum", "__matmul__", "addmm"}
ANCHOR_MODULES = (nn.Linear, nn.Bilinear, nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d,
                  nn.ConvTranspose3d, nn.RNNBase, nn.RNNCellBase, nn.Embedding, nn.EmbeddingBag,
                  nn.MultiheadAttention, nn.Transformer, nn.TransformerEncoder, nn.TransformerEncoderLayer,
                  nn.TransformerDecoder, nn.TransformerDecoderLayer)
REDUCE_FUNCS = {
    "batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm", "softmax", "log_softmax", "sum", "mean",
    "max", "min", "amax", "amin", "argmax", "argmin", "logsumexp", "var", "std", "norm", "cumsum", "cumprod",
    "prod", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "normalize", "cross_entropy", "mse_loss", "kl_div",
    "nll_loss", "smooth_l1_loss", "cosine_similarity", "pixel_shuffle", "interpolate", "topk", "sort",
}
REDUCE_MODULES = (nn.modules.batchnorm._BatchNorm, nn.LayerNorm, nn.GroupNorm, nn.modules.instancenorm._InstanceNorm,
                  nn.Softmax, nn.LogSoftmax, nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d, nn.AvgPool1d, nn.AvgPool2d,
                  nn.AvgPool3d, nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool2d, nn.AdaptiveAvgPool3d,
                  nn.AdaptiveMaxPool1d, nn.AdaptiveMaxPool2d, nn.AdaptiveMaxPool3d, nn.PixelShuffle, nn.Upsample)
VIEW_NAMES = {
    "view", "reshape", "flatten", "unflatten", "permute", "transpose", "t", "contiguous", "unsqueeze", "squeeze",
    "expand", "expand_as", "getitem", "chunk", "split", "narrow", "view_as", "reshape_as", "movedim", "unbind",
    "select", "as_strided", "swapaxes", "split_with_sizes", "flip", "roll", "repeat", "to", "type", "float",
    "half", "bfloat16", "detach", "clone", "cat", "stack", "concat", "pad", "size", "dim",
}
LEAF_TYPES = ANCHOR_MODULES + REDUCE_MODULES + (
    nn.ReLU, nn.ReLU6, nn.GELU, nn.SiLU, nn.Sigmoid, nn.Tanh, nn.Hardtanh, nn.Hardswish, nn.Hardsigmoid,
    nn.LeakyReLU, nn.ELU, nn.SELU, nn.CELU, nn.Mish, nn.Softplus, nn.Softsign, nn.Tanhshrink, nn.Threshold,
    nn.PReLU, nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.Identity, nn.Flatten,
    nn.Unflatten, nn.ZeroPad2d, nn.ConstantPad2d, nn.ReflectionPad2d, nn.ChannelShuffle, nn.GLU, nn.LogSigmoid,
    nn.Hardshrink, nn.Softshrink, nn.Softmin, nn.CosineSimilarity, nn.PairwiseDistance)

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


class SplitError(Exception):
    """The program cannot be split (the user's program: exit 2)."""


def _name(n: torch.fx.Node, mods: dict) -> str:
    """What a node computes, in one word (its layer's type for a layer)."""
    if n.op == "call_module":
        return type(mods[n.target]).__name__.lower()
    if n.op == "call_function":
        name = getattr(n.target, "__name__", str(n.target))
        return {"add": "add", "iadd": "add", "mul": "mul", "imul": "mul", "sub": "sub", "truediv": "div",
                "floordiv": "div", "matmul": "matmul", "neg": "neg", "pow": "pow"}.get(name, name)
    return str(n.target)


def _kind(n: torch.fx.Node, mods: dict) -> str:
    """anchor, reduce, view, scalar or elementwise."""
    if n.op == "call_module":
        m = mods[n.target]
        if isinstance(m, REDUCE_MODULES):
            return "reduce"
        if isinstance(m, (nn.Identity, nn.Flatten, nn.Unflatten)):
            return "view"
        if isinstance(m, LEAF_TYPES) and not isinstance(m, ANCHOR_MODULES):
            return "elementwise"
        return "anchor"
    name = _name(n, mods)
    if name in ANCHOR_FUNCS or name == "__matmul__":
        return "anchor"
    if name in REDUCE_FUNCS:
        return "reduce"
    if name in VIEW_NAMES or name in {"getattr", "shape"}:
        return "view"
    return "elementwise"


# ---- tracing --------------------------------------------------------------

def _activation_name(f) -> str | None:
    for name, g in (("relu", F.relu), ("gelu", F.gelu)):
        if f is g or isinstance(f, {"relu": nn.ReLU, "gelu": nn.GELU}[name]):
            return name
    return None


def _layer_ctor(m: nn.Module) -> str | None:
    """Constructor expressions of the standard layers whose repr is not one
    (attention and transformer layers), from their attributes."""
    if type(m) is nn.MultiheadAttention:
        return (f"nn.MultiheadAttention({m.embed_dim}, {m.num_heads}, dropout={m.dropout!r}, "
                f"bias={m.in_proj_bias is not None}, add_bias_kv={m.bias_k is not None}, "
                f"add_zero_attn={m.add_zero_attn}, kdim={m.kdim}, vdim={m.vdim}, batch_first={m.batch_first})")
    if type(m) is nn.TransformerEncoderLayer:
        act = _activation_name(m.activation)
        if act is None:
            return None
        return (f"nn.TransformerEncoderLayer({m.self_attn.embed_dim}, {m.self_attn.num_heads}, "
                f"dim_feedforward={m.linear1.out_features}, dropout={m.dropout.p!r}, activation={act!r}, "
                f"layer_norm_eps={m.norm1.eps!r}, batch_first={m.self_attn.batch_first}, norm_first={m.norm_first}, "
                f"bias={m.linear1.bias is not None})")
    if type(m) is nn.TransformerEncoder:
        layer = _layer_ctor(m.layers[0])
        norm = "None" if m.norm is None else _rebuildable(m.norm)
        if layer is None or norm is None:
            return None
        return (f"nn.TransformerEncoder({layer}, num_layers={len(m.layers)}, norm={norm}, "
                f"enable_nested_tensor={getattr(m, 'enable_nested_tensor', True)})")
    return None


def _rebuildable(m: nn.Module) -> str | None:
    """The constructor expression of a standard layer, when its repr (or,
    for attention and transformer layers, their attributes) rebuild it
    exactly (same type, parameter names and shapes)."""
    if not isinstance(m, LEAF_TYPES) or type(m).__module__.split(".")[0] != "torch":
        return None
    text = repr(m)
    special = _layer_ctor(m)
    if special is None and "\n" in text:
        return None
    expr = special or "nn." + text
    try:
        with torch.device("meta"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            again = eval(expr, {"nn": nn, "torch": torch, "inf": math.inf})  # noqa: S307 (our own repr text)
    except Exception:
        return None
    if type(again) is not type(m) or (special is None and repr(again) != text):
        return None
    a = {k: (tuple(v.shape), v.dtype) for k, v in again.state_dict().items()}
    b = {k: (tuple(v.shape), v.dtype) for k, v in m.state_dict().items()}
    if a != b:
        # The same layer in another dtype: say so in the expression.
        if {k: s for k, (s, _) in a.items()} == {k: s for k, (s, _) in b.items()} and b:
            dtypes = {d for _, d in b.values()}
            if len(dtypes) == 1:
                return f"{expr}.to({dtypes.pop()})"
        return None
    return expr


from torch.fx.experimental.meta_tracer import MetaTracer  # noqa: E402


def _is_leaf(m: nn.Module) -> bool:
    return _rebuildable(m) is not None


# Python types that torch accepts as dtypes (torch.ones(n, dtype=bool)).
_TYPE_DTYPES = {bool: torch.bool, int: torch.int64, float: torch.float32, complex: torch.complex64}


class _Leaves:
    """Standard layers that can be rebuilt stay whole; the rest is traced through."""
    proxy_buffer_attributes = True

    def is_leaf_module(self, m: nn.Module, qualname: str) -> bool:
        return _is_leaf(m)

    def create_arg(self, a):
        if isinstance(a, type) and a in _TYPE_DTYPES:
            a = _TYPE_DTYPES[a]
        return super().create_arg(a)


class _Tracer(_Leaves, torch.fx.Tracer):
    """Plain fx tracing."""


from torch.fx.experimental.meta_tracer import MetaProxy  # noqa: E402


class _ValueProxy(MetaProxy):
    """A traced value whose meta value is a plain number converts to it
    (int(h / w), range(n)): sizes become constants of the graph."""

    def _plain(self):
        v = getattr(self, "_tensor_meta", None)
        if v is None or isinstance(v, torch.Tensor):
            raise torch.fx.proxy.TraceError("symbolically traced variables cannot be used as inputs to control flow")
        return v

    def __int__(self):
        return int(self._plain())

    def __float__(self):
        return float(self._plain())

    def __index__(self):
        return operator.index(self._plain())


class _MetaTracer(_Leaves, MetaTracer):
    """The same, with values that carry their meta tensors while tracing,
    so that sizes and shapes are plain values: a loop over a tensor's length
    is unrolled, a slice up to a size is a slice. Tried when plain tracing
    fails."""

    def proxy(self, node):
        return _ValueProxy(node, self)

    def to_bool(self, obj) -> bool:
        # A decision on metadata (a device, a size) is a plain value here;
        # on a tensor's values there is none, and tracing stops.
        meta = getattr(obj, "_tensor_meta", None)
        if meta is not None and not isinstance(meta, torch.Tensor):
            return bool(meta)
        return super().to_bool(obj)


def _wrapped(module) -> tuple:
    """Functions of other libraries the program calls (einops), recorded as
    calls rather than traced into."""
    out = []
    for name in ("rearrange", "repeat", "reduce", "einsum"):
        f = getattr(module, name, None)
        if callable(f) and getattr(f, "__module__", "").startswith("einops"):
            out.append(f)
    return tuple(out)


def _trace(model: nn.Module, inputs: list, module):
    """The program's forward as a GraphModule (plain fx tracing first, then
    tracing with meta values), and the inputs its placeholders take: the
    tensors it was given (other values, and parameters it was not given,
    are fixed at their values and defaults)."""
    import inspect

    params = [p for p in inspect.signature(model.forward).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    meta_args, concrete = {}, {}
    for i, p in enumerate(params):
        if i < len(inputs):
            if isinstance(inputs[i], torch.Tensor):
                meta_args[p.name] = inputs[i]
            else:
                concrete[p.name] = inputs[i]
        elif p.default is not p.empty:
            concrete[p.name] = p.default
    before = {k: v for k, v in vars(model).items() if not k.startswith("_")}
    given = [inputs[i] for i, p in enumerate(params) if i < len(inputs) and p.name in meta_args]
    index = {p.name: i for i, p in enumerate(params) if i < len(inputs) and p.name in meta_args}
    wrap = _wrapped(module)
    first = None
    for tracer in (_Tracer(autowrap_functions=wrap), _MetaTracer(autowrap_functions=wrap)):
        try:
            if isinstance(tracer, MetaTracer):
                graph = tracer.trace(model, meta_args=meta_args, concrete_args=concrete or None)
            else:
                graph = tracer.trace(model, concrete_args=concrete or None)
            stored = sorted(k for k, v in vars(model).items() if not k.startswith("_") and
                            (isinstance(v, torch.fx.Proxy) or (k in before and v is not before[k])))
            if stored:
                raise SplitError(f"the forward stores a value in self.{stored[0]}: a program that keeps state "
                                 "from call to call cannot be split into parts that each start afresh")
            gm = torch.fx.GraphModule(model, graph)
            # It must also run: the meta tracer records some calls it cannot replay.
            with torch.no_grad():
                _Values(gm).run(*given)
            return gm, given, index
        except SplitError:
            raise
        except Exception as e:
            first = first or e
    raise first


def _trace_error(e: Exception, task_path: str) -> SplitError:
    """The construct that stopped tracing, and where in the program it is."""
    where = ""
    for fr in reversed(traceback.extract_tb(e.__traceback__)):
        if fr.filename == task_path:
            where = f" at line {fr.lineno}: `{(fr.line or '').strip()[:80]}`"
            break
    msg = str(e).split("\n")[0]
    if "symbolically traced variables cannot be used as inputs to control flow" in msg:
        what = "data-dependent control flow (an `if` or `while` on a tensor's values)"
    elif "object cannot be interpreted as an integer" in msg or "iteration over a 0-d" in msg or \
            "Proxy object cannot be iterated" in msg:
        what = "a loop or size taken from a tensor during the forward"
    else:
        what = f"{type(e).__name__}: {msg[:160]}"
    return SplitError(f"the forward cannot be traced: {what}{where}")


class _Values(torch.fx.Interpreter):
    """Runs the graph on meta inputs and keeps every node's value."""

    def __init__(self, gm):
        super().__init__(gm)
        self.values: dict = {}

    def run_node(self, n):
        v = super().run_node(n)
        self.values[n.name] = v
        return v


# ---- partition ------------------------------------------------------------

class Group:
    def __init__(self):
        self.nodes: list = []
        self.has_anchor = False
        self.anchor_name = None
        self.softmax = False

    def compute(self, kinds: dict) -> bool:
        return any(kinds[n.name] != "view" for n in self.nodes)


def _plain(v):
    """A Python number, or a tuple of them (a torch.Size as a tuple), or None."""
    if isinstance(v, bool) or isinstance(v, (int, float)):
        return v
    if isinstance(v, (tuple, list, torch.Size)) and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                         for x in v):
        return tuple(v)
    return None


def _is_tensor(v) -> bool:
    return isinstance(v, torch.Tensor)


def partition(gm: torch.fx.GraphModule, values: dict) -> list:
    mods = dict(gm.named_modules())
    kinds, groups, g = {}, [], Group()
    for n in gm.graph.nodes:
        if n.op in ("placeholder", "output", "get_attr"):
            continue
        if not _is_tensor(values.get(n.name)) and not (isinstance(values.get(n.name), (tuple, list)) and any(
                _is_tensor(x) for x in values[n.name])):
            kinds[n.name] = "scalar"
            continue
        k = kinds[n.name] = _kind(n, mods)
        name = _name(n, mods)
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


# ---- code for one subgraph --------------------------------------------------

def _flat(name: str) -> str:
    s = re.sub(r"\W", "_", name)
    if not s or s[0].isdigit() or keyword.iskeyword(s):
        s = "m_" + s
    return s


def _scalar_closure(nodes: list, members: set, kinds: dict) -> list:
    """The non-tensor nodes (sizes, shapes, arithmetic on them) and get_attr
    nodes that the group's nodes read, recursively, to be recomputed in it."""
    need, stack = [], [a for n in nodes for a in n.all_input_nodes]
    seen = set(members)
    while stack:
        a = stack.pop()
        if a.name in seen:
            continue
        if a.op == "get_attr" or kinds.get(a.name) == "scalar":
            seen.add(a.name)
            need.append(a)
            stack.extend(a.all_input_nodes)
    return need


def _dtype_text(d: torch.dtype) -> str:
    return str(d).replace("torch.", "torch.")


def _draw(value: torch.Tensor, producer: str | None, softmax_dim: int | None) -> str:
    """An expression drawing a tensor like `value` (shape, dtype, range)."""
    shape = ", ".join(str(s) for s in value.shape) or ""
    shape_t = f"({shape},)" if len(value.shape) == 1 else f"({shape})"
    d = value.dtype
    if d == torch.bool:
        return f"torch.rand{shape_t} < 0.5"
    if not d.is_floating_point:
        return f"torch.randint(0, 2, {shape_t}, dtype={_dtype_text(d)})"
    base = f"torch.randn{shape_t}" if shape else "torch.randn(())"
    if producer in ("softmax", "log_softmax") and softmax_dim is not None:
        base = f"torch.{producer}({base}, dim={softmax_dim})"
    elif producer in RANGE_OPS:
        base = RANGE_OPS[producer].format(base)
    if d != torch.float32:
        base = f"({base}).to({_dtype_text(d)})"
    return base


def _softmax_dim(n: torch.fx.Node) -> int | None:
    dim = n.kwargs.get("dim")
    if dim is None and len(n.args) > 1:
        dim = n.args[1]
    return dim if isinstance(dim, int) else -1


def _constant_expr(t: torch.Tensor) -> str | None:
    """A short expression for a tensor of a recognisable pattern."""
    if t.device.type == "meta" or t.numel() == 0:
        return None
    shape = tuple(t.shape)
    d = _dtype_text(t.dtype)
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


def _param_expr(t: torch.Tensor, is_param: bool) -> tuple[str, str | None]:
    """The expression that makes a parameter or buffer, and a note when its
    values are not the program's."""
    exact = _constant_expr(t)
    if exact:
        expr, note = exact, None
    elif t.device.type != "meta" and t.is_floating_point() and t.numel() > 1:
        std, mean = torch.std_mean(t.detach().float())
        expr = f"torch.randn({tuple(t.shape)}, dtype={_dtype_text(t.dtype)}) * {float(std):.6g} + {float(mean):.6g}"
        note = "random with the program's mean and standard deviation"
    else:
        fan_in = t.shape[-1] if t.dim() else 1
        scale = 1 / math.sqrt(max(1, fan_in))
        expr = f"(torch.rand({tuple(t.shape)}) * {2 * scale:.6g} - {scale:.6g}).to({_dtype_text(t.dtype)})"
        note = "random (the program was built on the meta device: its values were not read)"
    return (f"nn.Parameter({expr})" if is_param else expr), note


def _imports_for(globals_: dict) -> list:
    lines = []
    for name, obj in sorted(globals_.items()):
        if name in ("inf", "nan"):
            lines.append(f"{name} = float({name!r})")
            continue
        if name in ("torch", "NoneType", "device", "fx_pytree", "pytree"):
            continue
        mod = getattr(obj, "__module__", None)
        if isinstance(obj, type(os)):
            lines.append(f"import {obj.__name__} as {name}" if obj.__name__ != name else f"import {name}")
        elif mod and getattr(obj, "__qualname__", None) and "." not in obj.__qualname__:
            lines.append(f"from {mod} import {obj.__qualname__} as {name}" if obj.__qualname__ != name
                         else f"from {mod} import {name}")
        elif mod and hasattr(obj, "__name__") and mod.startswith("torch"):
            lines.append(f"{name} = torch.ops.{str(obj).replace('torch.ops.', '')}" if "ops" in str(obj)
                         else f"from {mod} import {obj.__name__} as {name}")
    return lines


def _program_inputs_source(task_source: str) -> str:
    """The program's own input code (its constants, helpers and get_inputs,
    renamed _program_inputs), for subgraphs that take the program's inputs."""
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


def _label(gm, nodes: list, kinds: dict) -> str:
    """conv1+bn1+relu: the layers (their names in the program) and functions
    of a subgraph; "attention" for scores, softmax and weighted sum."""
    mods = dict(gm.named_modules())
    names = [_name(n, mods) for n in nodes]
    if "softmax" in names and sum(x in MATMULS or x == "__matmul__" for x in names) >= 2:
        return "attention"
    if "scaled_dot_product_attention" in names:
        return "attention (sdpa)"
    parts = []
    for n in nodes:
        if kinds[n.name] == "view":
            continue
        if n.op == "call_module":
            p = n.target
            if parts and "." in p:
                prev_prefix = parts[-1].rsplit(".", 1)[0] + "." if "." in parts[-1] else None
                # layer1.0.conv1+bn1: a shared prefix is said once, unless what
                # is left is a bare index (network.0+network.1).
                if prev_prefix and p.startswith(prev_prefix) and not p[len(prev_prefix):].isdigit():
                    p = p[len(prev_prefix):]
        else:
            p = _name(n, dict(gm.named_modules()))
        if not parts or parts[-1] != p:
            parts.append(p)
    if len(parts) > 5:
        parts = parts[:3] + ["..."] + parts[-1:]
    text = "+".join(parts) or "view"
    return text if len(text) <= 60 else text[:57] + "..."


def subgraph_source(gm, program_path: str, index: int, count: int, g: Group, kinds: dict, values: dict,
                    producers: dict, program_inputs: set, task_source: str) -> dict:
    """The task file of one subgraph and what the plan says of it."""
    mods = dict(gm.named_modules())
    members = {n.name for n in g.nodes}
    extra = _scalar_closure(g.nodes, members, kinds)
    order = {n.name: i for i, n in enumerate(gm.graph.nodes)}
    body = sorted(extra + g.nodes, key=lambda n: order[n.name])
    # Sizes and numbers made from sizes are constants (the shapes are fixed):
    # a subgraph then needs no tensor just to read its size.
    constants = {n.name: _plain(values.get(n.name)) for n in body
                 if kinds.get(n.name) == "scalar" and _plain(values.get(n.name)) is not None}
    body = [n for n in body if n.name not in constants]
    inside = {n.name for n in body}
    inputs = []
    for n in body:
        for a in n.all_input_nodes:
            if a.name not in inside and a.name not in constants and a.name not in [i.name for i in inputs]:
                inputs.append(a)
    outputs = [n for n in g.nodes if any(u.name not in members or u.op == "output" for u in n.users)]
    graph = torch.fx.Graph()
    env, root, params, notes, init_lines = {}, nn.Module(), {}, [], []
    for i, a in enumerate(inputs):
        env[a.name] = graph.placeholder(_flat(a.name))
    env.update(constants)
    for n in body:
        if n.op == "call_module":
            flat = _flat(n.target)
            if not hasattr(root, flat):
                m = mods[n.target]
                expr = _rebuildable(m)
                root.add_module(flat, m)
                init_lines.append(f"self.{flat} = {expr}")
                for k in m.state_dict():
                    params[f"{flat}.{k}"] = f"{n.target}.{k}"
            env[n.name] = graph.call_module(flat, tuple(torch.fx.map_arg(n.args, lambda x: env[x.name])),
                                            {k: torch.fx.map_arg(v, lambda x: env[x.name]) for k, v in n.kwargs.items()})
        elif n.op == "get_attr":
            flat = _flat(n.target)
            if not hasattr(root, flat):
                t = values[n.name]
                is_param = isinstance(t, nn.Parameter)
                if is_param:
                    root.register_parameter(flat, t)
                else:
                    root.register_buffer(flat, t)
                expr, note = _param_expr(_real_attr(gm, n.target, t), is_param)
                init_lines.append(f"self.{flat} = {expr}" if is_param else f"self.register_buffer({flat!r}, {expr})")
                params[flat] = n.target
                if note:
                    notes.append(f"{n.target}: {note}")
            env[n.name] = graph.get_attr(flat)
        else:
            env[n.name] = graph.node_copy(n, lambda x: env[x.name])
    out = [env[o.name] for o in outputs]
    graph.output(out[0] if len(out) == 1 else tuple(out))
    sub = torch.fx.GraphModule(root, graph)
    code = graph.python_code("self")
    src_lines = [line for line in code.src.strip("\n").splitlines()
                 if not line.strip().startswith("torch.fx._symbolic_trace.wrap(")]
    forward = "\n".join("    " + line if line.strip() else "" for line in src_lines)
    label = _label(gm, g.nodes, kinds)
    ops = [_name(n, mods) for n in g.nodes if kinds[n.name] != "view"]
    # Inputs: how to draw each.
    draws, uses_program = [], False
    for a in inputs:
        v = values[a.name]
        if a.op == "placeholder":
            draws.append(f"_program_inputs()[{program_inputs[a.name]}]")
            uses_program = True
        elif _is_tensor(v):
            prod = producers.get(a.name)
            draws.append(_draw(v, prod, _softmax_dim(a) if prod in ("softmax", "log_softmax") else None))
        else:
            draws.append(repr(v))
    used = set(re.findall(r"\b\w+\b", forward))
    imports = _imports_for({k: v for k, v in code.globals.items() if k in used})
    file_name = f"{index:02d}_{_flat(label.replace('+', '_'))[:50]}.py"
    doc = (f'"""Subgraph {index} of {count} of {os.path.basename(program_path)} (egg split): {label}.\n\n'
           f"It computes {', '.join(ops) or 'views'}; its inputs are the program's values "
           f"{', '.join(a.name for a in inputs)}, its outputs {', '.join(o.name for o in outputs)}.")
    if params:
        doc += "\nIts parameters and buffers are the program's: " + ", ".join(f"{k} <- {v}" for k, v in params.items())
    if notes:
        doc += "\nValues: " + "; ".join(notes)
    doc += '\n"""'
    lines = [doc, "import torch", "import torch.nn as nn", *imports, "", ""]
    if uses_program:
        lines += ["# The program's own inputs (its constants and get_inputs).",
                  _program_inputs_source(task_source), "", ""]
    lines += ["class Model(nn.Module):", "    def __init__(self):", "        super().__init__()"]
    lines += ["        " + s for s in init_lines] or []
    lines += ["", forward.replace("def forward(self,", "def forward(self,", 1), "", ""]
    lines += ["def get_inputs():", f"    return [{', '.join(draws)}]", "", "",
              "def get_init_inputs():", "    return []", ""]
    source = "\n".join(lines)
    return {"name": label, "file": file_name, "ops": ops, "inputs": [a.name for a in inputs],
            "outputs": [o.name for o in outputs], "params": params, "source": source,
            "input_shapes": [list(values[a.name].shape) if _is_tensor(values[a.name]) else None for a in inputs],
            "notes": notes, "nodes": [n.name for n in g.nodes], "_sub": sub}


def _real_attr(gm, target: str, t):
    return t


# ---- the whole split ----------------------------------------------------------

def _program_output(gm) -> str:
    """The program's output as an expression over v[NAME]."""
    out = [n for n in gm.graph.nodes if n.op == "output"][0]

    def expr(a):
        if isinstance(a, torch.fx.Node):
            return f"v[{a.name!r}]"
        if isinstance(a, (tuple, list)):
            inner = ", ".join(expr(x) for x in a)
            return f"({inner},)" if isinstance(a, tuple) and len(a) == 1 else (
                f"({inner})" if isinstance(a, tuple) else f"[{inner}]")
        if isinstance(a, dict):
            return "{" + ", ".join(f"{k!r}: {expr(x)}" for k, x in a.items()) + "}"
        return repr(a)
    return expr(out.args[0])


def split(task, task_path: str, task_source: str, device: str, measure: bool, iters: int,
          name: str | None = None) -> dict:
    """The plan of a program: its subgraphs (with their task files) in order."""
    init = init_inputs(task)
    meta = torch.device("meta")
    real = None
    try:
        torch.manual_seed(0)
        with torch.device(meta):
            model = task.Model(*init)
            inputs = task.get_inputs()
    except Exception as e:
        # A program whose constructor reads values (.item() of a table) is
        # built for real on the CPU, when it and its inputs are small, and
        # moved to the meta device from there.
        import copy

        real, real_inputs = _built_on_cpu(task, init, e)
        model = copy.deepcopy(real).to(meta)
        inputs = [x.to(meta) if isinstance(x, torch.Tensor) else x for x in real_inputs]
    try:
        # Values of parameters and buffers (masks, tables) when the program is small enough to build for real.
        pbytes = sum(p.numel() * p.element_size() for p in list(model.parameters()) + list(model.buffers()))
        if real is None and pbytes < (2 << 30):
            real = build(task.Model, init, 0, torch.device("cpu"))
    except Exception:
        pass
    try:
        gm, tensor_inputs, input_index = _trace(model, inputs, task)
    except SplitError:
        raise
    except Exception as e:
        raise _trace_error(e, task_path) from None
    interp = _Values(gm)
    try:
        with torch.no_grad():
            interp.run(*tensor_inputs)
    except Exception as e:
        raise SplitError(f"the traced forward does not run on the meta device: {type(e).__name__}: "
                         f"{str(e)[:200]}") from None
    values = interp.values
    if real is not None:
        # Parameters and buffers as the program makes them (get_attr values).
        for n in gm.graph.nodes:
            if n.op == "get_attr":
                try:
                    t = real.get_parameter(n.target)
                except AttributeError:
                    try:
                        t = real.get_buffer(n.target)
                    except AttributeError:
                        try:
                            t = _getattr_path(real, n.target)
                        except AttributeError:
                            # A tensor tracing made a constant of the graph (a
                            # plain tensor attribute): only its meta value.
                            continue
                if isinstance(values.get(n.name), nn.Parameter) and not isinstance(t, nn.Parameter):
                    t = nn.Parameter(t)
                values[n.name] = t
    groups, kinds = partition(gm, values)
    mods = dict(gm.named_modules())
    producers = {n.name: _name(n, mods) for n in gm.graph.nodes if n.op in ("call_module", "call_function",
                                                                              "call_method")}
    # A value made by a dropout or a view has the range of what went into it.
    for n in gm.graph.nodes:
        if producers.get(n.name) in ("dropout", "view", "reshape", "flatten", "contiguous", "identity", "permute",
                                     "transpose") and n.all_input_nodes:
            producers[n.name] = producers.get(n.all_input_nodes[0].name, producers[n.name])
    placeholders = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    # Which of get_inputs()'s values each placeholder takes.
    program_inputs = {n.name: input_index[n.target] for n in gm.graph.nodes
                      if n.op == "placeholder" and n.target in input_index}
    # The composed forward takes the program's inputs in get_inputs() order.
    placeholders = sorted(program_inputs, key=program_inputs.get)
    compute = [g for g in groups if g.compute(kinds)]
    count = len(compute)
    subgraphs, k = [], 0
    for g in groups:
        glue = not g.compute(kinds)
        if not glue:
            k += 1
        sg = subgraph_source(gm, name or task_path, k if not glue else 0, count, g, kinds, values, producers,
                             program_inputs, task_source)
        sg["glue"] = glue
        sg["share"] = sg["eager_ms"] = None
        if glue:
            sg["file"] = f"glue_{len(subgraphs):02d}.py"
            sg["name"] = "glue: " + sg["name"]
        subgraphs.append(sg)
    plan = {"program": os.path.basename(name or task_path), "inputs": placeholders, "output": _program_output(gm),
            "subgraphs": subgraphs, "measured_on": None, "eager_ms": None}
    if measure:
        _measure(task, plan, gm, groups, device, iters)
    for sg in subgraphs:
        sg.pop("_sub", None)
        sg.pop("nodes", None)
    return plan


def _built_on_cpu(task, init: list, why: Exception):
    limit = 2 << 30
    try:
        with torch.device("meta"):
            sizes = task.get_inputs()
        in_bytes = sum(x.numel() * x.element_size() for x in sizes if isinstance(x, torch.Tensor))
    except Exception:
        in_bytes = None
    if in_bytes is None or in_bytes > limit:
        raise SplitError(f"the program does not build on the meta device ({type(why).__name__}: "
                         f"{str(why)[:160]}), and its inputs are too large to build it for real on the CPU") from None
    try:
        model = build(task.Model, init, 0, torch.device("cpu"))
        pbytes = sum(p.numel() * p.element_size() for p in list(model.parameters()) + list(model.buffers()))
        if pbytes > limit:
            raise MemoryError(f"{pbytes / 1e9:.1f} GB of parameters")
        return model, task_inputs(task, 0, torch.device("cpu"))
    except Exception as e:
        raise SplitError(f"the program does not build on the meta device ({type(why).__name__}: "
                         f"{str(why)[:160]}), nor on the CPU: {type(e).__name__}: {str(e)[:160]}") from None


def _getattr_path(obj, path: str):
    for p in path.split("."):
        obj = getattr(obj, p)
    return obj


def _measure(task, plan: dict, gm, groups: list, device: str, iters: int) -> None:
    """Each subgraph's share of the program's eager time on `device`: the
    program built there for real, run node by node with the device
    synchronised at each subgraph's ends, the median over `iters` runs."""
    dev = torch.device(device)
    model = build(task.Model, init_inputs(task), 0, dev).to(dev)
    for n in gm.graph.nodes:
        # Constants tracing made (a tensor the forward builds from literals):
        # their values, on the device.
        if n.op == "get_attr" and "_tensor_constant" in n.target and not hasattr(model, n.target):
            c = _getattr_path(gm, n.target)
            setattr(model, n.target, torch.zeros(c.shape, dtype=c.dtype, device=dev) if c.is_meta else c.to(dev))
    real_gm = torch.fx.GraphModule(model, gm.graph)
    inputs = task_inputs(task, 0, dev)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    first = {g.nodes[0].name: i for i, g in enumerate(groups)}
    last = {g.nodes[-1].name: i for i, g in enumerate(groups)}
    times = [[] for _ in groups]
    totals = []

    class Timed(torch.fx.Interpreter):
        def run_node(self, n):
            if n.name in first:
                sync()
                self._t0 = time.perf_counter()
            v = super().run_node(n)
            if n.name in last:
                sync()
                self._spans[last[n.name]] += time.perf_counter() - self._t0
            return v

    with torch.no_grad():
        model(*inputs)
        sync()
        for r in range(iters + 1):
            t0 = time.perf_counter()
            model(*inputs)
            sync()
            if r:
                totals.append(time.perf_counter() - t0)
            it = Timed(real_gm)
            it._spans = [0.0] * len(groups)
            it.run(*inputs)
            if r:
                for i, s in enumerate(it._spans):
                    times[i].append(s)
    med = [sorted(t)[len(t) // 2] for t in times]
    whole = sum(med) or 1.0
    for sg, m in zip(plan["subgraphs"], med):
        sg["eager_ms"] = m * 1e3
        sg["share"] = m / whole
    plan["eager_ms"] = sorted(totals)[len(totals) // 2] * 1e3
    plan["measured_on"] = device


def child(ch, job: dict) -> None:
    """The split's process (it runs the user's program): loads the task,
    splits it, answers the plan."""
    from .taskload import load_task

    try:
        task = load_task(job["task_path"], "egg_task_split")
        plan = split(task, job["task_path"], job["task_source"], job["device"], job["measure"], job["iters"],
                     job["name"])
        ch.send({"event": "split", "plan": plan})
    except (SplitError, TaskError) as e:
        ch.send({"event": "split", "error": str(e), "input": True})
    except Exception as e:
        ch.send({"event": "split", "error": f"{type(e).__name__}: {str(e)[:300]}", "input": False,
                 "log": traceback.format_exc()[-3000:]})
