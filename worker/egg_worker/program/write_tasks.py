"""write_tasks.py: the third step of a split: each subgraph written as a
KernelBench-form task file (its text; egg writes the files), and the plan
that lists them.

A subgraph's task has its own `Model` (the program's layers rebuilt from
their repr, its parameters and buffers under flat names that map back to
the program's), `get_inputs` drawing inputs as the program gives them
(draws.py), and `get_init_inputs`. Sizes
and other non-tensor values are recomputed where they are used, and
parameters go with the subgraphs that read them. A subgraph of views alone
is glue: it stays PyTorch and is not a task.
"""
from __future__ import annotations

import ast
import keyword
import os
import re

import torch
import torch.fx
import torch.nn as nn

from ..dtypes import record_name
from .ops import MATMULS, op_name
from .draws import STRIDED_HELPER, draws_of, param_expr, program_inputs_source
from .partition import Group, is_tensor, residual_blocks
from .trace import rebuildable


def _runtime_functions(*names: str) -> str:
    """The text of these functions of model_runtime.py, the runtime a model
    spec's program carries: one definition for the program and its tasks."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model_runtime.py")
    text = open(path).read()
    found = {n.name: n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)}
    return "\n\n\n".join(ast.get_source_segment(text, found[name]) for name in names)


# A subgraph of a program in eval mode: its task is in eval mode too, and a
# normalisation's statistics and affine values (constants the kernel may
# fold) are drawn at random (model_runtime.py's _egg_random_statistics,
# whose text the task carries): a new layer's zeros and ones would let a
# kernel that ignored them pass. The same text, run here, says which layers
# have statistics.
STATISTICS_SOURCE = _runtime_functions("_egg_has_statistics", "_egg_random_statistics")
_statistics = {"torch": torch}
exec(compile(STATISTICS_SOURCE, "model_runtime.py", "exec"), _statistics)  # egg's own text, not a model's
_has_statistics = _statistics["_egg_has_statistics"]
# A parameter of one constant value (a new layer's ones and zeros, a layer
# scale of 1e-6) is drawn at random in the task (model_runtime.py's
# _egg_varied_constants, whose text the task carries): under the constant a
# kernel that skipped what it scales would pass.
CONSTANTS_SOURCE = _runtime_functions("_egg_varied_constants")
CONSTANTS_LINES = [
    "        # Parameters of one constant value hide what they scale: drawn at random.",
    "        _egg_varied_constants(self)",
]
EVAL_MODE_LINES = [
    "        # Eval mode (the program's): normalisations use their statistics, drawn at random.",
    "        _egg_random_statistics(self)",
    "        self.eval()",
]


def write_plan(gm, groups: list, kinds: dict, values: dict, input_index: dict, program_path: str,
               task_source: str, spec: dict | None = None) -> dict:
    """The plan of a program: its inputs, its output expression, and its
    subgraphs in order, each with its task file's name and text."""
    mods = dict(gm.named_modules())
    producers = {n.name: op_name(n, mods) for n in gm.graph.nodes if n.op in ("call_module", "call_function",
                                                                                "call_method")}
    # A value made by a dropout or a view has the range of what went into it.
    for n in gm.graph.nodes:
        if producers.get(n.name) in ("dropout", "view", "reshape", "flatten", "contiguous", "identity", "permute",
                                     "transpose") and n.all_input_nodes:
            producers[n.name] = producers.get(n.all_input_nodes[0].name, producers[n.name])
    # Which of get_inputs()'s values each placeholder takes.
    program_inputs = {n.name: input_index[n.target] for n in gm.graph.nodes
                      if n.op == "placeholder" and n.target in input_index}
    # The composed forward takes the program's inputs in get_inputs() order.
    placeholders = sorted(program_inputs, key=program_inputs.get)
    inputs_source = program_inputs_source(task_source, spec)
    compute = [g for g in groups if g.compute(kinds)]
    count = len(compute)
    subgraphs, k = [], 0
    for g in groups:
        glue = not g.compute(kinds)
        if not glue:
            k += 1
        sg = subgraph_source(gm, program_path, k if not glue else 0, count, g, kinds, values, producers,
                             program_inputs, inputs_source, gm.training)
        sg["glue"] = glue
        sg["share"] = sg["eager_ms"] = None
        if glue:
            sg["file"] = f"glue_{len(subgraphs):02d}.py"
            sg["name"] = "glue: " + sg["name"]
        subgraphs.append(sg)
    blocks = []
    spans = residual_blocks(gm, groups, kinds)
    for k, (first, last) in enumerate(spans, 1):
        # A block: the subgraphs from `first` to `last` as one task, so that
        # one kernel may keep what crosses between them on chip.
        g = Group()
        g.nodes = [n for grp in groups[first:last + 1] for n in grp.nodes]
        g.has_anchor = True
        sg = subgraph_source(gm, program_path, k, len(spans), g, kinds, values, producers, program_inputs,
                             inputs_source, gm.training, title="Block",
                             label=_block_label(_label(gm, groups[first].nodes, kinds),
                                                _label(gm, groups[last].nodes, kinds)))
        sg.update(file="block" + sg["file"], glue=False, share=None, eager_ms=None,
                  replaces=list(range(first, last + 1)),
                  anchors=sum(groups[i].has_anchor for i in range(first, last + 1)))
        blocks.append(sg)
    shapes = [list(values[p].shape) if is_tensor(values.get(p)) else None for p in placeholders]
    dtypes = [record_name(values[p].dtype) if is_tensor(values.get(p)) else None for p in placeholders]
    floating = [values[p].is_floating_point() if is_tensor(values.get(p)) else None for p in placeholders]
    return {"plan_version": PLAN_VERSION, "program": os.path.basename(program_path), "inputs": placeholders,
            "input_shapes": shapes, "input_dtypes": dtypes, "input_floating": floating,
            "output_tree": _program_output_tree(gm),
            "subgraphs": subgraphs, "blocks": blocks, "measured_on": None, "eager_ms": None}


