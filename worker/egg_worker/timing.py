"""timing.py: one timing loop for candidates and baselines: fresh inputs per
call, L2 flushed, device-wide synchronisation, fixed iteration counts."""
from __future__ import annotations

import ctypes
import time

import torch

from .inputs import fresh_like
from .tensors import checksum


def _persisting_l2_reset():
    """cudaCtxResetPersistingL2Cache, so lines a candidate pinned in L2 do not
    survive the flush. None when the runtime library is not reachable."""
    for name in ("libcudart.so", "libcudart.so.13", "libcudart.so.12"):
        try:
            fn = ctypes.CDLL(name).cudaCtxResetPersistingL2Cache
            fn.restype = ctypes.c_int
            return fn
        except (OSError, AttributeError):
            continue
    return None


class Timer:
    """Holds references to the real clock and synchronisation functions,
    taken before any candidate code is imported."""

    def __init__(self, device: torch.device, l2_bytes: int):
        self.device = device
        self.cuda = device.type == "cuda"
        self._perf = time.perf_counter
        if self.cuda:
            # The functions themselves, not attribute lookups at call time:
            # a candidate that patches torch.cuda later does not reach these.
            self._sync = torch.cuda.synchronize
            self._event_cls = torch.cuda.Event
            self._record = torch.cuda.Event.record
            self._elapsed = torch.cuda.Event.elapsed_time
            self._reset_l2 = _persisting_l2_reset()
            flush_bytes = max(2 * l2_bytes, 256 << 20)
        else:
            self._sync = lambda: None
            self._reset_l2 = None
            flush_bytes = 64 << 20
        self.flush_bytes = flush_bytes
        self._flush_buf = torch.empty(flush_bytes // 4, dtype=torch.int32, device=device)

    def sync(self) -> None:
        self._sync()

    def flush(self) -> None:
        self._flush_buf.zero_()
        if self._reset_l2 is not None:
            self._reset_l2()

    def _event(self):
        return self._event_cls(enable_timing=True) if self.cuda else None

    def run(self, fn, base: list, seed: int, n: int, checksums: bool,
            dummy_outputs: list | None = None) -> dict:
        """n timed calls of fn(*inputs) with fresh inputs from seed+i. With
        fn None (calibration), the same loop without the call; checksums are
        then taken of `dummy_outputs` so the overhead matches."""
        events, host, sums = [], [], []
        start, end = (self._event(), self._event()) if self.cuda else (None, None)
        previous = None
        for i in range(n):
            inputs = fresh_like(base, seed + i, self.device)
            self.flush()
            self._sync()
            t0 = self._perf()
            if self.cuda:
                self._record(start)
            out = fn(*inputs) if fn is not None else dummy_outputs
            if self.cuda:
                self._record(end)
            self._sync()
            t1 = self._perf()
            host.append((t1 - t0) * 1e3)
            events.append(self._elapsed(start, end) if self.cuda else (t1 - t0) * 1e3)
            if checksums:
                outs = out if isinstance(out, (list, tuple)) else [out]
                sums.append([checksum(o) if isinstance(o, torch.Tensor) else None for o in outs])
            previous = inputs  # keep the last inputs alive: the next ones get new storage
            del out
        del previous
        return {"events_ms": events, "host_ms": host, "checksums": sums}


def stats(values: list) -> dict:
    v = sorted(values)
    n = len(v)
    if not n:
        return {}
    mean = sum(v) / n
    var = sum((x - mean) ** 2 for x in v) / (n - 1) if n > 1 else 0.0
    med = v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])
    return {"median": med, "min": v[0], "max": v[-1], "mean": mean,
            "std": var ** 0.5, "cv": (var ** 0.5) / mean if mean > 0 else 0.0, "iters": n}
