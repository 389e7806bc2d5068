"""test_repeats.py: which subgraph task files are the same task
(program/repeats.py): the same text once their own names are set aside, and
nothing looser: another shape, another number, another operation or another
input keeps them apart. In-process, on task texts as write_tasks.py makes
them; t75 splits, optimizes and composes a real stack of repeated blocks."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wlib import ROOT, Tap  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "worker"))
from egg_worker.program.repeats import merge_repeats, signature  # noqa: E402

TASK = '''"""Subgraph {i} of 9 of net.py (egg split): blocks.{i}.up+act."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks_{i}_up = nn.Linear(in_features={k}, out_features=64, bias=True)
        self.register_buffer('blocks_{i}_scale', torch.ones(64))

    def forward(self, blocks_{i}_norm):
        blocks_{i}_up = self.blocks_{i}_up(blocks_{i}_norm);  blocks_{i}_norm = None
        mul = blocks_{i}_up * self.blocks_{i}_scale
        {op} = torch.{op}(mul);  mul = None
        return {op}


def get_inputs():
    return [torch.randn(4, {k}) * {scale}]


def get_init_inputs():
    return []
'''


def task(i, k=16, op="relu", scale=1.0):
    return TASK.format(i=i, k=k, op=op, scale=scale)


def sg(i, dtype="float32", stride=(16, 1), **kw):
    return {"file": f"0{i}_blocks_{i}_up.py", "source": task(i, **kw), "share": 0.1,
            "input_shapes": [[4, 16]], "input_layouts": [{"dtype": dtype, "stride": list(stride), "offset": 0}],
            "input_program_index": [None],
            "params": {f"blocks_{i}_up.weight": f"blocks.{i}.up.weight", f"blocks_{i}_up.bias": f"blocks.{i}.up.bias",
                       f"blocks_{i}_scale": f"blocks.{i}.scale"}}


def main() -> int:
    tap = Tap()
    tap.ok(signature(task(0))[0] == signature(task(7))[0], "the same block at another layer is the same task")
    for what, other in (("another shape", task(7, k=32)), ("another operation", task(7, op="sigmoid"))):
        tap.ok(signature(task(0))[0] != signature(other)[0], f"{what} is another task")
    imported = "from torch.nn.functional import {f}\n".format
    a = task(0).replace("import torch\n", "import torch\n" + imported(f="relu")).replace("torch.relu(", "relu(")
    b = task(7).replace("import torch\n", "import torch\n" + imported(f="relu")).replace("torch.relu(", "relu(")
    c = task(7, op="gelu").replace("import torch\n", "import torch\n" + imported(f="gelu")).replace("torch.gelu(", "gelu(")
    tap.ok(signature(a)[0] == signature(b)[0] and signature(a)[0] != signature(c)[0],
           "an imported function is never renamed, even where a value is called so (relu = relu(mul))")
    plan = {"subgraphs": [sg(0, scale=0.5), sg(1, scale=2.0)]}
    merge_repeats(plan)
    tap.ok(plan["subgraphs"][1]["task"] == "00_blocks_0_up.py",
           "inputs drawn at another scale (after another layer) are still the same task")
    plan = {"subgraphs": [sg(0), sg(1, dtype="float16")]}
    merge_repeats(plan)
    tap.ok(plan["subgraphs"][1]["task"] != "00_blocks_0_up.py", "inputs of another dtype are another task")
    plan = {"subgraphs": [sg(0), sg(1, stride=(1, 4))]}
    merge_repeats(plan)
    tap.ok(plan["subgraphs"][1]["task"] != "00_blocks_0_up.py",
           "inputs in another layout (a transposed view) are another task: a kernel is judged in its program's layout")
    plan = {"subgraphs": [sg(0), sg(1), sg(2, k=32), sg(3), {"file": "glue_04.py", "glue": True, "source": ""}]}
    merge_repeats(plan)
    s = plan["subgraphs"]
    tap.ok([x["task"] for x in s] == ["00_blocks_0_up.py", "00_blocks_0_up.py", "02_blocks_2_up.py",
                                      "00_blocks_0_up.py", "glue_04.py"], "each subgraph names its task",
           [x["task"] for x in s])
    tap.ok(s[0]["occurrences"] == 3 and abs(s[0]["task_share"] - 0.3) < 1e-12 and s[2]["occurrences"] == 1,
           "the first occurrence counts its repeats and sums their shares", s[0])
    tap.ok(s[3]["task_params"] == {"blocks_0_up.weight": "blocks.3.up.weight", "blocks_0_up.bias": "blocks.3.up.bias",
                                   "blocks_0_scale": "blocks.3.scale"},
           "a repeat binds its own tensors, buffers included, under the task's names", s[3].get("task_params"))
    tap.ok("task_params" not in s[0] and "task_params" not in s[2], "a first occurrence keeps its own names")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
