"""test_evaluator.py: the evaluator on the cases real KernelBench tasks brought:
every output form, input variants that leave a task's domain, float64-free
input variants (peak memory measured), the float64-truth rule for
ill-conditioned references, harness failures reported as egg's own,
out-of-memory errors retried alone, and evaluations refused up front when
they cannot fit in memory."""
from __future__ import annotations

import os
import time
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wlib import ROOT, TASKS, Tap, Worker  # noqa: E402

FORMS = os.path.join(TASKS, "forms")


def read(*parts: str) -> str:
    return open(os.path.join(TASKS, *parts)).read()


def verdict(w: Worker, task: str, kernel: str | None, **kw) -> dict:
    req = {"op": "eval", "device": "cpu", "task_source": read(task), "trials": 5, "iters": 3, "warmup": 1,
           "timing": False, "timeout_s": 240.0}
    if kernel is None:
        req["selfcheck"] = True
    else:
        req["kernel_source"] = read(kernel)
    req.update(kw)
    return w.call(req)


def flags(r: dict) -> list:
    return (r.get("result") or {}).get("flags", [])


def passed(r: dict) -> bool:
    return bool(r.get("ok")) and r["result"]["verdict"] == "pass"


def with_faults(faults: str) -> Worker:
    os.environ["EGG_WORKER_FAULTS"] = faults
    try:
        return Worker("cpu")
    finally:
        del os.environ["EGG_WORKER_FAULTS"]


