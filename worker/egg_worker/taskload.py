"""taskload.py: a KernelBench-form task, as every job of the worker meets it:
its file (and a candidate's kernel file) loaded as a module, its Model built,
its own inputs drawn, and its forward's result flattened into tensors. The
evaluation protocol, the split of a program and the device's size figures
all start here."""
from __future__ import annotations

import importlib.util
import os
import random
import sys
import traceback
import types

import numpy as np
import torch

from .logs import trim

# The output forms a forward may return (flatten): nesting depth and count.
MAX_DEPTH = 4
MAX_OUTPUTS = 64


class TaskError(Exception):
    """The task file itself is unusable: the user's input error, not a candidate failure."""


def load_module(path: str, name: str) -> types.ModuleType:
    """Execute the file at `path` as a fresh module called `name` (registered in
    sys.modules so that dataclasses, pickling of classes and triton's
    source inspection work)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load '{path}'")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_task(path: str, name: str = "egg_task") -> types.ModuleType:
    """Load and check a task: Model, get_inputs and get_init_inputs must exist."""
    try:
        module = load_module(path, name)
    except SyntaxError as e:
        raise TaskError(f"syntax error in task file line {e.lineno}: {e.msg}") from None
    except Exception as e:
        tb = trim(traceback.format_exc(), 1500)
        raise TaskError(f"task file failed to import: {type(e).__name__}: {e}\n{tb}") from None
    for attr in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, attr):
            swapped = attr == "Model" and hasattr(module, "ModelNew")
            raise TaskError(f"task file has no '{attr}'" + (
                "; it defines ModelNew, so it looks like a kernel file: are the task and the kernel swapped? "
                "(egg eval TASK.py KERNEL.py)" if swapped else ""))
    if not isinstance(module.Model, type):
        raise TaskError("task's 'Model' is not a class")
    return module


def size_constants(module: types.ModuleType) -> dict:
    """Module-level ints/floats/bools/strings of a task: its sizes and settings."""
    return {k: v for k, v in vars(module).items()
            if not k.startswith("_") and isinstance(v, (int, float, str, bool))}


def task_file(scratch: str, source: str) -> str:
    """A task's text written as SCRATCH/task.py, for a child to load."""
    path = os.path.join(scratch, "task.py")
    with open(path, "w") as f:
        f.write(source)
    return path


def _seed_everything(seed: int) -> None:
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed % (2**32))


def task_inputs(task, seed: int, device: torch.device) -> list:
    """The task's own get_inputs() under a seed. Factory calls without a
    device (torch.rand(...), as KernelBench writes them) create their tensors
    on `device` directly: a many-GB input is never built on the host first.
    A task whose get_inputs() fails that way is run on the CPU instead (the
    same choice in both processes, so both still get the same values)."""
    try:
        if device.type != "cpu":
            _seed_everything(seed)
            try:
                with torch.device(device):
                    raw = task.get_inputs()
            except Exception:
                _seed_everything(seed)
                raw = task.get_inputs()
        else:
            _seed_everything(seed)
            raw = task.get_inputs()
    except Exception as e:
        raise TaskError(f"get_inputs() raised {type(e).__name__}: {e}") from None
    if not isinstance(raw, (list, tuple)):
        raise TaskError(f"get_inputs() must return a list, not {type(raw).__name__}")
    return list(raw)


def build(cls, init: list, seed: int, device: torch.device):
    """cls(*init) under `seed`, built on `device` directly (a large model's
    weights are initialised there, not on the CPU and then copied: for a
    32768-wide MLP that is seconds instead of a minute). A class whose
    constructor cannot run that way is built on the CPU instead: the same
    choice in every process, so the weights agree."""
    torch.manual_seed(seed)
    if device.type != "cpu":
        try:
            with torch.device(device):
                return cls(*init)
        except Exception:
            torch.manual_seed(seed)
    return cls(*init)


def init_inputs(task) -> list:
    try:
        raw = task.get_init_inputs()
    except Exception as e:
        raise TaskError(f"get_init_inputs() raised {type(e).__name__}: {e}") from None
    if not isinstance(raw, (list, tuple)):
        raise TaskError(f"get_init_inputs() must return a list, not {type(raw).__name__}")
    return list(raw)


class OutputError(Exception):
    """A forward's result is not a supported output form."""


def flatten(result) -> tuple[list[torch.Tensor], list[str]]:
    """(tensors, kinds): the tensors of a forward's result in order, nested
    lists and tuples flattened; Python numbers become 0-dim tensors with the
    kind "float", "int" or "bool" (tensors have kind "tensor"). Iterative,
    not a recursive closure: a closure that calls itself is a reference
    cycle, and would keep many-GB outputs alive until the next collection."""
    tensors: list[torch.Tensor] = []
    kinds: list[str] = []
    stack = [(result, 0)]
    while stack:
        o, depth = stack.pop()
        if isinstance(o, torch.Tensor):
            tensors.append(o)
            kinds.append("tensor")
        elif isinstance(o, bool):
            tensors.append(torch.tensor(o, dtype=torch.bool))
            kinds.append("bool")
        elif isinstance(o, int):
            tensors.append(torch.tensor(o, dtype=torch.int64))
            kinds.append("int")
        elif isinstance(o, float):
            tensors.append(torch.tensor(o, dtype=torch.float64))
            kinds.append("float")
        elif isinstance(o, (list, tuple)) and depth < MAX_DEPTH:
            stack.extend((e, depth + 1) for e in reversed(o))
        elif hasattr(o, "item") and hasattr(o, "dtype") and getattr(o, "shape", None) == ():
            stack.append((o.item(), depth))  # a numpy scalar
        else:
            raise OutputError(f"forward returned {_form(result)}, which holds a {type(o).__name__}; "
                              "expected a tensor, a number, or a list/tuple of them")
        if len(tensors) > MAX_OUTPUTS:
            raise OutputError(f"forward returned more than {MAX_OUTPUTS} outputs")
    if not tensors:
        raise OutputError(f"forward returned {_form(result)} with no tensor or number in it")
    return tensors, kinds


def _form(result) -> str:
    if isinstance(result, (list, tuple)):
        return f"a {type(result).__name__} of {len(result)}"
    return f"a {type(result).__name__}"
