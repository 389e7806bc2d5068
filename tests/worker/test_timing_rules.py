"""test_timing_rules.py: the checks on a timed loop at their boundaries (the
timing floor on a GPU, the wall-clock cross-check's factor of 4 and its
slack, work outside the timed stream, the launch_bound and unstable flags),
on hand-made statistics, and the timed outputs' summaries (checksums.py) at
theirs, and the one-read Triton kernel that sums large outputs on a GPU
(fastsums.py) against the PyTorch path, in Triton's interpreter: no
process, no GPU needed."""
from __future__ import annotations

import os
import sys

os.environ["TRITON_INTERPRET"] = "1"  # fastsums' kernel on the CPU, before triton is imported
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wlib import ROOT, Tap  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "worker"))
import torch  # noqa: E402

from egg_worker.protocol import checksums  # noqa: E402
from egg_worker.protocol.job import Verdict, timing_rules  # noqa: E402


def st(median: float, mean: float | None = None, cv: float = 0.01) -> dict:
    return {"median": median, "mean": median if mean is None else mean, "cv": cv}


def verdict(*args, **kw):
    """(reason or None, shared, flags) of timing_rules(*args)."""
    try:
        return None, False, timing_rules(*args, **kw)
    except Verdict as v:
        return v.reason, v.shared, []


def main() -> int:
    tap = Tap()
    gpu = ("cuda:0", "cuda_events_gpu")
    host = st(0.05)

    # The floor: nothing real runs in under 1.5 us on a GPU.
    r, _, _ = verdict(st(0.0014), host, 0.0, 0.02, *gpu, None, 0.1)
    tap.ok(r and "shorter than a kernel launch" in r, "a 1.4 us kernel time on a GPU is a tampered timer", r)
    r, _, _ = verdict(st(0.0016), st(0.001), 0.0, 0.02, *gpu, None, 0.1)
    tap.ok(r is None, "1.6 us stands", r)
    r, _, _ = verdict(st(0.0010), st(0.001), 0.0, 0.25, "cpu", "cpu_perf_counter", None, 0.0)
    tap.ok(r is None, "the floor does not apply on the CPU", r)

    # The wall-clock cross-check: mean below a quarter of the wall clock's time
    # per call, minus the slack, fails; the failure may be the load's (shared).
    r, shared, _ = verdict(st(0.24, 0.24), host, 1.0, 0.0, *gpu, None, 0.1)
    tap.ok(r and "disagrees with the trusted wall clock" in r and shared,
           "a mean of 0.24 ms against 1.0 ms of wall clock per call fails, retried alone (shared)", r)
    r, _, _ = verdict(st(0.26, 0.26), st(0.2), 1.0, 0.0, *gpu, None, 0.1)
    tap.ok(r is None, "0.26 ms against 1.0 ms passes (within the factor of 4)", r)
    r, _, _ = verdict(st(0.20, 0.20), st(0.2), 1.0, 0.06, *gpu, None, 0.1)
    tap.ok(r is None, "0.20 ms passes when the slack (0.06 ms) covers the gap", r)
    r, _, _ = verdict(st(0.18, 0.18), st(0.2), 1.0, 0.06, *gpu, None, 0.1)
    tap.ok(r and "disagrees with the trusted wall clock" in r,
           "0.18 ms fails: the slack (0.06 ms) covers only down to 0.19 ms", r)

    # Host time per call far above the stream's time: work outside the timed stream.
    r, shared, _ = verdict(st(0.2), st(0.41), 0.2, 0.02, *gpu, None, 0.1)
    tap.ok(r and "work outside the timed stream" in r and shared, "host 0.41 ms over stream 0.2 ms fails", r)
    r, _, _ = verdict(st(0.2), st(0.39), 0.2, 0.02, *gpu, None, 0.1)
    tap.ok(r is None, "host 0.39 ms over stream 0.2 ms passes (1.5x + 0.1 ms)", r)

    # Flags.
    _, _, flags = verdict(st(0.5), st(0.2), 0.5, 0.02, *gpu, 0.3, 0.2)
    tap.ok(any(f.startswith("launch_bound") for f in flags), "a launch longer than the spin is flagged", flags)
    _, _, flags = verdict(st(0.5), st(0.2), 0.5, 0.02, "cuda:0", "cuda_events_latency", 0.3, 0.2)
    tap.ok(not flags, "not under the latency clock, which includes the launch anyway", flags)
    _, _, flags = verdict(st(2.0, cv=0.06), st(0.2), 2.0, 0.02, *gpu, None, 0.1)
    tap.ok(any(f.startswith("unstable_timing") for f in flags), "cv 6% on a 2 ms kernel is unstable", flags)
    _, _, flags = verdict(st(0.5, cv=0.2), st(0.2), 0.5, 0.02, *gpu, None, 0.1)
    tap.ok(not flags, "but not on a kernel under 1 ms, where cv is noise", flags)
    summaries(tap)
    fused_sums(tap)
    return tap.done()


