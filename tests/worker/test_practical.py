"""test_practical.py: egg's reference Triton matrix products (device/practical.py,
the practical bound the calibration measures on a GPU) compute matrix
products in every scheme, in Triton's interpreter on the CPU: tiles that
divide the size and tiles that do not; and measure() reports each scheme's
rate, the fastest fp32-accurate one, and a scheme that fails without
losing the others."""
from __future__ import annotations

import os
import sys

os.environ["TRITON_INTERPRET"] = "1"  # before Triton is imported
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wlib import ROOT, Tap  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "worker"))
import torch  # noqa: E402
from egg_worker.device import practical  # noqa: E402


def main() -> int:
    tap = Tap()
    cpu = torch.device("cpu")
    for m, tile in ((64, (32, 32, 16)), (40, (16, 32, 16))):
        # fp16 stands in for bf16: Triton 3.6's interpreter reads bf16 dot operands as integers.
        got = practical.products(cpu, m, tile=tile, half=torch.float16)
        for scheme, (a, b, c) in got.items():
            truth = a.double() @ b.double()
            err = ((c.double() - truth).abs() / (1e-3 + 1e-3 * truth.abs())).max().item()
            tap.ok(c.shape == (m, m) and c.dtype == torch.float32 and err <= 1.0,
                   f"{scheme} at {m}^3 with {tile} tiles computes the product (worst error {err:.3g} of 1e-3)")
    tap.ok(set(got) == set(practical.SCHEMES) and set(practical.FP32_ACCURATE) <= set(practical.SCHEMES),
           "every scheme is run")

    calls = []

    def clock(fn, reps):
        calls.append(reps)
        fn()
        return 1e-3

    r = practical.measure(cpu, clock, m=32)
    tap.ok(sorted(r["flops_s"]) == sorted(practical.SCHEMES) and all(v == 2 * 32 ** 3 / 1e-3 for v in r["flops_s"].values())
           and r["fp32_best"] in practical.FP32_ACCURATE and r["size"] == 32 and "errors" not in r
           and calls == [5] * len(practical.SCHEMES),
           f"measure() times every scheme with the calibration's clock and names the fastest fp32-accurate one ({r})")
    # The clock is asked once per scheme, in SCHEMES' order.
    rates = iter([1.0, 3.0, 2.0, 9.0, 9.0])  # fp32_ieee, fp32_tf32x3, fp32_presplit, tf32, bf16
    r = practical.measure(cpu, lambda fn, reps: 2 * 32 ** 3 / next(rates), m=32)
    tap.ok(r["fp32_best"] == "fp32_tf32x3", f"the fastest fp32-accurate scheme, never tf32 or bf16 ({r})")

    real = practical._runner

    def broken(scheme, a, b, tile=None):
        if scheme == "fp32_presplit":
            raise RuntimeError("out of resources: shared memory")
        return real(scheme, a, b, tile)

    practical._runner = broken
    try:
        r = practical.measure(cpu, clock, m=32)
    finally:
        practical._runner = real
    tap.ok("fp32_presplit" not in r["flops_s"] and "out of resources" in r["errors"]["fp32_presplit"]
           and len(r["flops_s"]) == len(practical.SCHEMES) - 1,
           f"a scheme whose kernel fails is named, the others measured ({r.get('errors')})")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
