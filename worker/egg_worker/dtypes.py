"""dtypes.py: the one vocabulary of dtypes between egg and its worker.

A dtype has two spellings, each for one purpose and nowhere else:

- the flag's, as a user writes it: fp32, bf16, fp16 for a program's floating
  tensors (--dtype, a model spec's "dtype"), and int64, int32, bool for an
  input (--inputs 8x512:int64). The program runtime (model_runtime.py) owns
  this table, since a composed program carries it and runs without egg; it
  is read from there, never written twice. It is read from that file's
  source, not imported: the runtime defines a Model and get_init_inputs,
  and a module that looks like a task must not sit in sys.modules of the
  process that loads a candidate (a candidate looking for the reference's
  Model there would find it). egg's C side only checks a flag
  against these names (src/program/model.c) and passes it on.
- the record's: torch's own name without "torch." (float32, bfloat16,
  int64), in plans (input and output layouts), in the outputs egg compares,
  and wherever egg's C side reads a dtype back.

Generated task text spells a dtype as Python source (torch.bfloat16), made
here from the record's name.
"""
from __future__ import annotations

import ast
import os

import torch


def _runtime_table(name: str) -> dict:
    """The dict literal `name = {"fp32": torch.float32, ...}` in the program
    runtime's source, as names to torch dtypes."""
    path = os.path.join(os.path.dirname(__file__), "program", "model_runtime.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name):
            return {k.value: getattr(torch, v.attr) for k, v in zip(node.value.keys, node.value.values)}
    raise RuntimeError(f"model_runtime.py has no table {name}")


FLAG_DTYPES = _runtime_table("_EGG_DTYPES")
INPUT_INT_DTYPES = _runtime_table("_EGG_INT_DTYPES")

# Every dtype a record may name (what an output may be, what a plan's layout says).
RECORD_DTYPES = {
    "float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32,
    "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool,
}


def record_name(dtype: torch.dtype) -> str:
    """The record's name of a dtype: torch's own, without "torch."."""
    return str(dtype).removeprefix("torch.")


def source(dtype: torch.dtype) -> str:
    """The dtype as Python source in a generated file."""
    return "torch." + record_name(dtype)
