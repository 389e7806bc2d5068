"""kb_harness.py: judge one (task, kernel) pair with KernelBench's own evaluation
function, for the side-by-side of bench/kb-sidebyside.sh (issue "Kernels made
elsewhere"). Prints one JSON line.

    python3 bench/kb_harness.py KB_SRC TASK.py KERNEL.py

KB_SRC is the `src` folder of a KernelBench checkout (fetched, never committed).
What runs is KernelBench's `eval_kernel_against_ref` with the settings its
`scripts/eval_from_generations.py` uses (5 correctness trials, 100 timed trials,
cuda_event timing, fp32) and the Triton backend, then its optional static
checker `validate_kernel_static` on the kernel's text. The one thing replaced
is `kernelbench.utils`, which the evaluation imports only for the GPU vendor
and which otherwise pulls in LLM clients (openai, litellm, dotenv): here it
answers "nvidia".
"""
from __future__ import annotations

import json
import os
import sys
import time
import types

t0 = time.time()
kb_src, task, kernel = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, kb_src)
stub = types.ModuleType("kernelbench.utils")
stub.get_gpu_vendor = lambda device=None: "nvidia"
sys.modules["kernelbench.utils"] = stub

row = {"task": task, "kernel": kernel}
try:
    import torch
    from kernelbench.eval import eval_kernel_against_ref
    from kernelbench.kernel_static_checker import validate_kernel_static
except Exception as e:  # noqa: BLE001 - an import failure is the harness's, said as such
    row["harness_error"] = f"import: {type(e).__name__}: {e}"
    print(json.dumps(row))
    sys.exit(3)

ref_src, new_src = open(task).read(), open(kernel).read()
try:
    valid, errors, warnings = validate_kernel_static(new_src, backend="triton", precision="fp32")
    row["static_valid"], row["static_errors"], row["static_warnings"] = valid, errors, warnings
except Exception as e:  # noqa: BLE001
    row["static_error"] = f"{type(e).__name__}: {e}"
try:
    r = eval_kernel_against_ref(ref_src, new_src, num_correct_trials=5, num_perf_trials=100,
                                measure_performance=True, timing_method="cuda_event",
                                build_dir=None, device=torch.device("cuda:0"), backend="triton",
                                precision=torch.float32)
    if r is None:
        row["compiled"], row["correctness"] = False, False
    else:
        row["compiled"], row["correctness"] = bool(r.compiled), bool(r.correctness)
        row["runtime_us"], row["ref_runtime_us"] = r.runtime, r.ref_runtime
        md = r.metadata or {}
        row["excessive_speedup"] = bool(md.get("excessive_speedup"))
        row["metadata"] = {k: str(v)[:200] for k, v in md.items() if k not in ("hardware", "device")}
except Exception as e:  # noqa: BLE001 - KernelBench's eval raising is its verdict "not correct"
    row["compiled"], row["correctness"] = False, False
    row["raised"] = f"{type(e).__name__}: {str(e)[:200]}"
row["wall_s"] = round(time.time() - t0, 2)
sys.stdout.flush()
print("KBROW " + json.dumps(row), flush=True)
os._exit(0)  # threads or processes a candidate left behind do not hold the harness open
