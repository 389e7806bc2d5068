"""trace.py: the first step of a split: the program built on PyTorch's meta
device (nothing is allocated: a 20 GB model splits on a laptop), its
forward captured with torch.fx, and the value of every node propagated.

Symbolic tracing keeps the standard layers whose constructor can be rebuilt
from their repr whole (ops.LEAF_TYPES), and traces through everything else;
when plain tracing fails, tracing with meta values makes sizes and shapes
plain values (a loop over a tensor's length is unrolled). What cannot be
traced is a SplitError naming the construct and its line in the program.
"""
from __future__ import annotations

import math
import operator
import traceback
import warnings

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.experimental.meta_tracer import MetaProxy, MetaTracer

from ..taskload import build, init_inputs, task_inputs
from .ops import LEAF_TYPES

# Programs larger than this (parameters, or inputs) are not built for real on the CPU.
REAL_LIMIT = 2 << 30


class SplitError(Exception):
    """The program cannot be split (the user's program: exit 2)."""


def program_on_meta(task) -> tuple:
    """(model, inputs, real): the program's Model and inputs on the meta
    device, and the program built for real on the CPU when it is small
    enough (its parameters' and buffers' values: masks, tables), else None."""
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
        if real is None and pbytes < REAL_LIMIT:
            real = build(task.Model, init, 0, torch.device("cpu"))
    except Exception:
        pass
    return model, inputs, real


def traced(model, inputs: list, task, task_path: str, real) -> tuple:
    """(gm, values, input_index): the forward as a GraphModule, every node's
    value by node name (meta tensors; parameters and buffers as `real` holds
    them, when there is one) and which of get_inputs()'s values each
    placeholder takes."""
    try:
        gm, tensor_inputs, input_index = _trace(model, inputs, task)
    except SplitError:
        raise
    except Exception as e:
        # A program that does not run on its own inputs is the user's
        # mistake, said in PyTorch's own words; only one that runs and
        # cannot be traced is a tracing failure.
        if real is not None:
            check_runs(real, task, torch.device("cpu"))
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
        _real_values(gm, values, real)
    return gm, values, input_index


def _real_values(gm, values: dict, real: nn.Module) -> None:
    """Parameters and buffers as the program makes them (get_attr values)."""
    for n in gm.graph.nodes:
        if n.op == "get_attr":
            try:
                t = real.get_parameter(n.target)
            except AttributeError:
                try:
                    t = real.get_buffer(n.target)
                except AttributeError:
                    try:
                        t = getattr_path(real, n.target)
                    except AttributeError:
                        # A tensor tracing made a constant of the graph (a
                        # plain tensor attribute): only its meta value.
                        continue
            if isinstance(values.get(n.name), nn.Parameter) and not isinstance(t, nn.Parameter):
                t = nn.Parameter(t)
            values[n.name] = t


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
        norm = "None" if m.norm is None else rebuildable(m.norm)
        if layer is None or norm is None:
            return None
        return (f"nn.TransformerEncoder({layer}, num_layers={len(m.layers)}, norm={norm}, "
                f"enable_nested_tensor={getattr(m, 'enable_nested_tensor', True)})")
    return None


def rebuildable(m: nn.Module) -> str | None:
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
        # (.to(dtype) casts the floating tensors only: a batch norm's counter stays int64.)
        if {k: s for k, (s, _) in a.items()} == {k: s for k, (s, _) in b.items()} and b:
            dtypes = {d for _, d in b.values() if d.is_floating_point}
            fixed = all(a[k][1] == d for k, (_, d) in b.items() if not d.is_floating_point)
            if len(dtypes) == 1 and fixed:
                return f"{expr}.to({dtypes.pop()})"
        return None
    return expr


def _is_leaf(m: nn.Module) -> bool:
    return rebuildable(m) is not None


