"""test_worker.py: the eval worker's protocol: honest tasks, bad task files,
failure stages with their logs, crashes and deadlines, baselines."""
from __future__ import annotations

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wlib import TASKS, Tap, Worker  # noqa: E402
from egg_worker import children  # noqa: E402  (wlib puts the worker on the path)

TASK_NAMES = ("bias_relu_scale", "row_sum", "softmax", "linear_relu", "conv2d")

BRS = open(os.path.join(TASKS, "bias_relu_scale.py")).read()
BRS_KERNEL = open(os.path.join(TASKS, "bias_relu_scale_kernel.py")).read()

BAD_TASKS = {
    "no Model": ("import torch\ndef get_inputs(): return [torch.randn(4)]\ndef get_init_inputs(): return []\n",
                 "no 'Model'"),
    "no get_inputs": ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x): return x\n"
                      "def get_init_inputs(): return []\n", "no 'get_inputs'"),
    "get_inputs raising": ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x): return x\n"
                           "def get_inputs(): raise ValueError('boom')\ndef get_init_inputs(): return []\n",
                           "get_inputs() raised ValueError: boom"),
    "a syntax error": ("import torch\nclass Model(torch.nn.Module:\n", "syntax error in task file line 2"),
    "an unsupported output": ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x): return {'y': x}\n"
                              "def get_inputs(): return [torch.randn(4)]\ndef get_init_inputs(): return []\n",
                              "returned a dict"),
}

KERNEL_PRELUDE = "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n"

STAGE_CASES = {
    "load": (KERNEL_PRELUDE + "def broken(:\n", "syntax error in kernel line 5"),
    "load (no ModelNew)": (KERNEL_PRELUDE + "class Other(nn.Module):\n    pass\n", "defines no class ModelNew"),
    "compile": (KERNEL_PRELUDE + """
@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, tl.undefined_function(v), mask=offs < n)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        out = torch.empty_like(x)
        k[(1,)](x, out, x.numel(), BLOCK=1024)
        return out
""", "undefined_function"),
    "run": (KERNEL_PRELUDE + """
class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls > 1:
            raise IndexError("index 99 is out of bounds")
        from triton.language import constexpr
        raise IndexError("index 99 is out of bounds")
""", "IndexError: index 99 is out of bounds"),
}