# The plan's format: 2 has output_tree (an older plan, output as Python text).
PLAN_VERSION = 2


def _plain(v):
    """A Python number, or a tuple of them (a torch.Size as a tuple), or None."""
    if isinstance(v, bool) or isinstance(v, (int, float)):
        return v
    if isinstance(v, (tuple, list, torch.Size)) and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                         for x in v):
        return tuple(v)
    return None


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


def _block_label(first: str, last: str) -> str:
    """A block's name from its first and last subgraphs' names, the dotted
    prefix they share said once: "layers.0.attn.q .. o+add"."""
    a, b = first.split("."), last.split(".")
    k = 0
    while k < min(len(a), len(b)) - 1 and a[k] == b[k]:
        k += 1
    text = f"{first} .. {'.'.join(b[k:])}"
    return text if len(text) <= 60 else text[:57] + "..."


def _label(gm, nodes: list, kinds: dict) -> str:
    """conv1+bn1+relu: the layers (their names in the program) and functions
    of a subgraph; "attention" for scores, softmax and weighted sum."""
    mods = dict(gm.named_modules())
    names = [op_name(n, mods) for n in nodes]
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
            p = op_name(n, dict(gm.named_modules()))
        if not parts or parts[-1] != p:
            parts.append(p)
    if len(parts) > 5:
        parts = parts[:3] + ["..."] + parts[-1:]
    text = "+".join(parts) or "view"
    return text if len(text) <= 60 else text[:57] + "..."


