"""test_inductor.py: what torch.compile makes of a task, as the prompts tell
it (egg_worker/protocol/inductor.py): a recorded Inductor output read as
launches in order (generated kernels with the operations they fuse,
library calls with what they run), a profile's times put to those
launches, and a baseline through the worker that carries the summary and
the code."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wlib import ROOT, TASKS, Tap, Worker  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "worker"))
from egg_worker.protocol import inductor  # noqa: E402

RECORDED = os.path.join(TASKS, "inductor", "cpu_dwconv_ln_fc_gelu.py")


def main() -> int:
    tap = Tap()
    s = inductor.summarize(open(RECORDED).read(), "cpu")
    names = [x["name"] for x in s["launches"]]
    tap.ok(names == ["cpp_fused_convolution_0", "extern_kernels.convolution", "cpp_fused_native_layer_norm_permute_1",
                     "extern_kernels.addmm", "cpp_fused_gelu_view_2"],
           "a recorded CPU output reads as its five launches in call order", names)
    tap.ok(s["generated"] == 3 and s["library"] == 2, "three generated kernels and two library calls", s)
    ln = s["launches"][2]
    tap.ok(ln["ops"] == ["native_layer_norm", "permute"] and ln["what"] == "C++",
           "a generated kernel's fused operations come from its name", ln)
    mm = s["launches"][3]
    tap.ok(mm["what"] == "PyTorch's CPU library" and mm["ops"] == ["addmm"] and "aten.addmm" in mm["aten"],
           "a library call says what it runs and the ATen operations it stands for", mm)
    g = inductor.summarize(open(RECORDED).read(), "cuda")
    tap.ok(g["launches"][1]["what"] == "cuDNN" and g["launches"][3]["what"] == "cuBLAS",
           "compiled for a GPU, a convolution is cuDNN's and a matrix product cuBLAS's", g["launches"])
    tap.ok(inductor.summarize(None) is None and inductor.summarize("x = 1\n")["launches"] == [],
           "no code, no summary; code without a call(), no launches")

    # Times: two calls of the five launches, the library calls by their host operators.
    kernels = [("cpp_fused_convolution_0", 0.010), ("cudnn_dw", 0.060), ("cpp_fused_native_layer_norm_permute_1", 0.020),
               ("sm90_gemm", 0.040), ("cpp_fused_gelu_view_2", 0.008)] * 2
    library = [(0.060, ["cudnn_dw"]), (0.040, ["sm90_gemm"])] * 2
    inductor.assign_times(g, kernels, library, 2)
    ms = [round(x["ms"], 6) for x in g["launches"]]
    tap.ok(ms == [0.01, 0.06, 0.02, 0.04, 0.008] and abs(g["device_ms"] - 0.138) < 1e-9,
           "each launch gets its time per call", (ms, g.get("device_ms")))
    tap.ok(g["launches"][1]["device_kernels"] == ["cudnn_dw"] and g["launches"][3]["device_kernels"] == ["sm90_gemm"],
           "and a library call the kernels it ran", g["launches"])
    h = inductor.summarize(open(RECORDED).read(), "cuda")
    inductor.assign_times(h, kernels, library[:3], 2)
    tap.ok(h.get("library_times_summed") and abs(h["launches"][1]["ms"] - 0.1) < 1e-9 and h["launches"][3]["ms"] == 0,
           "host operators that do not line up with the library calls: their kernels summed on the first, said so",
           h["launches"])

    # Through the worker: a baseline compiled on the CPU carries the summary and the code.
    wk = Worker()
    src = open(os.path.join(TASKS, "bias_relu_scale.py")).read()
    r = wk.call({"op": "baseline", "device": "cpu", "task_source": src, "compile_mode": "default", "iters": 3,
                 "warmup": 1})
    res = r.get("result") or {}
    summ = res.get("compile_summary") or {}
    tap.ok(r.get("ok") and summ.get("launches") and summ.get("device") == "cpu",
           "a baseline with torch.compile carries Inductor's summary", r if not r.get("ok") else summ)
    tap.ok("def call(" in (res.get("compile_code") or ""), "and its output code")
    wk.close()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