def main() -> int:
    tap = Tap()
    w = Worker("cpu")
    tap.ok(w.hello.get("event") == "hello" and w.hello.get("device_kind") == "cpu",
           "the worker says hello with its versions and device kind", w.hello)
    tap.ok("network_isolation" in w.hello, "the hello reports whether candidates get network isolation")

    for name in TASK_NAMES:
        r = w.eval(os.path.join(TASKS, f"{name}.py"), open(os.path.join(TASKS, f"{name}_kernel.py")).read())
        res = r.get("result", {})
        tap.ok(r.get("ok") and res.get("verdict") == "pass" and res.get("correct_trials") == 5
               and res.get("kernel_ms", 0) > 0 and res.get("triton_launches", 0) >= 1
               and res["timing"]["iters"] == 3,
               f"the honest {name} kernel passes 5 trials and is timed", r)
    steps = [s for s, _ in w.steps]
    want = ["loading the task and the kernel", "correctness trial 1/5 (first call: compiling)"] + \
        [f"correctness trial {t}/5" for t in range(2, 6)] + \
        ["timing: waiting for the device", "timing: 1 warm-up calls, 3 timed calls",
         "timing: checking the outputs of timed calls"]
    tap.ok(steps == want and all(a[1] <= b[1] for a, b in zip(w.steps, w.steps[1:])),
           "an evaluation's progress lines come before its reply: each step once, in order, time rising", w.steps)

    for what, (src, msg) in BAD_TASKS.items():
        r = w.call({"op": "eval", "device": "cpu", "task_source": src, "kernel_source": BRS_KERNEL,
                    "iters": 2, "warmup": 1})
        tap.ok(not r.get("ok") and r.get("kind") == "input" and msg in r.get("error", ""),
               f"a task with {what} is the user's input error: '{msg}'", r)

    for stage, (src, msg) in STAGE_CASES.items():
        r = w.eval(os.path.join(TASKS, "bias_relu_scale.py"), src)
        res = r.get("result", {})
        want = stage.split()[0]
        tap.ok(res.get("verdict") == "fail" and res.get("stage") == want
               and (msg in (res.get("reason") or "") or msg in (res.get("log") or "")),
               f"a kernel failing at {stage} is reported at that stage with '{msg}'", res)
        tap.ok(len(res.get("log") or "") <= 4500, f"the {stage} log is trimmed ({len(res.get('log') or '')} chars)")

    # A log far over the limit: its head and its tail (where the error is) stay.
    noisy = KERNEL_PRELUDE + """
import sys
for i in range(3000):
    print(f"noise line {i} " + "x" * 60, file=sys.stderr)
raise ValueError("the real error, at the very end: " + "y" * 9000 + " END-OF-ERROR")
"""
    r = w.eval(os.path.join(TASKS, "bias_relu_scale.py"), noisy)
    log = r.get("result", {}).get("log") or ""
    tap.ok(r.get("result", {}).get("stage") == "load" and 3000 < len(log) <= 4500 and "characters cut" in log
           and "END-OF-ERROR" in log, f"a 200 KB log is trimmed to {len(log)} characters, keeping its tail", log[-300:])

    crash = KERNEL_PRELUDE + """
import ctypes


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()

    def forward(self, x):
        ctypes.string_at(0)
"""
    r = w.eval(os.path.join(TASKS, "bias_relu_scale.py"), crash)
    res = r.get("result", {})
    tap.ok(res.get("verdict") == "fail" and "SIGSEGV" in (res.get("reason") or ""),
           "a segfaulting candidate is a failed verdict naming the signal", res)
    hang = KERNEL_PRELUDE + """
class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()

    def forward(self, x):
        while True:
            pass
"""
    r = w.eval(os.path.join(TASKS, "bias_relu_scale.py"), hang, timeout_s=8)
    res = r.get("result", {})
    tap.ok(res.get("verdict") == "fail" and res.get("reason") == "timed out",
           "a candidate past its deadline is killed and reported as timed out", res)
    r = w.eval(os.path.join(TASKS, "bias_relu_scale.py"), BRS_KERNEL)
    tap.ok(r.get("result", {}).get("verdict") == "pass", "the worker lives on after a crash and a timeout", r)

    # A worker started with credentials in its environment (egg removes them
    # before starting it; here they are present, so that the worker's own
    # scrubbing is what is tested).
    secret = KERNEL_PRELUDE + """
import os
raise RuntimeError("env: " + repr(sorted(k for k in os.environ if "KEY" in k or "TOKEN" in k))
                   + " values: " + str(sum("leakcheck" in v for v in os.environ.values())))
"""
    keyed = Worker(env={"EGG_API_KEY": "sk-leakcheck-1", "GITHUB_TOKEN": "leakcheck-2",
                        "AWS_SECRET_ACCESS_KEY": "leakcheck-3"})
    r = keyed.eval(os.path.join(TASKS, "bias_relu_scale.py"), secret)
    keyed.close()
    tap.ok("env: [] values: 0" in (r.get("result", {}).get("reason") or ""),
           "with keys in the worker's environment, the candidate sees no key or token variable", r)

    r = w.call({"op": "eval", "device": "cuda:0", "task_source": BRS, "kernel_source": BRS_KERNEL})
    tap.ok(not r.get("ok") and r.get("kind") == "input" and "serves cpu" in r.get("error", ""),
           "a CPU worker refuses GPU jobs as an input error", r)

    r = w.call({"op": "eval", "device": "cpu", "task_source": BRS, "kernel_source": BRS_KERNEL, "clock": "wall"})
    tap.ok(not r.get("ok") and r.get("kind") == "protocol" and "unknown clock 'wall'" in r.get("error", ""),
           "an unknown clock is refused (egg checks the user's words before: a protocol error)", r)

    r = w.call({"op": "baseline", "device": "cpu", "task_source": BRS, "iters": 3, "warmup": 1, "compile_mode": "none"})
    res = r.get("result", {})
    tap.ok(r.get("ok") and res.get("eager_ms", 0) > 0 and res["eager"]["iters"] == 3,
           "the baseline op times the eager reference", r)
    r = w.call({"op": "baseline", "device": "cpu", "task_source": BAD_TASKS["no Model"][0]})
    tap.ok(not r.get("ok") and r.get("kind") == "input", "a baseline of a bad task is an input error", r)

    r = w.call({"op": "nonsense"})
    tap.ok(not r.get("ok") and "unknown op" in r.get("error", ""), "an unknown op is refused", r)
    r = w.call({"op": "eval", "device": "cpu", "task_source": BRS, "kernel_source": BRS_KERNEL, "selfcheck": False,
                "trials": 5}, complete=False)
    tap.ok(not r.get("ok") and r.get("kind") == "protocol" and "lacks" in r.get("error", "")
           and "precision" in r.get("error", ""),
           "a request without every setting is refused, naming what it lacks (the worker has no defaults)", r)
    r = w.call({"op": "eval", "device": "cpu", "task_source": BRS, "kernel_source": BRS_KERNEL, "trials": "5"})
    tap.ok(not r.get("ok") and r.get("kind") == "protocol" and "'trials' has the wrong type" in r.get("error", ""),
           "a setting of the wrong type is refused", r)
    r = w.call({"op": "eval", "device": "cpu", "task_source": BRS, "kernel_source": BRS_KERNEL, "trails": 5})
    tap.ok(not r.get("ok") and r.get("kind") == "protocol" and "unknown field 'trails'" in r.get("error", ""),
           "a misspelt field is refused rather than ignored", r)
    w.close()
    oom_words(tap)
    return tap.done()


def oom_words(tap) -> None:
    """A job's process SIGKILLed while the kernel's OOM-kill count rose is
    described as killed by the OOM killer; without that rise, as a SIGKILL."""
    class NoChannel:
        def close(self):
            pass

    real = children.oom_kills
    try:
        for rose, want in ((True, "killed by the kernel's OOM killer"), (False, "killed by SIGKILL")):
            pid = os.fork()
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            children.oom_kills = lambda: 7
            c = children.Child(pid, NoChannel(), os.devnull, "reference")
            os.kill(pid, signal.SIGKILL)
            children.oom_kills = (lambda: 8) if rose else (lambda: 7)
            said = c.killed_from_outside() or ""
            tap.ok(said.startswith(want), f"a SIGKILL {'with' if rose else 'without'} an OOM kill counted by the "
                   f"kernel reads '{want}'", said)
    finally:
        children.oom_kills = real


if __name__ == "__main__":
    sys.exit(main())