def variant_peak(tap: Tap) -> None:
    """Peak memory of a heavy-tailed trial variant of a 128 MB input, in a
    fresh process: at most about two copies of the input may be alive."""
    code = """
import resource, sys, torch
sys.path.insert(0, sys.argv[1])
from egg_worker.protocol import inputs
class T:
    @staticmethod
    def get_inputs():
        return [torch.rand(4096, 8192)]
torch.zeros(1)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
x = inputs.trial_inputs(T, 7, 4, torch.device("cpu"))
assert inputs.VARIANTS[4] == "heavy_tailed" and x[0].dtype == torch.float32
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
print(peak / (4096 * 8192 * 4))
"""
    p = subprocess.run([sys.executable, "-c", code, os.path.join(ROOT, "worker")], capture_output=True, text=True)
    try:
        multiple = float(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        tap.ok(False, "the heavy-tailed variant of a 128 MB input ran", p.stderr[-2000:])
        return
    print(f"# peak above start while making a heavy-tailed variant: {multiple:.2f}x the input")
    tap.ok(multiple < 2.6, f"a trial variant needs no float64 copy: peak {multiple:.2f}x the input (< 2.6x)")


def main() -> int:
    tap = Tap()
    w = Worker("cpu")

    # Output forms, with honest Triton kernels and a wrong one.
    r = verdict(w, "kl_div.py", "kl_div_kernel.py", timing=True)
    tap.ok(passed(r), "a 0-dim output (KLDiv loss) passes, timed", r)
    tap.ok(any(f.startswith("input_domain:") for f in flags(r)),
           "variants that put negative values under the task's log fall back to its own inputs, flagged", flags(r))
    r = verdict(w, "argmax.py", "argmax_kernel.py")
    tap.ok(passed(r), "an int64 output (argmax) passes", r)
    r = verdict(w, "argmax.py", "argmax_wrong_kernel.py")
    tap.ok(r.get("ok") and r["result"]["stage"] == "correctness" and "exact match" in (r["result"]["reason"] or ""),
           "a wrong int64 output fails correctness (exact match required)", r)
    r = verdict(w, "zero_mean_half.py", "zero_mean_half_kernel.py", timing=True)
    tap.ok(passed(r) and not any(f.startswith("degenerate_task") for f in flags(r)),
           "an fp16 zero-mean output passes, timed, and is not called degenerate (its trials' sums agree)", r)
    r = verdict(w, "inplace_rope.py", "inplace_rope_kernel.py", timing=True)
    tap.ok(passed(r) and any(f.startswith("in_place: the reference modifies input(s) 0") for f in flags(r)),
           "an in-place operator: a kernel that rotates q in place as the reference does passes, timed, flagged", r)
    r = verdict(w, "inplace_rope.py", "inplace_rope_untouched_kernel.py")
    tap.ok(r.get("ok") and r["result"]["stage"] == "correctness" and "output 1" in (r["result"]["reason"] or ""),
           "a kernel that returns the right norm but leaves q as it was fails: q's final value is output 1", r)
    r = verdict(w, "inplace_clamp.py", "inplace_clamp_kernel.py")
    tap.ok(passed(r) and any(f.startswith("in_place: the reference modifies input(s) 0") for f in flags(r)),
           "an in-place write that changes no byte of the task's own inputs still makes the input a result", r)
    r = verdict(w, "bias_relu_scale.py", "bias_relu_scale_firstcall_kernel.py")
    tap.ok(passed(r) and r["result"]["triton_launches"] == 1,
           "launches per call are a later call's: a first call that launches 3 (an autotuner timing its configs) "
           "counts 1", r)
    r = verdict(w, "bias_relu_scale.py", "bias_relu_scale_kernel.py")
    tap.ok(passed(r), "(a task that modifies nothing still evaluates as before)", r)
    r = verdict(w, "transposed.py", "transposed_kernel.py", timing=True)
    tap.ok(passed(r), "a non-contiguous output passes, timed", r)
    for name in sorted(os.listdir(FORMS)):
        r = verdict(w, os.path.join("forms", name), None)
        tap.ok(passed(r) and r["result"]["selfcheck"] is True and any(f.startswith("selfcheck:") for f in flags(r)),
               f"selfcheck: the output form of forms/{name} goes through the whole evaluation", r)

    # The float64 truth.
    r = verdict(w, "cancel_sum.py", "cancel_sum_kernel.py")
    tap.ok(passed(r) and any(f.startswith("ill_conditioned:") for f in flags(r)),
           "on an ill-conditioned task an fp32 kernel as accurate as PyTorch passes against float64, flagged", r)
    r = verdict(w, "cancel_sum.py", "cancel_sum_kernel.py", timing=True)
    tap.ok(passed(r), "the same kernel's timed outputs pass their check, widened as the float64 rule was", r)
    r = verdict(w, "cancel_sum.py", "cancel_sum_bf16_kernel.py")
    tap.ok(r.get("ok") and r["result"]["stage"] == "correctness" and "against float64" in r["result"]["reason"],
           "a kernel that rounds its inputs to bf16 still fails against float64", r)
    r = verdict(w, "cancel_sum.py", "cancel_sum_kernel.py", truth=False)
    tap.ok(r.get("ok") and r["result"]["stage"] == "correctness",
           "with the truth rule off, the same honest kernel misses the fp32 reference", r)

    # Sizes and refusal.
    r = w.call({"op": "size", "device": "cpu", "task_source": read("argmax.py")})
    res = r.get("result", {})
    tap.ok(r.get("ok") and res.get("input_bytes") == 64 * 256 * 4 and res.get("output_bytes") == 64 * 8,
           "the size op reads input and output bytes off the meta device", r)
    huge = ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x): return x * 2\n"
            "def get_inputs(): return [torch.rand(100_000, 1_000_000)]\ndef get_init_inputs(): return []\n")
    r = w.call({"op": "eval", "device": "cpu", "task_source": huge, "kernel_source": read("transposed_kernel.py"),
                "timing": False})
    tap.ok(not r.get("ok") and r.get("kind") == "infra" and "needs about" in r.get("error", "")
           and "GB" in r.get("error", ""), "a 400 GB task is refused up front, saying how much it needs", r)
    t0 = time.monotonic()
    r = w.call({"op": "baseline", "device": "cpu", "task_source": huge})
    tap.ok(not r.get("ok") and r.get("kind") == "infra" and "to time its baselines" in r.get("error", "")
           and "smaller sizes" in r.get("error", ""),
           f"its baselines are refused up front too, saying what to do ({time.monotonic() - t0:.1f} s)", r)
    w.close()

    variant_peak(tap)

    # Attribution: a failure inside egg's harness is egg's, with its traceback.
    w = with_faults("harness")
    r = verdict(w, "argmax.py", "argmax_kernel.py")
    tap.ok(not r.get("ok") and r.get("kind") == "infra" and "harness" in r.get("error", "")
           and "injected fault" in r.get("log", ""),
           "an exception in egg's harness is an infrastructure error with its traceback, not a verdict", r)
    w.close()

    # Out of memory: retried alone before any verdict.
    w = with_faults("candidate-oom-shared")
    r = verdict(w, "argmax.py", "argmax_kernel.py")
    tap.ok(passed(r) and r["result"]["ran_alone"] and any(f.startswith("retried_alone:") for f in flags(r)),
           "a candidate out of memory beside other jobs is evaluated again alone, and passes", r)
    w.close()
    w = with_faults("candidate-oom")
    r = verdict(w, "argmax.py", "argmax_kernel.py")
    reason = (r.get("result") or {}).get("reason") or ""
    tap.ok(r.get("ok") and r["result"]["verdict"] == "fail" and "out of memory" in reason
           and "running alone" in reason and "reference needs" in reason,
           "a candidate out of memory alone fails, saying what it allocated against the reference's need", r)
    w.close()
    w = with_faults("reference-oom-shared")
    r = verdict(w, "argmax.py", "argmax_kernel.py")
    tap.ok(passed(r) and r["result"]["ran_alone"], "the reference out of memory beside other jobs: retried alone", r)
    w.close()
    w = with_faults("reference-oom")
    r = verdict(w, "argmax.py", "argmax_kernel.py")
    tap.ok(not r.get("ok") and r.get("kind") == "infra" and "alone needs more memory" in r.get("error", ""),
           "the reference out of memory alone is an infrastructure error, never the kernel's", r)
    w.close()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
