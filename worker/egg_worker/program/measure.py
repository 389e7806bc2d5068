"""measure.py: the last step of a split, on a device the program fits on:
each subgraph's share of the program's eager time there."""
from __future__ import annotations

import time

import torch
import torch.fx

from ..taskload import build, init_inputs, task_inputs
from .noise import noise_words
from .trace import check_runs, getattr_path


def measure_shares(task, plan: dict, gm, groups: list, device: str, iters: int) -> None:
    """Each subgraph's share of the program's eager time on `device`: the
    program built there for real, run node by node, each subgraph's time
    between its ends (device time on a GPU, _gpu_times; wall time on the
    CPU), the median over `iters` rounds; and the whole forward's time. Each
    subgraph's fastest and slowest round go with it (eager_ms_range), and a
    spread over noise.NOISY makes it "noise" (why, in words): its share is
    rough."""
    dev = torch.device(device)
    model = build(task.Model, init_inputs(task), 0, dev).to(dev)
    check_runs(model, task, dev)
    for n in gm.graph.nodes:
        # Constants tracing made (a tensor the forward builds from literals):
        # their values, on the device.
        if n.op == "get_attr" and "_tensor_constant" in n.target and not hasattr(model, n.target):
            c = getattr_path(gm, n.target)
            setattr(model, n.target, torch.zeros(c.shape, dtype=c.dtype, device=dev) if c.is_meta else c.to(dev))
    real_gm = torch.fx.GraphModule(model, gm.graph)
    inputs = task_inputs(task, 0, dev)
    first = {g.nodes[0].name: i for i, g in enumerate(groups)}
    last = {g.nodes[-1].name: i for i, g in enumerate(groups)}
    if dev.type == "cuda" and hasattr(torch.cuda, "_sleep"):
        rounds, whole_ms = _gpu_times(model, real_gm, inputs, len(groups), first, last, iters)
    else:
        rounds, whole_ms = _host_times(model, real_gm, inputs, len(groups), first, last, iters)
    whole = sum(_median(t) for t in rounds) or 1.0
    for sg, t in zip(plan["subgraphs"], rounds):
        sg["eager_ms"] = _median(t) * 1e3
        sg["share"] = _median(t) / whole
        sg["eager_ms_range"] = [min(t) * 1e3, max(t) * 1e3]
        noise = noise_words([x * 1e3 for x in t], f"its {len(t)} rounds in the program", trim=True)
        if noise and not sg.get("glue"):
            sg["noise"] = noise
    plan["eager_ms"] = _median(whole_ms)
    plan["eager_ms_range"] = [min(whole_ms), max(whole_ms)]
    plan["measured_on"] = device


def _median(xs: list) -> float:
    return sorted(xs)[len(xs) // 2]


def _gpu_times(model, real_gm, inputs: list, count: int, first: dict, last: dict, iters: int) -> tuple:
    """On a GPU, the clock egg eval times with (protocol/timing.py's `gpu`):
    device time. Events mark each subgraph's ends, recorded behind a spin
    kernel that holds the stream while the host queues the whole forward, so
    the host's launch cost (node by node through an interpreter, most of
    all) is in no span: a subgraph's span is its kernels' time in the
    program. Returns (each subgraph's seconds per timed round, the
    forward's ms per timed round)."""
    sync = torch.cuda.synchronize

    def event():
        return torch.cuda.Event(enable_timing=True)

    # The spin's cycles per millisecond follow the SM clock, which is low on
    # an idle GPU and rises under load: measured again around every spin, so
    # that a spin sized on a cold GPU does not end before the host has
    # queued the forward (its launch would then be in every span: a split
    # of ConvNeXt-T on a fresh H100 read 7.2 ms where the forward takes 3.7).
    rate = {"cycles_per_ms": None}
    a, b = event(), event()
    a.record()
    torch.cuda._sleep(1_000_000)
    b.record()
    sync()
    rate["cycles_per_ms"] = 1_000_000 / max(a.elapsed_time(b), 1e-3)

    class Marked(torch.fx.Interpreter):
        def run_node(self, n):
            if n.name in first:
                self.starts[first[n.name]].record()
            v = super().run_node(n)
            if n.name in last:
                self.ends[last[n.name]].record()
            return v

    def behind_spin(run, spin_ms: float) -> float:
        """Runs `run` behind a spin of `spin_ms`; its host time in ms."""
        sync()
        cycles = int(rate["cycles_per_ms"] * spin_ms)
        a.record()
        torch.cuda._sleep(cycles)
        b.record()
        t0 = time.perf_counter()
        run()
        host = (time.perf_counter() - t0) * 1e3
        sync()
        rate["cycles_per_ms"] = cycles / max(a.elapsed_time(b), 1e-3)
        return host

    times, totals = [[] for _ in range(count)], []
    spin_it = spin_whole = 1.0
    with torch.no_grad():
        for r in range(iters + 2):  # two warm-up rounds size the spins
            it = Marked(real_gm)
            it.starts, it.ends = [event() for _ in range(count)], [event() for _ in range(count)]
            host = behind_spin(lambda: it.run(*inputs), spin_it)
            spin_it = min(1.5 * host + 0.1, 500.0)
            s, e = event(), event()

            def whole():
                s.record()
                model(*inputs)
                e.record()
            host = behind_spin(whole, spin_whole)
            spin_whole = min(1.5 * host + 0.1, 500.0)
            if r >= 2:
                for i in range(count):
                    times[i].append(it.starts[i].elapsed_time(it.ends[i]) / 1e3)
                totals.append(s.elapsed_time(e))
    return times, totals


def _host_times(model, real_gm, inputs: list, count: int, first: dict, last: dict, iters: int) -> tuple:
    """On the CPU: wall time, each subgraph's span between its ends; two
    rounds of each first, untimed (first calls set up kernels, thread pools
    and caches). Returns (each subgraph's seconds per timed round, the
    forward's ms per timed round)."""
    sync = torch.cuda.synchronize if next(model.parameters(), torch.empty(0)).is_cuda else (lambda: None)
    times = [[] for _ in range(count)]
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

    warm = 2
    with torch.no_grad():
        model(*inputs)
        sync()
        for r in range(iters + warm):
            t0 = time.perf_counter()
            model(*inputs)
            sync()
            if r >= warm:
                totals.append((time.perf_counter() - t0) * 1e3)
            it = Timed(real_gm)
            it._spans = [0.0] * count
            it.run(*inputs)
            if r >= warm:
                for i, s in enumerate(it._spans):
                    times[i].append(s)
    return times, totals
