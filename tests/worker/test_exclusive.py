"""test_exclusive.py: while one job times its kernel, no other job on the
same device runs device work. Three workers share one device lock and
evaluate concurrently; every evaluation reports the span of its timed loop
(timing.locked_at .. released_at) and the spans of its loading and trials
(work_spans); no work span of one job may overlap another job's timed span.
(On the H200, a 6.4 GB trial beside a timed loop doubled an eager baseline.)"""
from __future__ import annotations

import os
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wlib import TASKS, Tap, Worker  # noqa: E402

JOBS_PER_WORKER = 3


def main() -> int:
    tap = Tap()
    lock_dir = tempfile.mkdtemp(prefix="egg-excl-")
    lock = f"cpu-excl-{os.getpid()}"
    kernel = open(os.path.join(TASKS, "bias_relu_scale_kernel.py")).read()
    task = os.path.join(TASKS, "bias_relu_scale.py")
    workers = [Worker("cpu", env={"EGG_LOCK_DIR": lock_dir}) for _ in range(3)]
    results: list = []
    mu = threading.Lock()

    def run(w: Worker, n: int) -> None:
        for _ in range(n):
            r = w.eval(task, kernel, lock=lock, iters=20, warmup=2)
            with mu:
                results.append(r)

    threads = [threading.Thread(target=run, args=(w, JOBS_PER_WORKER)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for w in workers:
        w.close()
    evals = [r.get("result") or {} for r in results]
    passed = [e for e in evals if e.get("verdict") == "pass"]
    tap.ok(len(passed) == 3 * JOBS_PER_WORKER, f"every evaluation passed ({len(passed)} of {3 * JOBS_PER_WORKER})",
           str([e.get("reason") for e in evals if e.get("verdict") != "pass"])[:400])
    timed = [(i, e["timing"]["locked_at"], e["timing"]["released_at"]) for i, e in enumerate(passed)]
    work = [(i, a, b) for i, e in enumerate(passed) for a, b in e.get("work_spans") or []]
    tap.ok(len(work) >= len(passed) * 6, f"every evaluation reports its load and trial spans ({len(work)} spans)")
    overlaps = [(i, j) for i, a, b in timed for j, c, d in work if i != j and c < b and a < d]
    tap.ok(not overlaps, f"no job's device work overlapped another job's timed loop ({len(overlaps)} overlaps "
           f"among {len(timed)} timed loops and {len(work)} work spans)")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
