"""inputs.py: deterministic, varied inputs for correctness trials and timed calls.

The trusted reference process and the candidate's process call the same
functions with the same hidden seeds, so they get bit-identical inputs
without ever sharing memory.
"""
from __future__ import annotations

import random

import numpy as np
import torch

from .taskload import TaskError

# Correctness trials cycle through these distributions (float tensors only):
# the task's own draw, rescaled, centred (so [0,1) data gets negatives and
# ReLU-like ops stop being the identity), fresh normal, and heavy-tailed.
VARIANTS = ("task", "scaled", "centred", "normal", "heavy_tailed")


def _seed_everything(seed: int) -> None:
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed % (2**32))


def task_inputs(task, seed: int) -> list:
    """The task's own get_inputs() under a seed (on the CPU, as tasks write it)."""
    _seed_everything(seed)
    try:
        raw = task.get_inputs()
    except Exception as e:
        raise TaskError(f"get_inputs() raised {type(e).__name__}: {e}") from None
    if not isinstance(raw, (list, tuple)):
        raise TaskError(f"get_inputs() must return a list, not {type(raw).__name__}")
    return list(raw)


def init_inputs(task) -> list:
    try:
        raw = task.get_init_inputs()
    except Exception as e:
        raise TaskError(f"get_init_inputs() raised {type(e).__name__}: {e}") from None
    if not isinstance(raw, (list, tuple)):
        raise TaskError(f"get_init_inputs() must return a list, not {type(raw).__name__}")
    return list(raw)


def _variant(x: torch.Tensor, variant: str, g: torch.Generator) -> torch.Tensor:
    if variant == "task" or x.numel() == 0:
        return x
    work = x.double()
    std = float(work.std()) if x.numel() > 1 else 1.0
    std = std if std > 1e-6 else 1.0
    dev = x.device
    if variant == "scaled":
        scale = 0.5 + 1.5 * float(torch.rand((), generator=g, device=dev))
        out = work * scale
    elif variant == "centred":
        out = work - float(work.mean())
    elif variant == "normal":
        out = torch.randn(x.shape, generator=g, dtype=torch.float64, device=dev) * std
    elif variant == "heavy_tailed":
        z = torch.randn(x.shape, generator=g, dtype=torch.float64, device=dev)
        s = torch.randn(x.shape, generator=g, dtype=torch.float64, device=dev)
        out = z * torch.exp(0.5 * s) * std
    else:
        raise ValueError(variant)
    if x.dtype in (torch.float16, torch.bfloat16):
        limit = float(torch.finfo(x.dtype).max) / 16
        out = out.clamp(-limit, limit)
    return out.to(x.dtype)


def trial_inputs(task, seed: int, trial: int, device: torch.device) -> list:
    """Inputs for correctness trial `trial`: the task's draw under `seed`,
    moved to `device` and reshaped there by the trial's distribution."""
    raw = task_inputs(task, seed)
    variant = VARIANTS[trial % len(VARIANTS)]
    g = torch.Generator(device=device).manual_seed(seed ^ 0x5EED)
    out = []
    for x in raw:
        if isinstance(x, torch.Tensor):
            x = x.to(device)
            if x.is_floating_point():
                x = _variant(x, variant, g)
        out.append(x)
    return out


def fresh_like(base: list, seed: int, device: torch.device) -> list:
    """Inputs for one timed call: fresh storage and fresh values, generated on
    the device (fast), with the base inputs' signs and scale: every float
    element is multiplied by an independent U(0.5, 1.5) factor. Integer and
    boolean tensors are copied into fresh storage."""
    g = torch.Generator(device=device).manual_seed(seed)
    out = []
    for x in base:
        if isinstance(x, torch.Tensor):
            if x.is_floating_point():
                noise = torch.empty(x.shape, device=device, dtype=torch.float32)
                noise.uniform_(0.5, 1.5, generator=g)
                x = (x * noise).to(x.dtype)
            else:
                x = x.clone()
        out.append(x)
    return out


def describe(inputs: list) -> list:
    """Shapes and dtypes, for messages."""
    out = []
    for x in inputs:
        if isinstance(x, torch.Tensor):
            out.append({"shape": list(x.shape), "dtype": str(x.dtype).replace("torch.", "")})
        else:
            out.append({"value": repr(x)[:80]})
    return out