# Python types that torch accepts as dtypes (torch.ones(n, dtype=bool)).
_TYPE_DTYPES = {bool: torch.bool, int: torch.int64, float: torch.float64, complex: torch.complex128}


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

    @property
    def ndim(self):
        # A tensor's rank is metadata, a plain value here as its shape and
        # dtype are (torch's meta proxy leaves it a node without a value:
        # `if mask.ndim == 2:` could not be decided).
        meta = getattr(self, "_tensor_meta", None)
        if isinstance(meta, torch.Tensor):
            return meta.ndim
        return self.tracer.create_proxy("call_function", getattr, (self, "ndim"), {})


def _embedding_meta(self: nn.Embedding, input: torch.Tensor) -> torch.Tensor:
    """An embedding's value in the program's dtype (torch's meta tracer
    makes it float32 whatever the table's dtype: a bf16 decoder's RMSNorm
    then cast back to float32, `hidden_states.to(input_dtype)`)."""
    return torch.empty(*input.shape, self.weight.shape[-1], device="meta", dtype=self.weight.dtype)


class _MetaTracer(_Leaves, MetaTracer):
    """The same, with values that carry their meta tensors while tracing,
    so that sizes and shapes are plain values: a loop over a tensor's length
    is unrolled, a slice up to a size is a slice. Tried when plain tracing
    fails. A value's dtype is a plain value here too (a cast to
    `x.dtype` is a cast to that dtype), so every value must carry the
    dtype the program gives it: torch's own stand-ins that do not (an
    embedding's, torch.where's by addition) are replaced while it traces."""

    def trace(self, root, meta_args, concrete_args=None):
        from torch.fx.experimental import meta_tracer

        table = meta_tracer.manual_meta_overrides
        saved = dict(table)
        table[nn.Embedding] = _embedding_meta
        table.pop(torch.where, None)
        try:
            return super().trace(root, meta_args=meta_args, concrete_args=concrete_args)
        finally:
            table.clear()
            table.update(saved)

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
    failures = []
    for tracer in (_Tracer(autowrap_functions=wrap), _MetaTracer(autowrap_functions=wrap)):
        try:
            if isinstance(tracer, MetaTracer):
                graph = tracer.trace(model, meta_args=meta_args, concrete_args=concrete or None)
            else:
                graph = tracer.trace(model, concrete_args=concrete or None)
            _drop_probes(graph)
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
            graph = getattr(tracer, "graph", None)
            failures.append((len(graph.nodes) if graph is not None else 0, len(failures), e))
    # The failure of the tracer that got furthest (the most nodes recorded;
    # the first tracer's on a tie) is the construct that stops the split.
    raise max(failures, key=lambda f: (f[0], -f[1]))[2]


def _drop_probes(graph) -> None:
    """Calls of a method no tensor has, whose result nothing uses: what
    duck-typed checks record when they meet a traced value (a library's
    `hasattr(x, "jax") and x.jax()`, false for a real tensor). They never run
    in the program itself, and the graph could not be replayed with them."""
    for n in list(graph.nodes):
        if n.op == "call_method" and not n.users and not hasattr(torch.Tensor, n.target):
            graph.erase_node(n)


def _code_frame(e: Exception, task_path: str):
    """The frame of the program's or its model library's code where tracing
    stopped: the innermost one in the program's file, else the innermost
    outside torch, Python's own library and egg (a transformers model's
    modeling file, the user's own model file)."""
    import os
    import sysconfig

    frames = traceback.extract_tb(e.__traceback__)
    for fr in reversed(frames):
        if fr.filename == task_path:
            return fr
    torch_dir = os.path.dirname(torch.__file__) + os.sep
    egg_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    stdlib = sysconfig.get_paths()["stdlib"] + os.sep

    def library_or_program(path: str) -> bool:
        if path.startswith(torch_dir) or path.startswith(egg_dir):
            return False
        return "site-packages" in path or "dist-packages" in path or not path.startswith(stdlib)

    for fr in reversed(frames):
        if not fr.filename.startswith("<") and library_or_program(os.path.abspath(fr.filename)):
            return fr
    return None


_METADATA = ("dtype", "shape", "ndim", "device", "size(", "dim(", "is_floating_point", "is_cuda", "numel(")


