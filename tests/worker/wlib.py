"""wlib.py: helpers for the worker tests: a worker over stdio, TAP output."""
from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.environ.get("EGG_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TASKS = os.path.join(ROOT, "tests", "tasks")
sys.path.insert(0, os.path.join(ROOT, "worker"))
from egg_worker.messages import REQUESTS  # noqa: E402

# What egg sends on the CPU when the user sets nothing (src/eval/eval.c,
# eval_opts_init; profile.c): the worker has no defaults of its own, so
# these clients, standing in for egg, fill in every field a test leaves out.
# test_sends.py checks them against the requests the real egg sends (the
# time limit excepted: egg's depends on the op, and each test picks its own).
EGG_SENDS = {"timeout_s": 300.0, "lock": None, "precision": "fp32", "clock": "gpu", "warmup": 1, "iters": 5,
             "kernel_source": None, "selfcheck": False, "trials": 5, "timing": True, "truth": True, "atol": None,
             "rtol": None, "compile_mode": "default", "calls": 1, "ncu_args": [], "ncu": None, "allow_torch": False,
             "measure": False, "name": "task.py", "wall_iters": 100, "wall_rounds": 3,
             "ways": ["eager", "plain", "compile", "compile_cudagraphs"]}


def full_request(req: dict) -> dict:
    """`req` with every field its op needs that it leaves out set as egg sets
    it; an unknown op is sent as it is (the worker refuses it)."""
    fields = REQUESTS.get(req.get("op"), {})
    out = {k: v for k, v in EGG_SENDS.items() if k in fields}
    out.update(req)
    if req.get("op") == "eval" and "selfcheck" not in req:
        out["selfcheck"] = out.get("kernel_source") is None
    return out


def read_reply(stdout, rid, steps: list | None = None) -> dict:
    """The reply line of request `rid`; the job's progress lines before it
    (worker/PROTOCOL.md) are appended to `steps` as (step, elapsed_s)."""
    while True:
        line = stdout.readline()
        if not line:
            raise RuntimeError("worker died")
        obj = json.loads(line)
        if obj.get("event") == "progress" and obj.get("id") == rid:
            if steps is not None:
                steps.append((obj["step"], obj["elapsed_s"]))
            continue
        return obj


class Worker:
    def __init__(self, device: str = "cpu", env: dict | None = None):
        """A worker for `device`; `env` adds variables to its environment
        (as if egg had not cleaned it: the worker must defend itself too)."""
        self.p = subprocess.Popen([sys.executable, "-I", os.path.join(ROOT, "worker", "egg-worker.py"), "serve",
                                   "--device", device], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, env=dict(os.environ, **(env or {})))
        self.hello = json.loads(self.p.stdout.readline())
        self.n = 0
        self.steps: list = []  # the last job's progress lines: (step, elapsed_s)

    def call(self, req: dict, complete: bool = True) -> dict:
        """One request (completed with egg's settings unless complete=False)
        and its reply."""
        self.n += 1
        req = dict(full_request(req) if complete else req, id=self.n)
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        self.steps = []
        return read_reply(self.p.stdout, self.n, self.steps)

    def eval(self, task: str, kernel_source: str, **kw) -> dict:
        req = {"op": "eval", "device": "cpu", "task_source": open(task).read(), "kernel_source": kernel_source,
               "iters": 3, "warmup": 1, "trials": 5, "timeout_s": 240.0}
        req.update(kw)
        return self.call(req)

    def close(self) -> None:
        try:
            self.call({"op": "shutdown"})
        except Exception:
            pass
        self.p.wait(timeout=30)


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond: bool, desc: str, detail: str = "") -> bool:
        self.n += 1
        if cond:
            print(f"ok {self.n} - {desc}")
        else:
            self.failed += 1
            print(f"not ok {self.n} - {desc}")
            for line in str(detail).splitlines()[:40]:
                print(f"#   {line}")
        sys.stdout.flush()
        return cond

    def skip(self, desc: str, why: str) -> None:
        self.n += 1
        print(f"ok {self.n} - {desc} # SKIP {why}")

    def done(self) -> int:
        print(f"1..{self.n}")
        return 1 if self.failed else 0
