"""timing.py: one timing loop for candidates and baselines: fresh inputs per
call, L2 flushed, device-wide synchronisation, fixed iteration counts.

Two clocks on a GPU (the job's "clock"):
  gpu      (default) the GPU time of the forward's work. Before each timed
           call a spin kernel holds the stream a little longer than the
           forward takes to launch from Python, so the start event fires with
           the call's kernels already queued: the host launch cost is hidden
           and the figure agrees with Nsight Compute's gpu__time_duration.
           The spin is sized from the warm-up calls' launch times and capped
           at SPIN_CAP_MS; a launch slower than that shows up in the time.
  latency  events around the call on an idle GPU: the Python launch path
           is included (what KernelBench measures).
"""
from __future__ import annotations

import ctypes
import gc
import time

import torch

from ..taskload import OutputError, flatten
from .checksums import checksum
from .inputs import fresh_like
from .outputs import results


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


SPIN_CAP_MS = 0.5    # the longest spin: also the most a side stream could hide
SPIN_MIN_MS = 0.03


class Timer:
    """Holds references to the real clock and synchronisation functions,
    taken before any candidate code is imported."""

    def __init__(self, device: torch.device, l2_bytes: int, clock: str = "gpu"):
        self.device = device
        self.mutated: list = []  # inputs the forward modifies in place (outputs.results)
        self.cuda = device.type == "cuda"
        self.clock = clock if self.cuda else "cpu"
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
        self.spin_ms = 0.1
        if self.clock == "gpu":
            self._sleep = torch.cuda._sleep
            self._cycles_per_ms = self._measure_spin_rate()

    def _measure_spin_rate(self) -> float:
        """Clock cycles of the spin kernel per millisecond (the SM clock)."""
        start, end = self._event(), self._event()
        self._sleep(1000)
        rate = 0.0
        for _ in range(2):  # the first pays the kernel's load
            self._sync()
            self._record(start)
            self._sleep(1 << 20)
            self._record(end)
            self._sync()
            rate = (1 << 20) / max(self._elapsed(start, end), 1e-3)
        return rate

    def sync(self) -> None:
        self._sync()

    def flush(self) -> None:
        self._flush_buf.zero_()
        if self._reset_l2 is not None:
            self._reset_l2()

    def _event(self):
        return self._event_cls(enable_timing=True) if self.cuda else None

    def run(self, fn, base: list, seed: int, n: int, checksums: bool,
            dummy_outputs: list | None = None, warmup: bool = False) -> dict:
        """n timed calls of fn(*inputs) with fresh inputs from seed+i. With
        fn None (calibration), the same loop without the call; checksums are
        then taken of `dummy_outputs` so the overhead matches. A warm-up run
        sizes the spin of the gpu clock from its launch times.

        events_ms: the clock's time per call; host_ms: the host's time from
        before the call to the device-wide synchronisation after it, less
        the spin; launch_ms: how long the call took to return."""
        # No garbage collection inside the loop: one full collection of a
        # process that imported torch costs milliseconds, landing in one loop
        # (timed or calibration) and not the other.
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._loop(fn, base, seed, n, checksums, dummy_outputs, warmup)
        finally:
            if collecting:
                gc.enable()

    def _loop(self, fn, base, seed, n, checksums, dummy_outputs, warmup) -> dict:
        events, host, launch, sums = [], [], [], []
        spin = self.clock == "gpu"
        if self.cuda:
            before, start, end = self._event(), self._event(), self._event()
        cycles = int(self.spin_ms * self._cycles_per_ms) if spin else 0
        previous = None
        for i in range(n):
            inputs = fresh_like(base, seed + i, self.device)
            self.flush()
            self._sync()
            t0 = self._perf()
            if spin:
                self._record(before)
                self._sleep(cycles)
            if self.cuda:
                self._record(start)
            c0 = self._perf()
            out = fn(*inputs) if fn is not None else dummy_outputs
            c1 = self._perf()
            if self.cuda:
                self._record(end)
            self._sync()
            t1 = self._perf()
            spun = self._elapsed(before, start) if spin else 0.0
            host.append(max(0.0, (t1 - t0) * 1e3 - spun))
            launch.append((c1 - c0) * 1e3)
            events.append(self._elapsed(start, end) if self.cuda else (t1 - t0) * 1e3)
            if checksums:
                try:
                    outs = flatten(out)[0] if fn is None else results(out, inputs, self.mutated)[0]
                except OutputError:
                    outs = []
                sums.append([checksum(o, seed + i) for o in outs])
            previous = inputs  # keep the last inputs alive: the next ones get new storage
            del out
        del previous
        if spin and warmup and fn is not None and launch:
            steady = launch[1:] or launch  # the first call may compile
            self.spin_ms = min(SPIN_CAP_MS, max(SPIN_MIN_MS, 1.25 * max(steady) + 0.02))
        return {"events_ms": events, "host_ms": host, "launch_ms": launch, "checksums": sums}


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
