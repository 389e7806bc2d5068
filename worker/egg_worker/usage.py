"""usage.py: a worker child's memory figures (peaks, and what it inherited)."""
from __future__ import annotations

import os
import resource

import torch

_start_rss = 0


def _rss_now() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def note_start() -> None:
    """Called first in a forked child: the host memory it begins with (its
    parent's resident pages), which its peak includes."""
    global _start_rss
    _start_rss = _rss_now()


def memory_stats() -> dict:
    """This process's peaks: host memory resident (and what was resident
    when it started), and on a GPU the device memory reserved by PyTorch's
    allocator (the CUDA context, a few hundred MB, comes on top)."""
    out = {"rss_peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
           "rss_start_bytes": _start_rss}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        out["gpu_peak_bytes"] = torch.cuda.max_memory_reserved()
        out["gpu_peak_allocated_bytes"] = torch.cuda.max_memory_allocated()
    return out
