#!/usr/bin/env python3
"""fakeworker.py: a trivially fast stand-in for the eval worker (protocol of
worker/PROTOCOL.md), for measuring egg's own orchestration overhead. Every
candidate passes; its time is derived from a hash of its source, so that
different kernels get different, repeatable times."""
import hashlib
import json
import sys


def main() -> int:
    kind = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "cpu"
    out = sys.stdout
    out.write(json.dumps({"event": "hello", "protocol": 2, "device_kind": kind, "torch": "fake", "triton": "fake"}) + "\n")
    out.flush()
    for line in sys.stdin:
        req = json.loads(line)
        op = req.get("op")
        if op == "shutdown":
            out.write(json.dumps({"id": req["id"], "ok": True, "result": {}}) + "\n")
            break
        if op == "probe":
            res = {"platform": "fake", "gpus": []}
        elif op == "baseline":
            res = {"eager_ms": 1.0, "compile_ms": 0.8, "eager": {"median": 1.0}}
        elif op == "profile":
            res = {"rc": None, "csv": "", "error": "fake worker: no profiler"}
        else:
            h = int(hashlib.sha256(req.get("kernel_source") or "".encode()).hexdigest()[:8], 16)
            ms = 0.2 + (h % 1000) / 1000
            res = {"verdict": "pass", "stage": "done", "reason": None, "log": "", "trials": 5, "correct_trials": 5,
                   "kernel_ms": ms, "timing": {"median": ms, "cv": 0.0, "iters": 100}, "flags": [],
                   "triton_launches": 1, "device": req.get("device")}
        out.write(json.dumps({"id": req["id"], "ok": True, "result": res}) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
