#!/usr/bin/env python3
"""gemm-practical.py: the practical bound's table on a GPU (issue "On the GPU",
item 1): egg's own reference Triton matrix products (the calibration's
practical bound: worker/egg_worker/device/practical.py) beside cuBLAS at the
same shape and layout, one process, one GPU. Prints a markdown table: each
scheme's rate, the kernel (form and tiling) that gave it, cuBLAS's rate and
the share of it; for the fp32-accurate schemes, a third of cuBLAS's TF32
rate (their arithmetic limit: three TF32 passes) in its place.

    python3 bench/gemm-practical.py [--json OUT.json]
"""
from __future__ import annotations

import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "worker"))
from egg_worker.device import practical  # noqa: E402
from egg_worker.device.roofline import _Clock  # noqa: E402

WORDS = {"fp32_ieee": "fp32 on the FMA units (ieee)", "fp32_tf32x3": "fp32 as tf32x3",
         "fp32_presplit": "fp32 as pre-split TF32", "tf32": "TF32", "bf16": "bf16"}


def main() -> int:
    dev = torch.device("cuda")
    t0 = time.time()
    r = practical.measure(dev, _Clock(dev).seconds)
    took = time.time() - t0
    cub = r.get("cublas_flops_s", {})
    print(f"{torch.cuda.get_device_name(dev)}, torch {torch.__version__}, {r['size']}^3, measured in {took:.0f} s\n")
    print("| scheme | egg's Triton kernel TFLOP/s | kernel | cuBLAS TFLOP/s | share |")
    print("|---|---|---|---|---|")
    for s in practical.SCHEMES:
        rate = r["flops_s"].get(s)
        ref, refname = (cub.get(s), "") if s in ("tf32", "bf16") else (cub.get("tf32", 0) / 3 or None, " (TF32 / 3)")
        share = f"{100 * rate / ref:.0f}%" if rate and ref else "-"
        print(f"| {WORDS[s]} | {rate / 1e12 if rate else float('nan'):.1f} | {r['kernels'].get(s, r.get('errors', {}).get(s, '-'))} "
              f"| {ref / 1e12 if ref else float('nan'):.1f}{refname} | {share} |")
    for k, v in r.get("errors", {}).items():
        print(f"error {k}: {v}")
    if len(sys.argv) > 2 and sys.argv[1] == "--json":
        json.dump(r, open(sys.argv[2], "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