def _tests_metadata(fr) -> bool:
    """Whether the line where tracing stopped decides on a tensor's
    metadata (`if mask.ndim == 2:`, `if x.dtype == torch.float16:`) rather
    than on its values."""
    line = (fr.line or "") if fr is not None else ""
    return any("." + word in line for word in _METADATA)


def _trace_error(e: Exception, task_path: str) -> SplitError:
    """The construct that stopped tracing, and where in the program or its
    model's library it is (file and line)."""
    where = ""
    fr = _code_frame(e, task_path)
    if fr is not None:
        at = f"line {fr.lineno}" if fr.filename == task_path else f"{fr.filename}:{fr.lineno}"
        where = f" at {at}: `{(fr.line or '').strip()[:80]}`"
    msg = str(e).split("\n")[0]
    if "symbolically traced variables cannot be used as inputs to control flow" in msg and _tests_metadata(fr):
        what = ("a decision on a tensor's dtype, shape or device that tracing could not settle (not on its "
                "values)")
    elif "symbolically traced variables cannot be used as inputs to control flow" in msg:
        what = "data-dependent control flow (an `if` or `while` on a tensor's values)"
    elif "object cannot be interpreted as an integer" in msg or "iteration over a 0-d" in msg or \
            "Proxy object cannot be iterated" in msg:
        what = "a loop or size taken from a tensor during the forward"
    else:
        what = f"{type(e).__name__}: {msg[:160]}"
    return SplitError(f"the forward cannot be traced: {what}{where}")


# What a user's input mistake looks like in PyTorch's words, and the hint
# that says what to change (--inputs of a model spec; get_inputs of a file).
_INPUT_HINTS = (
    ("index out of range in self", "token ids at or above the vocabulary: give their bound, SHAPE:int64:HIGH "
                                   "with HIGH at most the vocabulary's size"),
    ("channels", "the input's channels do not match the model's first layer"),
    ("indices", "a floating input where the model takes token ids: give SHAPE:int64:HIGH"),
    ("scalar type Long", "a floating input where the model takes token ids: give SHAPE:int64:HIGH"),
    ("must have the same dtype", "inputs of another dtype than the model's"),
    ("shape", "an input shape the model does not take"),
    ("You must specify exactly one of", "the model takes these inputs by name: give each as NAME=SHAPE, e.g. "
                                        "input_ids=2x16:int64:32128,decoder_input_ids=2x8:int64:32128"),
    ("unexpected keyword argument", "an input named for a parameter the model's forward does not have"),
)


def check_runs(model: nn.Module, task, device: torch.device) -> None:
    """The program's own forward on its own inputs, once: a SplitError (the
    user's input, exit 2) with PyTorch's message and a hint when it fails."""
    try:
        inputs = task_inputs(task, 0, device)
        with torch.no_grad():
            model(*inputs)
    except Exception as e:
        msg = " ".join(str(e).split())[:300]
        hint = next((h for key, h in _INPUT_HINTS if key in msg), "check the inputs' shapes, dtypes and bounds")
        raise SplitError(f"the program fails on its inputs: {type(e).__name__}: {msg} ({hint}: --inputs of a "
                         f"model spec, get_inputs() of a program file)") from None


class _Values(torch.fx.Interpreter):
    """Runs the graph on meta inputs and keeps every node's value."""

    def __init__(self, gm):
        super().__init__(gm)
        self.values: dict = {}

    def run_node(self, n):
        v = super().run_node(n)
        self.values[n.name] = v
        return v


def _built_on_cpu(task, init: list, why: Exception):
    limit = REAL_LIMIT
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
        if type(e) is type(why) and str(e) == str(why):
            # The same failure either way: the program itself does not build.
            raise SplitError(f"the program does not build: {type(e).__name__}: {str(e)[:400]}") from None
        raise SplitError(f"the program does not build on the meta device ({type(why).__name__}: "
                         f"{str(why)[:160]}), nor on the CPU: {type(e).__name__}: {str(e)[:160]}") from None


def getattr_path(obj, path: str):
    for p in path.split("."):
        obj = getattr(obj, p)
    return obj
