"""checksum-sums.py: what a timed output's summary costs on a GPU, by the
PyTorch path (checksums._row_sums, the reference's) and by fastsums' one-read
Triton kernel (the candidate's, for outputs from checksums.FUSED_MIN_BYTES
on), and what the kernel's first call costs in a fresh Triton cache (its
compile, paid once per candidate process). Sets the threshold.

    python3 bench/checksum-sums.py [--sizes-mb 16,256,1024,2048,3072,6442] [--reps 10]

Prints one row per size: median ms per summary of a float32 output each way,
the kernel's speed-up, and its break-even output size given the compile
cost and a timed loop's calls (warm-up, timed, calibration: about 150).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="egg-bench-sums-")  # a fresh cache: the compile counts
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "worker"))
import torch  # noqa: E402

from egg_worker.protocol import checksums  # noqa: E402

CALLS = 150  # summaries per timed loop: warm-up, timed calls and both calibrations


def median_ms(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes-mb", default="16,256,1024,2048,3072,6442")
    ap.add_argument("--reps", type=int, default=10)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("checksum-sums.py: needs a GPU", file=sys.stderr)
        return 2
    dev = torch.device("cuda")
    default_min = checksums.FUSED_MIN_BYTES
    checksums.FUSED_MIN_BYTES = 0
    checksums.enable_fused("cuda")

    def first_call_ms(dtype) -> float:
        x = torch.randn(1 << 20, device=dev).to(dtype)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        checksums.checksum(x, 1)
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) * 1e3 - median_ms(lambda: checksums.checksum(x, 1), a.reps)

    # The first call also starts Triton in this process (its driver, its key);
    # in a candidate's process the candidate's own kernels have done that, so
    # what the summary adds there is one kernel's compile: the float16 call's.
    startup_ms = first_call_ms(torch.float32)
    compile_ms = first_call_ms(torch.float16)
    print(f"# {torch.cuda.get_device_name()}: the kernel's first call {startup_ms:.0f} ms with Triton's start-up, "
          f"{compile_ms:.0f} ms for a further compile (fresh Triton cache)")
    print("| output MB | PyTorch path ms | one-read kernel ms | speed-up | saved per timed loop s |")
    print("|---|---|---|---|---|")
    per_mb = 0.0  # ms saved per summary per MB, at the largest size
    for mb in (int(s) for s in a.sizes_mb.split(",")):
        x = torch.randn(mb * (1 << 20) // 4, device=dev)
        checksums._fused = None
        slow = median_ms(lambda: checksums.checksum(x, 1), a.reps)
        checksums.enable_fused("cuda")
        fast = median_ms(lambda: checksums.checksum(x, 1), a.reps)
        same = checksums.checksum_close(_plain(x, 3), checksums.checksum(x, 3), 0.0, 0.0)
        print(f"| {mb} | {slow:.2f} | {fast:.2f} | {slow / fast:.1f}x | {CALLS * (slow - fast) / 1e3:.2f} |"
              + ("" if same else " SUMMARIES DIFFER"))
        per_mb = (slow - fast) / mb
        del x
        torch.cuda.empty_cache()
    if per_mb > 0:
        print(f"# break-even: {compile_ms / (CALLS * per_mb):.0f} MB, where {CALLS} summaries save the "
              f"{compile_ms:.0f} ms compile (checksums.FUSED_MIN_BYTES: {default_min >> 20} MB)")
    return 0


def _plain(x: torch.Tensor, seed: int) -> list:
    """The PyTorch path's summary (fastsums disabled for the call)."""
    was = checksums._fused
    checksums._fused = None
    try:
        return checksums.checksum(x, seed)
    finally:
        checksums._fused = was


if __name__ == "__main__":
    sys.exit(main())
