"""dropin_kernel.py DIR: the mechanics of a drop-in on a GPU without a model
in the loop. The distinct task of largest share with one output gets a
"kernel" (DIR/STEM.kernel.py) that is its own PyTorch followed by a Triton
copy of its output: a real Triton launch inside egg's custom operator,
everything else the identity composition (egg compose --keep-torch). Prints
the task's name and share. Used by bench/dropin-gpu.sh."""
import json
import os
import sys

d = sys.argv[1]
plan = json.load(open(os.path.join(d, "plan.json")))
tasks = [s for s in plan["subgraphs"] if not s.get("glue") and s.get("occurrences") and len(s["outputs"]) == 1]
task = max(tasks, key=lambda s: s.get("task_share") or 0)
src = open(os.path.join(d, task["file"])).read()
src += '''

import triton
import triton.language as tl


@triton.jit
def _bench_copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < n), mask=i < n)


class ModelNew(Model):
    def forward(self, *xs):
        out = super().forward(*xs).contiguous()
        y = torch.empty_like(out)
        _bench_copy[(triton.cdiv(out.numel(), 1024),)](out, y, out.numel(), BLOCK=1024)
        return y
'''
open(os.path.join(d, task["file"][:-3] + ".kernel.py"), "w").write(src)
print(f"{task['name']} ({task['occurrences']} occurrence(s), {100 * (task.get('task_share') or 0):.1f}%)")
