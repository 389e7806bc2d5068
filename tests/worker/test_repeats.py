"""test_repeats.py: which subgraphs are one task (program/repeats.py), on the
plans egg split itself makes (trace, partition, write_tasks, then the
repeats) from small programs written here: the same layer at another depth
is one task binding its own tensors; another shape, another operation,
another constant, another input dtype or layout, or one buffer used twice
where the other uses two alike, keeps them apart; another input distribution
does not. In-process, on the CPU; t75 composes and evaluates such a plan."""
from __future__ import annotations

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wlib import ROOT, Tap  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "worker"))
from egg_worker.program.split import split  # noqa: E402
from egg_worker.taskload import load_task  # noqa: E402

HEAD = '''import torch
import torch.nn as nn


class Up(nn.Module):
    """A layer, its buffer, an operation and a constant: one subgraph."""

    def __init__(self, k, op="relu", c=2.0, shift_is_scale=False, p=0.0):
        super().__init__()
        self.p, self.drop = p, nn.Dropout(p)
        self.up = nn.Linear(k, k)
        self.register_buffer("scale", torch.ones(k))
        self.register_buffer("shift", torch.zeros(k))
        self.op, self.c, self.shift_is_scale = op, c, shift_is_scale

    def forward(self, x):
        shift = self.scale if self.shift_is_scale else self.shift
        y = nn.functional.dropout(self.drop(self.up(x)), self.p, self.training)
        return getattr(torch, self.op)(y * self.scale + shift) * self.c


'''


def plan_of(body: str, inputs: str = "[torch.randn(4, 16)]") -> dict:
    """egg split's plan of a program whose Model.forward is `body`."""
    source = HEAD + body + f"\n\ndef get_inputs():\n    return {inputs}\n\n\ndef get_init_inputs():\n    return []\n"
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(source)
    try:
        return split(load_task(f.name, "egg_test_repeats"), f.name, source, "cpu", False, 1)
    finally:
        os.unlink(f.name)


def task_of(plan: dict, name: str) -> str:
    """The task of the (one) subgraph whose name mentions `name`."""
    found = [s["task"] for s in plan["subgraphs"] if not s.get("glue") and name in s["name"]]
    assert len(found) == 1, (name, [s["name"] for s in plan["subgraphs"]])
    return found[0]


def pair(tap: Tap, what: str, same: str, other: str, a: str, b: str, inputs: str = "[torch.randn(4, 16)]") -> None:
    """`same` and `other` are two programs alike but for `what`: in `same`
    the subgraphs naming a and b are one task, in `other` two."""
    p, q = plan_of(same, inputs), plan_of(other, inputs)
    tap.ok(task_of(p, a) == task_of(p, b) and task_of(q, a) != task_of(q, b), f"{what} is another task",
           [[(s["name"], s["task"]) for s in x["subgraphs"]] for x in (p, q)])


TWO = '''class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(16, 16)
        self.a, self.b = {a}, {b}

    def forward(self, x):
        return {forward}
'''


def main() -> int:
    tap = Tap()
    p = plan_of('''class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(16, 16)
        self.blocks = nn.ModuleList([Up(16) for _ in range(4)])

    def forward(self, x):
        x = self.embed(x)
        for b in self.blocks:  # the first block's input drawn as randn, the others' after a tanh
            x = torch.tanh(b(x)) * 0.5
        return x
''')
    subs = [s for s in p["subgraphs"] if not s.get("glue") and s["name"].startswith("blocks.")]
    tap.ok(len({s["task"] for s in subs}) == 1 and len(subs) == 4, "the same layer at four depths is one task, whatever distribution feeds it",
           [(s["name"], s["task"]) for s in subs])
    first = subs[0]
    tap.ok(first["occurrences"] == 4 and "task_params" not in first, "the first occurrence counts four", first)
    tap.ok(subs[2].get("task_params") == {k: v.replace("blocks.0.", "blocks.2.") for k, v in first["params"].items()}
           and len(first["params"]) == 4,
           "a repeat binds its own tensors, the buffer included, under the first occurrence's names",
           (first["params"], subs[2].get("task_params")))
    tap.ok("_sub" not in first and "nodes" not in first, "the plan keeps no graph")

    two = TWO.format
    plain = dict(a="Up(16)", b="Up(16)", forward="torch.tanh(self.b(torch.tanh(self.a(self.embed(x)))))")
    pair(tap, "another shape", two(**plain),
         two(**dict(plain, b="Up(32)", forward="torch.tanh(self.b(torch.tanh(self.a(self.embed(x))).repeat(1, 2)))")),
         "a.up", "b.up")
    pair(tap, "another operation", two(**plain), two(**dict(plain, b="Up(16, 'sigmoid')")), "a.up", "b.up")
    pair(tap, "another constant", two(**plain), two(**dict(plain, b="Up(16, c=3.0)")), "a.up", "b.up")
    pair(tap, "inputs and layers in another dtype", two(**plain),
         two(**dict(plain, b="Up(16).half()",
                    forward="torch.tanh(self.b(torch.tanh(self.a(self.embed(x))).half()).float())")), "a.up", "b.up")
    # a's subgraph ends with the transpose (a view): b reads a transposed
    # view where c, computing the same, reads a contiguous tensor.
    three = '''class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(16, 16)
        self.a, self.b, self.c = Up(16), Up(16), Up(16)

    def forward(self, x):
        h = torch.tanh(self.a(self.embed(x))){view}
        return torch.tanh(self.c(torch.tanh(self.b(h))))
'''.format
    pair(tap, "an input in another layout (a transposed view: a kernel is judged in its program's layout)",
         three(view=""), three(view=".t()"), "b.up", "c.up", "[torch.randn(16, 16)]")
    pair(tap, "one buffer used twice (where the other uses two alike)", two(**plain),
         two(**dict(plain, b="Up(16, shift_is_scale=True)")), "a.up", "b.up")
    # Dropouts at other rates (a layer and a call): alike when not training
    # (they compute nothing then), another task when training.
    rates = dict(plain, b="Up(16, p=0.25)")
    p, q = plan_of(two(**rates).replace("self.a, self.b = Up(16), Up(16, p=0.25)",
                                        "self.a, self.b = Up(16), Up(16, p=0.25)\n        self.eval()")), plan_of(two(**rates))
    tap.ok(task_of(p, "a.up") == task_of(p, "b.up") and task_of(q, "a.up") != task_of(q, "b.up"),
           "a dropout's rate sets no task apart in eval mode, and does in training",
           [[(s["name"], s["task"]) for s in x["subgraphs"]] for x in (p, q)])
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
