"""test_adversarial.py: every exploit class of docs/threat-model.md against the real
worker: each adversarial candidate must be rejected at the expected stage (or
timed honestly), and the honest controls must pass. Prints the table."""
from __future__ import annotations

import glob
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wlib import ROOT, TASKS, Tap, Worker  # noqa: E402

ADV = os.path.join(ROOT, "tests", "adversarial")


def header(path: str) -> dict:
    meta = {}
    for line in open(path):
        if not line.startswith("#"):
            break
        key, _, value = line[1:].partition(":")
        meta[key.strip()] = value.strip()
    return meta


def task_path(name: str) -> str:
    p = os.path.join(TASKS, f"{name}.py")
    return p if os.path.exists(p) else os.path.join(ADV, f"task_{name}.py")


def main() -> int:
    device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    tap = Tap()
    w = Worker("cuda" if device.startswith("cuda") else "cpu")
    # A candidate that looks for the reference's Model in sys.modules (c02)
    # must find the task's and nothing else: the worker's own modules define
    # no Model with get_init_inputs (the program runtime does, as text a
    # composed program carries: it is never imported by the worker).
    every_module = (
        "import importlib, pkgutil, sys, egg_worker\n"
        "templates = {'egg_worker.program.model_runtime', 'egg_worker.program.compose_runtime'}\n"
        "for info in pkgutil.walk_packages(egg_worker.__path__, 'egg_worker.'):\n"
        "    if info.name not in templates:\n"
        "        importlib.import_module(info.name)\n"
        "print(sorted(n for n, m in list(sys.modules.items()) if isinstance(getattr(m, 'Model', None), type)"
        " and callable(getattr(m, 'get_init_inputs', None))))\n")
    looks = subprocess.run([sys.executable, "-c", every_module],
                           cwd=os.path.join(ROOT, "worker"), capture_output=True, text=True)
    tap.ok(looks.returncode == 0 and looks.stdout.strip() == "[]",
           "the worker's own modules put nothing that looks like a task in sys.modules", looks.stdout + looks.stderr)
    table = []
    honest_ms: dict = {}
    # The honest controls h* run first: others are timed against them.
    paths = sorted(glob.glob(os.path.join(ADV, "[ch][0-9]*.py")),
                   key=lambda p: (not os.path.basename(p).startswith("h"), p))
    only = os.environ.get("EGG_ADV_ONLY", "").split()

    def check_no_process(cand: str, pattern: str) -> None:
        left = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.strip()
        if left:  # say who holds it, for the diagnosis
            left = subprocess.run(["ps", "-o", "pid,ppid,pgid,sid,user,stat,etime,args", "-p",
                                   ",".join(left.split()), "-p", str(w.p.pid)],
                                  capture_output=True, text=True).stdout
        tap.ok(not left, f"{cand}: no '{pattern}' process survives its evaluation", left)

    for path in paths:
        meta = header(path)
        name = os.path.basename(path)
        if only and not any(name.startswith(o) for o in only):
            continue
        if meta.get("device") == "cuda" and device == "cpu":
            tap.skip(f"{name}: {meta['class']}", "needs a GPU (run on the H200)")
            continue
        expect = meta["expect"].split()
        sizes = {"iters": 3, "warmup": 1} if device == "cpu" else {"iters": 50, "warmup": 5}
        t0 = time.monotonic()
        r = w.call({"op": "eval", "device": device, "task_source": open(task_path(meta["task"])).read(),
                    "kernel_source": open(path).read(), "trials": 5, "timeout_s": 300.0, **sizes})
        if r.get("id") != w.n:
            # Not the answer to this request: a reply forged by the candidate
            # (or one left over from a request it disturbed).
            tap.ok(False, f"{name}: the reply answers this request (id {w.n})", r)
            continue
        if not r.get("ok"):
            tap.ok(False, f"{name}: the worker answered", r)
            continue
        res = r["result"]
        got = f"{res['verdict']} {res['stage']}"
        if expect[0] == "pass":
            good = res["verdict"] == "pass"
        else:
            good = res["verdict"] == "fail" and res["stage"] in expect[1].split("|")
        for extra in expect[2 if expect[0] != "pass" else 1:]:
            kind, _, value = extra.partition(":")
            if kind == "flag":
                good = good and any(f.startswith(value) for f in res["flags"])
            elif kind == "honest":
                # honest:CONTROL[:FACTOR]: at least FACTOR (0.9 unless given)
                # times the control's time. The CPU's interpreted times are
                # noisy: CPU candidates give a lower factor.
                value, _, factor = value.partition(":")
                ref = honest_ms.get(value)
                fair = ref is not None and res.get("kernel_ms") is not None and \
                    res["kernel_ms"] >= float(factor or 0.9) * ref
                tap.ok(fair, f"{name}: timed honestly ({res.get('kernel_ms')} ms vs {ref} ms for {value})")
            elif kind == "noprocess":
                # The worker sweeps leftovers when an evaluation ends (and
                # again before the next one starts): none may be alive now.
                check_no_process(name, value)
        if res["verdict"] == "pass":
            honest_ms[name] = res["kernel_ms"]
        ms = f"{res['kernel_ms']:.4f} ms" if res.get("kernel_ms") else ""
        table.append((meta["class"], name, got, ms, res.get("reason") or ", ".join(res["flags"][-1:])))
        print(f"# {name}: {got} in {time.monotonic() - t0:.1f} s", flush=True)
        tap.ok(good, f"{name} ({meta['class']}): expected {meta['expect']}, got {got}",
               f"reason: {res.get('reason')}\nflags: {res.get('flags')}\nlog: {res.get('log', '')[-1500:]}")
    # The worker survives every one of them.
    r = w.eval(os.path.join(TASKS, "softmax.py"), open(os.path.join(TASKS, "softmax_kernel.py")).read(), device=device)
    tap.ok(r.get("ok") and r["result"]["verdict"] == "pass", "the worker still evaluates honest kernels afterwards", r)
    w.close()
    print("# class | candidate | verdict | kernel time | reason or last flag")
    for row in table:
        print("# " + " | ".join(str(x)[:150] for x in row))
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