def summaries(tap: Tap) -> None:
    """The row sums in float32 (checksums._row_sums) against float64, on
    sizes with and without a partial row, and the bounds of checksum_close."""
    torch.manual_seed(1)
    close = checksums.checksum_close
    for n in (1, checksums.ROW - 1, checksums.ROW, 5 * checksums.ROW + 7, (1 << 21) + 77, 3_000_001):
        x = torch.randn(n) * 3 + 1
        s = checksums.checksum(x, 7)
        x64 = x.double()
        w = checksums._weights_for(x.device, x.dtype).double()
        idx = torch.arange(n) % w.numel()
        exact = [float(x64.sum()), float((x64 * w[idx]).sum()), float(x64.abs().sum())]
        err = max(abs(a - b) for a, b in zip(s[:3], exact)) / exact[2]
        tap.ok(err <= checksums.ROUNDING / 2, f"{n} elements: the sums agree with float64 within the rounding "
               f"allowance ({err:.2g} of sum |x|, allowed {checksums.ROUNDING / 2:.2g})")
        within = checksums.checksum(x * (1 + 0.9e-4), 7)
        shifted = checksums.checksum(x + 0.05, 7)
        tap.ok(close(s, within, 1e-4, 1e-4) and not close(s, shifted, 1e-4, 1e-4),
               f"{n} elements: an output within tolerance matches, one shifted by 0.05 does not")
    x = torch.randn(1 << 20)
    stale = torch.randn(1 << 20)
    tap.ok(not close(checksums.checksum(x, 3), checksums.checksum(stale, 3), 1e-4, 1e-4),
           "an unrelated output of the same distribution does not match (the sampled elements)")
    y = x.clone()
    y[12345] = float("nan")
    tap.ok(not close(checksums.checksum(x, 3), checksums.checksum(y, 3), 1e-4, 1e-4),
           "one NaN where the reference has none does not match (the counts)")


def fused_sums(tap: Tap) -> None:
    """checksum through fastsums' kernel (as in the candidate's process on a
    GPU) against the PyTorch path (as in the reference's): the same
    summary within the rounding allowance, with no tolerance at all, on
    sizes around a row and the weights' period, in the three dtypes it
    takes; the careful path after a NaN; and the PyTorch path where the
    kernel does not apply or cannot run."""
    torch.manual_seed(2)
    close, limit, real = checksums.checksum_close, checksums.FUSED_MIN_BYTES, checksums._fused_sums
    ran = []

    def recorded(flat):
        ran.append(flat.dtype)
        return real(flat)

    def both(x, seed):
        """(PyTorch path's summary, the kernel's, whether the kernel ran)."""
        plain = checksums.checksum(x, seed)
        ran.clear()
        checksums.enable_fused("cpu")
        fused = checksums.checksum(x, seed)
        took = bool(ran) and checksums._fused == "cpu"
        checksums._fused = None
        return plain, fused, took

    checksums.FUSED_MIN_BYTES, checksums._fused_sums = 0, recorded
    try:
        cases = [(n, torch.float32) for n in (1, checksums.ROW - 1, 3 * checksums.ROW * 32 + 5,
                                              checksums.CPU_CHUNK + 77)]
        cases += [(4099, torch.float16), (4099, torch.bfloat16)]
        for n, dtype in cases:
            plain, fused, took = both((torch.randn(n) * 3 + 1).to(dtype), 5)
            tap.ok(took and close(plain, fused, 0.0, 0.0) and close(fused, plain, 0.0, 0.0)
                   and fused[3:] == plain[3:],
                   f"{n} x {dtype}: the one-read kernel's summary is the PyTorch path's within the rounding "
                   f"allowance, counts and samples equal", [plain[:3], fused[:3]])
        x = torch.randn(3000)
        x[17], x[2000] = float("nan"), float("inf")
        plain, fused, took = both(x, 4)
        tap.ok(took and fused[3:6] == [1.0, 1.0, 0.0] and close(plain, fused, 0.0, 0.0),
               "a NaN and an Inf: counted by the careful path after the kernel's sums", fused[:6])
        plain, fused, took = both(torch.randn(64, 2)[:, 0], 4)
        tap.ok(took and close(plain, fused, 0.0, 0.0), "a strided output: copied, then summed by the kernel")
        _, _, took = both(torch.randn(100, dtype=torch.float64), 4)
        tap.ok(not took, "a float64 output keeps the PyTorch path")
        checksums.FUSED_MIN_BYTES = 4 * 1000
        _, _, took_small = both(torch.randn(999), 4)
        _, _, took_large = both(torch.randn(1000), 4)
        tap.ok(took_large and not took_small, "the kernel from FUSED_MIN_BYTES on, not below")
        checksums.FUSED_MIN_BYTES = 0
        checksums._fused_sums = lambda flat: ran.append(flat.dtype) or real(object())  # the kernel raises
        x = torch.randn(5000)
        plain, fused, _ = both(x, 9)
        tap.ok(fused == plain and ran and checksums._fused is None,
               "the kernel failing: the PyTorch path's summary, and the kernel not tried again")
    finally:
        checksums.FUSED_MIN_BYTES, checksums._fused_sums, checksums._fused = limit, real, None


if __name__ == "__main__":
    sys.exit(main())
