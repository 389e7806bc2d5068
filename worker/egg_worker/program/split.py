"""split.py: a whole program (a KernelBench-form task) cut into subgraphs that
egg can optimize one by one (egg split; egg compose puts them back together
around compose_runtime.py). This file chains the steps, in the split's own
process (job.py forks it, since it runs the user's program):

1. trace.py: the program built on PyTorch's meta device (nothing is
   allocated: a 20 GB model splits on a laptop), its forward captured with
   torch.fx, the shapes and dtypes of every value propagated;
2. partition.py: the graph cut into fusable subgraphs in one pass in
   program order (ops.py says what each operation is), and the residual
   blocks a coarser cut offers (several subgraphs as one task);
3. write_tasks.py: each subgraph as a KernelBench-form task file (draws.py:
   how it draws its inputs and parameters), and the plan that lists them;
4. measure.py (with `measure`, on a device the program fits on): each
   subgraph's share of the program's eager time there;
5. repeats.py: subgraphs that compute the same thing on the same shapes
   (a repeated layer, its own weights) made one task;
and noise.py says which times are noisy (rounds or repeats far apart), so
that a share from a noisy profile is said to be rough.
"""
from __future__ import annotations

import traceback

from ..messages import Event
from ..taskload import TaskError, load_task
from .measure import measure_shares
from .partition import partition
from .repeats import merge_repeats
from .trace import SplitError, program_on_meta, traced
from .write_tasks import write_plan


def split(task, task_path: str, task_source: str, device: str, measure: bool, iters: int,
          name: str | None = None, say=lambda step: None) -> dict:
    """The plan of a program: its subgraphs (with their task files) in order;
    `say` is told each step as it starts (egg's progress lines)."""
    say("tracing the program")
    model, inputs, real = program_on_meta(task)
    gm, values, input_index = traced(model, inputs, task, task_path, real)
    groups, kinds = partition(gm, values)
    # A model spec's program carries its spec as data (EGG_MODEL, a dict):
    # read from the loaded module, never parsed back out of its text.
    spec = getattr(task, "EGG_MODEL", None)
    plan = write_plan(gm, groups, kinds, values, input_index, name or task_path, task_source,
                      spec if isinstance(spec, dict) else None)
    if measure:
        say(f"measuring each subgraph's share of the program's eager time on {device}")
        measure_shares(task, plan, gm, groups, device, iters)
        for b in plan["blocks"]:
            # A block's share and eager time: its subgraphs' in the program.
            parts = [plan["subgraphs"][i] for i in b["replaces"]]
            if all(p.get("share") is not None for p in parts):
                b["share"] = sum(p["share"] for p in parts)
                b["eager_ms"] = sum(p["eager_ms"] or 0 for p in parts)
    merge_repeats(plan)
    if measure:
        # How many of the shares are rough (noise.py): egg says so beside them.
        plan["noisy"] = sum(1 for sg in plan["subgraphs"] if sg.get("noise"))
        for b in plan["blocks"]:
            noisy = sum(1 for i in b["replaces"] if plan["subgraphs"][i].get("noise"))
            if noisy and not b.get("noise"):
                b["noise"] = f"{noisy} of its {len(b['replaces'])} subgraphs measured noisy"
    for sg in plan["subgraphs"] + plan["blocks"]:
        sg.pop("_sub", None)
        sg.pop("nodes", None)
    return plan


def child(ch, job: dict) -> None:
    """The split's process (it runs the user's program): loads the task,
    splits it, answers the plan."""
    try:
        task = load_task(job["task_path"], "egg_task_split")
        plan = split(task, job["task_path"], job["task_source"], job["device"], job["measure"], job["iters"],
                     job["name"], lambda step: ch.send({"event": Event.SPLIT_STEP, "step": step}))
        ch.send({"event": "split", "plan": plan})
    except (SplitError, TaskError) as e:
        ch.send({"event": "split", "error": str(e), "input": True})
    except Exception as e:
        ch.send({"event": "split", "error": f"{type(e).__name__}: {str(e)[:300]}", "input": False,
                 "log": traceback.format_exc()[-3000:]})