def _boundary(gm, g: Group, kinds: dict, values: dict) -> tuple:
    """(body, constants, inputs, outputs) of a subgraph: its nodes with the
    scalars they need, in program order; the sizes and numbers made from
    sizes, which are constants (the shapes are fixed: a subgraph then needs
    no tensor just to read its size); the values it reads from outside; and
    those of its own that something outside reads."""
    members = {n.name for n in g.nodes}
    extra = _scalar_closure(g.nodes, members, kinds)
    order = {n.name: i for i, n in enumerate(gm.graph.nodes)}
    body = sorted(extra + g.nodes, key=lambda n: order[n.name])
    constants = {n.name: _plain(values.get(n.name)) for n in body
                 if kinds.get(n.name) == "scalar" and _plain(values.get(n.name)) is not None}
    body = [n for n in body if n.name not in constants]
    inside = {n.name for n in body}
    inputs = []
    for n in body:
        for a in n.all_input_nodes:
            if a.name not in inside and a.name not in constants and a.name not in [i.name for i in inputs]:
                inputs.append(a)

    def needed_outside(u, seen=()) -> bool:
        """Whether a use of a member's value reaches past this subgraph: a
        node of another subgraph or the program's output. A value read only
        for its device, dtype or size (a scalar this subgraph uses itself,
        or a constant) is not: it is no output a kernel must write."""
        if u.op == "output":
            return True
        if u.name in members or u.name in constants or u.name in seen:
            return False
        if kinds.get(u.name) != "scalar":
            return True
        return any(needed_outside(w, seen + (u.name,)) for w in u.users)
    outputs = [n for n in g.nodes if any(needed_outside(u) for u in n.users)]
    return body, constants, inputs, outputs


def _rebuild(gm, body: list, constants: dict, inputs: list, outputs: list, values: dict) -> tuple:
    """The subgraph as a module of its own: (its GraphModule, the graph's
    Python code, the parameters it takes from the program by name, notes
    on their values, its __init__ lines)."""
    mods = dict(gm.named_modules())
    graph = torch.fx.Graph()
    env, root, params, notes, init_lines = {}, nn.Module(), {}, [], []
    for a in inputs:
        env[a.name] = graph.placeholder(_flat(a.name))
    env.update(constants)
    for n in body:
        if n.op == "call_module":
            flat = _flat(n.target)
            if not hasattr(root, flat):
                m = mods[n.target]
                expr = rebuildable(m)
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
                expr, note = param_expr(t, is_param)
                init_lines.append(f"self.{flat} = {expr}" if is_param else f"self.register_buffer({flat!r}, {expr})")
                params[flat] = n.target
                if note:
                    notes.append(f"{n.target}: {note}")
            env[n.name] = graph.get_attr(flat)
        else:
            env[n.name] = graph.node_copy(n, lambda x: env[x.name])
    out = [env[o.name] for o in outputs]
    graph.output(out[0] if len(out) == 1 else tuple(out))
    return torch.fx.GraphModule(root, graph), graph.python_code("self"), params, notes, init_lines


