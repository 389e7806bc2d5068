"""sizes.py: how large a task's inputs, parameters and outputs are, found
without allocating them (PyTorch's meta device), and what an evaluation of
it is expected to need.

The figures let a CPU evaluation that cannot fit in memory be refused up
front with a clear message, and let egg admit evaluations to a GPU before
any of them ran. When the task's code does not run on the meta device
(numpy, data-dependent shapes), the figures are missing and nothing is
refused.
"""
from __future__ import annotations

# An evaluation's two processes each peak at about three times the task's
# inputs plus outputs (the inputs and a trial variant made from them, the
# outputs, the shared region; more while a float64 check runs), and each
# holds the parameters. Measured multiples are in PROTOCOL.md ("Memory").
NEED_INPUTS, NEED_OUTPUTS, NEED_PARAMS = 6, 6, 2


def measure(task_path: str) -> dict:
    """Run in a throwaway child: load the task, build its inputs and model on
    the meta device, run the forward there."""
    import torch

    from ..taskload import flatten, init_inputs, load_task

    task = load_task(task_path, "egg_task_s")
    out: dict = {"input_bytes": None, "output_bytes": None, "param_bytes": None}
    try:
        with torch.device("meta"):
            torch.manual_seed(0)
            inputs = task.get_inputs()
            model = task.Model(*init_inputs(task))
    except Exception as e:
        out["error"] = f"meta device: {type(e).__name__}: {str(e)[:200]}"
        return out
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    out["input_bytes"] = sum(x.numel() * x.element_size() for x in tensors)
    out["param_bytes"] = sum(p.numel() * p.element_size() for p in list(model.parameters()) + list(model.buffers()))
    try:
        with torch.no_grad():
            outs, _ = flatten(model(*inputs))
        out["output_bytes"] = sum(o.numel() * o.element_size() for o in outs)
    except Exception as e:
        out["error"] = f"meta forward: {type(e).__name__}: {str(e)[:200]}"
    return out


def need_bytes(sizes: dict, processes: int = 2) -> int | None:
    """Expected peak memory of one evaluation (its reference and candidate
    processes), or of a baseline (processes=1: eager and torch.compile in
    one process), or None."""
    if sizes.get("input_bytes") is None:
        return None
    both = (NEED_INPUTS * sizes["input_bytes"] + NEED_OUTPUTS * (sizes.get("output_bytes") or sizes["input_bytes"])
            + NEED_PARAMS * (sizes.get("param_bytes") or 0))
    return both * processes // 2


def available_host_bytes() -> int | None:
    """MemAvailable from /proc/meminfo."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def gb(n: int | None) -> str:
    return "?" if n is None else f"{n / 1e9:.1f} GB"
