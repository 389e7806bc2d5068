"""test_sends.py: the worker tests' requests carry egg's own defaults.

The worker has no defaults of its own: egg fills in every field of a
request (src/eval/eval.c, eval_opts_init), and the worker tests' clients
fill them in from wlib.EGG_SENDS instead. This runs the real egg once
(`egg eval --device cpu`) with the worker recording what it is sent
(EGG_WORKER_RECORD, faults.py) and compares field by field, so that a
default changed in egg and not in wlib fails here rather than letting the
worker tests exercise settings egg never sends. Per-request fields (ids,
sources, the device, the lock, time limits, which each test sets for its
own case) are not compared."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wlib import EGG_SENDS, ROOT, TASKS, Tap, full_request  # noqa: E402

PER_REQUEST = {"id", "op", "device", "task_source", "kernel_source", "lock", "timeout_s"}


def main() -> int:
    tap = Tap()
    egg = os.path.join(ROOT, "build", "egg")
    if not tap.ok(os.access(egg, os.X_OK), "build/egg exists (make builds it)", egg):
        return tap.done()
    with tempfile.TemporaryDirectory(prefix="egg-sends-") as tmp:
        record = os.path.join(tmp, "requests.jsonl")
        env = dict(os.environ, EGG_STORE=os.path.join(tmp, "store"), EGG_WORKER_RECORD=record)
        p = subprocess.run([egg, "eval", "--device", "cpu", "--json", os.path.join(TASKS, "row_sum.py"),
                            os.path.join(TASKS, "row_sum_kernel.py")], env=env, capture_output=True, text=True,
                           timeout=600)
        tap.ok(p.returncode == 0, "egg eval of an honest kernel succeeds", p.stderr[-2000:])
        sent = [json.loads(line) for line in open(record)] if os.path.exists(record) else []
    by_op = {r.get("op"): r for r in sent}
    for op in ("baseline", "eval"):
        egg_req = by_op.get(op)
        if not tap.ok(egg_req is not None, f"egg sent a {op} request", [r.get("op") for r in sent]):
            continue
        ours = full_request({"op": op, "device": "cpu", "task_source": "", "kernel_source": "" if op == "eval" else None})
        fields = (set(egg_req) | set(ours)) - PER_REQUEST
        differ = {k: (egg_req.get(k, "<absent>"), ours.get(k, "<absent>")) for k in sorted(fields)
                  if egg_req.get(k, "<absent>") != ours.get(k, "<absent>")}
        tap.ok(not differ, f"the worker tests' {op} request carries what egg sends ({len(fields)} fields)",
               "\n".join(f"{k}: egg {a!r}, wlib {b!r}" for k, (a, b) in differ.items()))
    tap.ok(set(EGG_SENDS) - PER_REQUEST >= {"precision", "clock", "warmup", "iters", "trials", "truth", "timing"},
           "wlib states the evaluation settings this test compares")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
