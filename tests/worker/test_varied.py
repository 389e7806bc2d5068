"""test_varied.py: a subgraph's task draws every parameter of one constant
value (program/model_runtime.py _egg_varied_constants), so that its check
sees what the parameter scales: a ConvNeXt-style block whose layer scale is
1e-6 (torchvision's initial value) and whose LayerNorm is a new layer (ones
and zeros) is split, in eval mode and in training, and each task's Model is
built as the evaluator builds it. With the program's own values the block's
output is its input to within 1e-5 (a kernel that skipped the whole MLP
would pass); in the task it is not. In-process, on the CPU."""
from __future__ import annotations

import os
import sys
import tempfile
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wlib import ROOT, Tap  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "worker"))
import torch  # noqa: E402

from egg_worker.program.split import split  # noqa: E402
from egg_worker.taskload import load_task  # noqa: E402

PROGRAM = '''import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = nn.LayerNorm(c, eps=1e-6)
        self.fc1 = nn.Linear(c, 4 * c)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * c, c)
        self.gamma = nn.Parameter(torch.full((c, 1, 1), 1e-6))

    def forward(self, x):
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.fc2(self.act(self.fc1(self.norm(y)))).permute(0, 3, 1, 2)
        return x + self.gamma * y


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 1)
        self.blocks = nn.Sequential(Block(8), Block(8))
        {mode}

    def forward(self, x):
        return self.blocks(self.stem(x))


def get_inputs():
    return [torch.randn(2, 3, 8, 8)]


def get_init_inputs():
    return []
'''


def plan_of(mode: str) -> dict:
    source = PROGRAM.replace("{mode}", mode)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(source)
    try:
        plan = split(load_task(f.name, "egg_test_varied"), f.name, source, "cpu", False, 1)
        program = load_task(f.name, "egg_test_varied_program")
    finally:
        os.unlink(f.name)
    return plan, program


def task_model(source: str, name: str):
    """The task's Model and inputs, built as the evaluator builds them."""
    mod = types.ModuleType(name)
    exec(compile(source, name, "exec"), mod.__dict__)  # our own split's text
    torch.manual_seed(0)
    model = mod.Model()
    return model, mod.get_inputs()


def constant_params(model) -> list:
    return [n for n, p in model.named_parameters()
            if p.numel() > 1 and bool((p == p.reshape(-1)[0]).all())]


def main() -> int:
    tap = Tap()
    for mode in ("self.eval()", "self.train()"):
        plan, program = plan_of(mode)
        what = "eval mode" if "eval" in mode else "training"
        m = program.Model()
        x = program.get_inputs()[0]
        h = m.stem(x)
        tap.ok(float((m.blocks[0](h).detach() - h.detach()).abs().max()) < 1e-5,
               f"{what}: with the program's own values a block's output is its input (the MLP is hidden)")
        tasks = [s for s in plan["subgraphs"] + plan["blocks"] if s.get("source") and "gamma" in s["source"]]
        tap.ok(len(tasks) >= 2, f"{what}: the layer scale is in a subgraph's task and in its block's",
               [s["name"] for s in plan["subgraphs"] + plan["blocks"]])
        for s in tasks:
            model, inputs = task_model(s["source"], s["file"])
            tap.ok("_egg_varied_constants(self)" in s["source"] and not constant_params(model),
                   f"{what}: task {s['file']} draws every parameter of one value", constant_params(model))
            with torch.no_grad():
                out = model(*inputs)
            residual = [t for t in inputs if t.shape == out.shape]
            gap = min(float((out - t).abs().max()) for t in residual) if residual else float("inf")
            tap.ok(gap > 0.05, f"{what}: task {s['file']}'s output is not its input (a kernel skipping the MLP fails)",
                   gap)
        norm = [s for s in plan["subgraphs"] if s.get("source") and "nn.LayerNorm" in s["source"]]
        model, _ = task_model(norm[0]["source"], norm[0]["file"])
        weights = [p for n, p in model.named_parameters() if "norm" in n]
        tap.ok(weights and all(not bool((p == p.reshape(-1)[0]).all()) for p in weights),
               f"{what}: a new LayerNorm's ones and zeros are drawn too")
        tap.ok("all 1e-06 in the program; drawn at random here" in tasks[0]["source"],
               f"{what}: the task says the program's value and that it is drawn", tasks[0]["source"][:800])
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
