"""eval_overhead.py: per-candidate overhead of an evaluation: wall time minus
compile time and GPU time, with the forking worker (one warm process, a fork
per candidate) vs a fresh Python per candidate.

usage: python3 bench/eval_overhead.py [--device cuda|cpu] [--reps N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

from wclient import ROOT, Worker, eval_request

TASKS = ["bias_relu_scale", "row_sum", "softmax", "linear_relu", "conv2d"]


def overhead(res: dict, wall: float, iters: int, warmup: int) -> float:
    calls = res["trials"] + warmup + iters + 2
    gpu_s = (res["kernel_ms"] or 0) * calls / 1000.0
    return wall - (res["compile_s"] or 0) - gpu_s


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    kind = "cpu" if args.device == "cpu" else "cuda"
    iters, warmup = (3, 1) if kind == "cpu" else (100, 10)
    tdir = os.path.join(ROOT, "tests", "tasks")
    rows = []
    warm = Worker(kind)
    print(f"worker start (imports, sandbox probes): {warm.t_ready - warm.t_start:.2f} s")
    for name in TASKS:
        task, kernel = os.path.join(tdir, f"{name}.py"), os.path.join(tdir, f"{name}_kernel.py")
        req = eval_request(task, kernel, args.device, iters=iters, warmup=warmup)
        forked, fresh = [], []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            res = warm.call(req)
            wall = time.perf_counter() - t0
            forked.append(overhead(res, wall, iters, warmup))
            assert res["verdict"] == "pass", res
            print(f"  {name}: wall {wall:.2f} s, compile {res['compile_s'] or 0:.2f} s, kernel "
                  f"{res['kernel_ms']:.4f} ms, phases {res.get('phases_s')}", flush=True)
        for _ in range(args.reps):
            t0 = time.perf_counter()
            w = Worker(kind)
            res = w.call(req)
            fresh.append(overhead(res, time.perf_counter() - t0, iters, warmup))
            w.close()
        rows.append((name, statistics.median(forked), statistics.median(fresh)))
        print(f"{name:16s} overhead forking {rows[-1][1]:6.2f} s   fresh python {rows[-1][2]:6.2f} s   "
              f"ratio {rows[-1][2] / rows[-1][1]:5.2f}x", flush=True)
    warm.close()
    f = statistics.median(r[1] for r in rows)
    g = statistics.median(r[2] for r in rows)
    print(f"median over {len(rows)} tasks: forking {f:.2f} s, fresh python {g:.2f} s per candidate "
          f"({g - f:.2f} s saved, {g / f:.2f}x)")


if __name__ == "__main__":
    main()
