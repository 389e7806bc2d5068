"""repeatability.py: coefficient of variation of kernel_ms over repeated
evaluations of the same kernel (aim: <= 1% for kernels of 1 ms or more).

usage: python3 bench/repeatability.py [--runs 10] [--device cuda] TASK...
(TASK names under bench/tasks, each with TASK_kernel.py)
"""
from __future__ import annotations

import argparse
import os
import statistics

from wclient import ROOT, Worker, eval_request


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("tasks", nargs="+")
    args = ap.parse_args()
    w = Worker("cpu" if args.device == "cpu" else "cuda")
    for name in args.tasks:
        base = os.path.join(ROOT, "bench", "tasks", name)
        req = eval_request(base + ".py", base + "_kernel.py", args.device)
        times, cvs = [], []
        for _ in range(args.runs):
            res = w.call(req)
            assert res["verdict"] == "pass", res
            times.append(res["kernel_ms"])
            cvs.append(res["timing"]["cv"])
            print(f"  {name} run {len(times)}: {res['kernel_ms']:.4f} ms (within-run cv {res['timing']['cv']:.2%}, "
                  f"spin {res['timing'].get('spin_ms', 0):.3f} ms, launch {res['timing'].get('launch_median') or 0:.3f} ms, "
                  f"phases {res.get('phases_s')})", flush=True)
        mean = statistics.mean(times)
        cv = statistics.stdev(times) / mean
        print(f"{name:12s} {args.runs} evaluations: median {statistics.median(times):.4f} ms, "
              f"min {min(times):.4f}, max {max(times):.4f}, CV across evaluations {cv:.2%}, "
              f"median within-run CV {statistics.median(cvs):.2%}", flush=True)
    w.close()


if __name__ == "__main__":
    main()
