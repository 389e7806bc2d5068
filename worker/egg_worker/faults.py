"""faults.py: fault injection for the worker's own tests.

EGG_WORKER_FAULTS holds comma-separated names; inject(name) raises where a
test needs a failure that real inputs cannot produce on demand (a bug in
the harness, running out of memory beside other evaluations). Unset, it
costs one dictionary lookup.
"""
from __future__ import annotations

import os

import torch

_ACTIVE = frozenset(f for f in os.environ.get("EGG_WORKER_FAULTS", "").split(",") if f)


def inject(name: str, alone: bool = False) -> None:
    """Raise the fault `name` if it is active. "-shared" faults fire only
    when the job does not run alone on its device."""
    if not _ACTIVE:
        return
    if name in _ACTIVE or (f"{name}-shared" in _ACTIVE and not alone):
        if name.endswith("oom"):
            raise torch.OutOfMemoryError(f"injected fault '{name}': CUDA out of memory (simulated)")
        raise RuntimeError(f"injected fault '{name}'")