def subgraph_source(gm, program_path: str, index: int, count: int, g: Group, kinds: dict, values: dict,
                    producers: dict, program_inputs: dict, inputs_source: str, training: bool = True,
                    title: str = "Subgraph", label: str | None = None) -> dict:
    """The task file of one subgraph and what the plan says of it;
    `inputs_source`: the program's input code (draws.program_inputs_source);
    `title`: what the file calls itself ("Subgraph", or "Block" for a block
    of several subgraphs), `label` its name (else what it computes)."""
    mods = dict(gm.named_modules())
    body, constants, inputs, outputs = _boundary(gm, g, kinds, values)
    sub, code, params, notes, init_lines = _rebuild(gm, body, constants, inputs, outputs, values)
    src_lines = [line for line in code.src.strip("\n").splitlines()
                 if not line.strip().startswith("torch.fx._symbolic_trace.wrap(")]
    forward = "\n".join("    " + line if line.strip() else "" for line in src_lines)
    label = label or _label(gm, g.nodes, kinds)
    ops = [op_name(n, mods) for n in g.nodes if kinds[n.name] != "view"]
    draws, uses_program, strided = draws_of(inputs, values, producers, program_inputs)
    used = set(re.findall(r"\b\w+\b", forward))
    imports = _imports_for({k: v for k, v in code.globals.items() if k in used})
    file_name = f"{index:02d}_{_flat(label.replace('+', '_'))[:50]}.py"
    doc = (f'"""{title} {index} of {count} of {os.path.basename(program_path)} (egg split): {label}.\n\n'
           f"It computes {', '.join(ops) or 'views'}; its inputs are the program's values "
           f"{', '.join(a.name for a in inputs)}, its outputs {', '.join(o.name for o in outputs)}.")
    if params:
        doc += "\nIts parameters and buffers are the program's: " + ", ".join(f"{k} <- {v}" for k, v in params.items())
    if notes:
        doc += "\nValues: " + "; ".join(notes)
    doc += '\n"""'
    statistics = not training and any(_has_statistics(mods[n.target]) for n in body if n.op == "call_module")
    varied = any(p.is_floating_point() and p.numel() > 1 for p in sub.parameters())
    lines = [doc, "import torch", "import torch.nn as nn", *imports, "", ""]
    if varied:
        lines += [CONSTANTS_SOURCE, "", ""]
    if statistics:
        lines += [STATISTICS_SOURCE, "", ""]
    if uses_program:
        lines += ["# The program's own inputs (drawn as the program draws them).",
                  inputs_source, "", ""]
    lines += ["class Model(nn.Module):", "    def __init__(self):", "        super().__init__()"]
    lines += ["        " + s for s in init_lines] or []
    if varied:
        lines += CONSTANTS_LINES
    if not training:
        lines += EVAL_MODE_LINES if statistics else ["        self.eval()"]
    lines += ["", forward, "", ""]
    if strided:
        lines += [STRIDED_HELPER, "", ""]
    lines += ["def get_inputs():", f"    return [{', '.join(draws)}]", "", "",
              "def get_init_inputs():", "    return []", ""]
    source = "\n".join(lines)
    return {"name": label, "file": file_name, "ops": ops, "inputs": [a.name for a in inputs],
            "outputs": [o.name for o in outputs], "params": params, "source": source,
            "input_shapes": [list(values[a.name].shape) if is_tensor(values[a.name]) else None for a in inputs],
            "input_layouts": [_layout_record(values[a.name]) for a in inputs],
            "input_program_index": [program_inputs[a.name] if a.op == "placeholder" else None for a in inputs],
            "output_shapes": [list(values[o.name].shape) if is_tensor(values[o.name]) else None for o in outputs],
            "output_layouts": [_layout_record(values[o.name]) for o in outputs],
            "notes": notes, "nodes": [n.name for n in g.nodes], "_sub": sub}


def _layout_record(v) -> dict | None:
    """A tensor value's layout as the plan records it: dtype, strides and
    storage offset (None for a value that is not a tensor)."""
    if not is_tensor(v):
        return None
    return {"dtype": record_name(v.dtype), "stride": list(v.stride()),
            "offset": v.storage_offset()}


def _program_output_tree(gm) -> dict:
    """The program's output as a tree over value names, data the composed
    program reads (compose_runtime.py _egg_output): {"value": NAME},
    {"tuple": [...]}, {"list": [...]}, {"dict": [[KEY, ...], ...]} or
    {"const": VALUE} for a number, a string, a boolean or None."""
    out = [n for n in gm.graph.nodes if n.op == "output"][0]

    def tree(a):
        if isinstance(a, torch.fx.Node):
            return {"value": a.name}
        if isinstance(a, tuple):
            return {"tuple": [tree(x) for x in a]}
        if isinstance(a, list):
            return {"list": [tree(x) for x in a]}
        if isinstance(a, dict) and all(isinstance(k, str) for k in a):
            return {"dict": [[k, tree(x)] for k, x in a.items()]}
        if a is None or isinstance(a, (bool, int, float, str)):
            return {"const": a}
        raise TypeError("the program returns a %s, which egg cannot put back together" % type(a).__name__)
    return tree(out.args[0])
