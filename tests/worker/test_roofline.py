"""test_roofline.py: the work a task needs (roofline.count: FLOPs by
PyTorch's counter, least bytes per forward) on hand-checked cases, the
device calibration on the CPU, and both through the worker's protocol
(a baseline's `work`, the `calibrate` op)."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wlib import ROOT, TASKS, Tap, Worker  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "worker"))
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from egg_worker.device import roofline  # noqa: E402


class Matmul(nn.Module):
    def forward(self, a, b):
        return a @ b


class Scaled(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2.0


class MeanSq(nn.Module):
    def forward(self, x, y):
        return ((x - y) ** 2).mean()


class Attention(nn.Module):
    def __init__(self, causal):
        super().__init__()
        self.causal = causal

    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=self.causal)


class Int8Matmul(nn.Module):
    def forward(self, a, b, scale):
        return torch._int_mm(a, b).float() * scale


class Twice(nn.Module):
    def forward(self, x, v):
        return x.view(16, 16) + v


def main() -> int:
    tap = Tap()
    M, K, N = 48, 80, 24
    a, b = torch.randn(M, K), torch.randn(K, N)
    _, w = roofline.count(Matmul(), [a, b])
    tap.ok(w["flops"] == 2 * M * K * N and w["bytes"] == 4 * (M * K + K * N + M * N) and not w["half"],
           f"a matmul: 2MKN FLOPs and its two inputs and output once ({w})")

    conv = nn.Conv2d(3, 8, 3)
    x = torch.randn(2, 3, 12, 12)
    _, w = roofline.count(conv, [x])
    out = 2 * 8 * 10 * 10
    want_flops = 2 * out * 3 * 3 * 3
    want_bytes = 4 * (x.numel() + conv.weight.numel() + conv.bias.numel() + out)
    tap.ok(w["flops"] == want_flops and w["bytes"] == want_bytes,
           f"a convolution: 2 x outputs x Cin x k^2 FLOPs; input, weight, bias and output ({w}; want "
           f"{want_flops}, {want_bytes})")

    x = torch.randn(1000)
    _, w = roofline.count(Scaled(), [x])
    tap.ok(w["flops"] == 0 and w["bytes"] == 8000, f"elementwise: no counted FLOPs, 4 KB in and out ({w})")

    x, y = torch.randn(64, 32), torch.randn(64, 32)
    outs, w = roofline.count(MeanSq(), [x, y])
    tap.ok(outs.dim() == 0 and w["flops"] == 0 and w["bytes"] == 2 * 64 * 32 * 4 + 4,
           f"a reduction to a 0-dim output: two inputs and 4 bytes out ({w})")

    x = torch.randn(256)
    _, w = roofline.count(Twice(), [x, x.view(16, 16)])
    tap.ok(w["bytes"] == 1024 + 1024, f"an input and a view of it count once ({w})")

    half = nn.Linear(16, 8).to(torch.bfloat16)
    _, w = roofline.count(half, [torch.randn(4, 16, dtype=torch.bfloat16)])
    tap.ok(w["half"] and w["flops"] == 2 * 4 * 16 * 8, f"a bf16 task is marked half ({w})")

    B, H, S, D = 2, 3, 40, 16
    q = torch.randn(B, H, S, D, dtype=torch.float16)
    full = 2 * 2 * B * H * S * S * D  # QK^T and PV
    _, w = roofline.count(Attention(False), [q, q.clone(), q.clone()])
    tap.ok(w["flops"] == full and w["half"], f"attention: 4 B H S^2 D FLOPs ({w})")
    _, w = roofline.count(Attention(True), [q, q.clone(), q.clone()])
    tap.ok(w["flops"] == full * (S * (S + 1) // 2) // (S * S),
           f"causal attention: only the S(S+1)/2 pairs the mask keeps ({w}; full {full})")
    tap.ok(roofline._causal_pairs(3, 5) == 6 and roofline._causal_pairs(5, 3) == 6 + 2 * 3,
           "causal pairs with more keys than queries, and fewer")

    a = torch.randint(-127, 128, (32, 64), dtype=torch.int8)
    b = torch.randint(-127, 128, (64, 24), dtype=torch.int8)
    _, w = roofline.count(Int8Matmul(), [a, b, torch.randn(24)])
    tap.ok(w["flops"] == w["int8_ops"] == 2 * 32 * 64 * 24 and w["bytes"] == 32 * 64 + 64 * 24 + 24 * 4 + 32 * 24 * 4,
           f"an int8 matmul: 2MKN integer operations, counted apart ({w})")

    cal = roofline.calibrate(torch.device("cpu"))
    tap.ok(all(cal[k] > 0 for k in ("bandwidth_bytes_s", "fp32_flops_s", "tf32_flops_s", "bf16_flops_s", "int8_ops_s"))
           and cal["bandwidth_bytes_s"] == max(cal["bandwidth_rates"].values()) and "bandwidth" in cal["method"],
           f"the CPU calibration measures a bandwidth and FLOP rates and says how ({cal})")

    wk = Worker("cpu")
    r = wk.call({"op": "baseline", "device": "cpu", "task_source": open(os.path.join(TASKS, "linear_relu.py")).read(),
                 "compile_mode": "none"})
    work = r.get("result", {}).get("work") or {}
    m, k, n = 64, 96, 80
    tap.ok(work.get("flops") == 2 * m * k * n and work.get("bytes") == 4 * (m * k + n * k + n + m * n),
           f"a baseline through the worker carries the reference's work ({work})")
    r = wk.call({"op": "calibrate", "device": "cpu"})
    res = r.get("result", {})
    tap.ok(r.get("ok") and res.get("fp32_flops_s", 0) > 0 and res.get("lock") == "cpu" and
           [s for s, _ in wk.steps] == ["calibration: waiting for the device",
                                        "calibration: measuring bandwidth and arithmetic peaks"],
           f"the calibrate op answers under the device lock, with its steps ({r}, {wk.steps})")
    r = wk.call({"op": "calibrate", "device": "cpu", "task_source": "x"})
    tap.ok(not r.get("ok") and r.get("kind") == "protocol", "a calibrate request with a stray field is refused")
    wk.close()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
