"""wclient.py: a minimal client of the eval worker protocol for the benchmark scripts."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "worker"))
from wlib import full_request, read_reply  # noqa: E402  (egg's settings for every field left out)


class Worker:
    def __init__(self, device_kind: str):
        self.t_start = time.perf_counter()
        self.p = subprocess.Popen([sys.executable, "-I", os.path.join(ROOT, "worker", "egg-worker.py"), "serve",
                                   "--device", device_kind], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        self.hello = json.loads(self.p.stdout.readline())
        self.t_ready = time.perf_counter()
        self.n = 0

    def call(self, req: dict) -> dict:
        self.n += 1
        self.p.stdin.write(json.dumps(dict(full_request(req), id=self.n)) + "\n")
        self.p.stdin.flush()
        reply = read_reply(self.p.stdout, self.n)
        if not reply.get("ok"):
            raise RuntimeError(reply)
        return reply["result"]

    def close(self) -> None:
        try:
            self.p.stdin.write(json.dumps({"op": "shutdown", "id": 0}) + "\n")
            self.p.stdin.flush()
        except OSError:
            pass
        self.p.wait(timeout=60)


def eval_request(task: str, kernel: str, device: str, **kw) -> dict:
    req = {"op": "eval", "device": device, "task_source": open(task).read(), "kernel_source": open(kernel).read(),
           "trials": 5, "warmup": 10, "iters": 100, "timeout_s": 600.0}
    req.update(kw)
    return req
