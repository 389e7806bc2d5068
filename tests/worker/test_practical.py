"""test_practical.py: egg's reference Triton matrix products (device/practical.py,
the practical bound the calibration measures on a GPU) compute A @ W^T in
every scheme and both kernel forms (pointers, tensor-memory descriptors),
in Triton's interpreter on the CPU: tiles that divide the size and tiles
that do not; and measure() reports each scheme's rate from its fastest
tiling, the kernel that gave it, the fastest fp32-accurate one, and a
scheme that fails without losing the others."""
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
    for form in ("pointer", "tma", practical.KN):
        for m, config in ((64, (32, 32, 16, 4, 1)), (40, (16, 32, 16, 4, 1))):
            # fp16 stands in for bf16: Triton 3.6's interpreter reads bf16 dot operands as integers.
            got = practical.products(cpu, m, config=config, half=torch.float16, form=form)
            for scheme, (a, w, c) in got.items():
                truth = a.double() @ w.double().t()
                err = ((c.double() - truth).abs() / (1e-3 + 1e-3 * truth.abs())).max().item()
                tap.ok(c.shape == (m, m) and c.dtype == (a.dtype if scheme == "bf16" else torch.float32) and err <= 1.0,
                       f"{scheme} ({form}) at {m}^3 with {config[:3]} tiles computes A @ W^T in the operands' "
                       f"result dtype (worst error {err:.3g} of 1e-3)")
            want = set(practical.SCHEMES) - ({"fp32_presplit"} if form != "pointer" else set())
            tap.ok(set(got) == want, f"every scheme with a {form} kernel is run")

    calls = []

    def clock(fn, reps):
        calls.append(reps)
        fn()
        return 1e-3

    tried = sum(len(practical.CONFIGS[s]) * len(practical._forms(cpu, s)) for s in practical.SCHEMES)
    r = practical.measure(cpu, clock, m=32)
    tap.ok(sorted(r["flops_s"]) == sorted(practical.SCHEMES) and all(v == 2 * 32 ** 3 / 1e-3 for v in r["flops_s"].values())
           and r["fp32_best"] in practical.FP32_ACCURATE and r["size"] == 32 and "errors" not in r
           and calls == [5] * tried and r["cublas_flops_s"] == {},
           f"measure() times every tiling of every scheme with the calibration's clock, names the fastest "
           f"fp32-accurate one, and asks cuBLAS nothing off a GPU ({r})")
    tap.ok(r["kernels"]["tf32"] == "pointer 128x256x32, 8 warps, 3 stages",
           f"the kernel that gave each rate is named, its form and tiling ({r['kernels']})")
    # The clock is asked once per tiling, in SCHEMES' order; the fastest tiling is the scheme's rate.
    order = [(s, f, c) for s in practical.SCHEMES for f in practical._forms(cpu, s) for c in practical.CONFIGS[s]]
    speed = {"fp32_ieee": 1.0, "fp32_tf32x3": 3.0, "fp32_presplit": 2.0, "tf32": 9.0, "bf16": 9.0}
    rates = iter([speed[s] * (2 if c == practical.CONFIGS[s][-1] else 1) * (1.5 if f == practical.KN else 1)
                  for s, f, c in order])
    r = practical.measure(cpu, lambda fn, reps: 2 * 32 ** 3 / next(rates), m=32)
    tap.ok(r["fp32_best"] == "fp32_tf32x3" and r["flops_s"]["tf32"] == 18.0
           and r["kernels"]["tf32"] == "pointer 128x256x32, 8 warps, 4 stages"
           and r["kernels"]["fp32_ieee"] == "pointer, W (K, N) 128x64x32, 4 warps, 3 stages",
           f"the fastest tiling gives the rate, the fastest fp32-accurate scheme is named, never tf32 or bf16 ({r})")

    real = practical._runner

    def broken(scheme, form, config, a, w):
        if scheme == "fp32_presplit" or (scheme == "tf32" and config[3] == 4):
            raise RuntimeError("out of resources: shared memory")
        return real(scheme, form, config, a, w)

    practical._runner = broken
    try:
        r = practical.measure(cpu, clock, m=32)
    finally:
        practical._runner = real
    tap.ok("fp32_presplit" not in r["flops_s"] and "out of resources" in r["errors"]["fp32_presplit"]
           and len(r["flops_s"]) == len(practical.SCHEMES) - 1 and "tf32" not in r["errors"],
           f"a scheme none of whose kernels runs is named, the others measured; a tiling that fails is passed "
           f"over ({r.get('errors')})")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
