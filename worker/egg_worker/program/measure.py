"""measure.py: the last step of a split, on a device the program fits on:
each subgraph's share of the program's eager time there."""
from __future__ import annotations

import time

import torch
import torch.fx

from ..taskload import build, init_inputs, task_inputs
from .trace import getattr_path


def measure_shares(task, plan: dict, gm, groups: list, device: str, iters: int) -> None:
    """Each subgraph's share of the program's eager time on `device`: the
    program built there for real, run node by node with the device
    synchronised at each subgraph's ends, the median over `iters` runs."""
    dev = torch.device(device)
    model = build(task.Model, init_inputs(task), 0, dev).to(dev)
    for n in gm.graph.nodes:
        # Constants tracing made (a tensor the forward builds from literals):
        # their values, on the device.
        if n.op == "get_attr" and "_tensor_constant" in n.target and not hasattr(model, n.target):
            c = getattr_path(gm, n.target)
            setattr(model, n.target, torch.zeros(c.shape, dtype=c.dtype, device=dev) if c.is_meta else c.to(dev))
    real_gm = torch.fx.GraphModule(model, gm.graph)
    inputs = task_inputs(task, 0, dev)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    first = {g.nodes[0].name: i for i, g in enumerate(groups)}
    last = {g.nodes[-1].name: i for i, g in enumerate(groups)}
    times = [[] for _ in groups]
    totals = []

    class Timed(torch.fx.Interpreter):
        def run_node(self, n):
            if n.name in first:
                sync()
                self._t0 = time.perf_counter()
            v = super().run_node(n)
            if n.name in last:
                sync()
                self._spans[last[n.name]] += time.perf_counter() - self._t0
            return v

    with torch.no_grad():
        model(*inputs)
        sync()
        for r in range(iters + 1):
            t0 = time.perf_counter()
            model(*inputs)
            sync()
            if r:
                totals.append(time.perf_counter() - t0)
            it = Timed(real_gm)
            it._spans = [0.0] * len(groups)
            it.run(*inputs)
            if r:
                for i, s in enumerate(it._spans):
                    times[i].append(s)
    med = [sorted(t)[len(t) // 2] for t in times]
    whole = sum(med) or 1.0
    for sg, m in zip(plan["subgraphs"], med):
        sg["eager_ms"] = m * 1e3
        sg["share"] = m / whole
    plan["eager_ms"] = sorted(totals)[len(totals) // 2] * 1e3
    plan["measured_on"] = device
