"""taskload.py: load KernelBench-form task files and candidate kernel files as modules."""
from __future__ import annotations

import importlib.util
import sys
import traceback
import types

from .logs import trim


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
