"""inputs.py: deterministic, varied inputs for correctness trials and timed calls.

Each starts from the task's own draw (taskload.task_inputs). The trusted
reference process and the candidate's process call the same
functions with the same hidden seeds, so they get bit-identical inputs
without ever sharing memory. Inputs are made on the evaluation device and in
the task's own dtypes: no float64 copy of a tensor is ever made, so the peak
stays at about twice the largest input (see PROTOCOL.md, "Memory").

Every input keeps the layout the task's draw gave it: its strides (a
channels-last view, a transposed operand), its offset in its storage (a
chunk of a larger tensor, so its alignment) and its broadcast dimensions
(stride 0). A subgraph of a program is judged on the layout the program
feeds it (program/draws.py draws it so); a fresh or varied input that came
back contiguous would time a different kernel path than the program runs.
"""
from __future__ import annotations

import torch

from ..dtypes import record_name
from ..taskload import task_inputs

# Correctness trials cycle through these distributions (float tensors only):
# the task's own draw, rescaled, centred (so [0,1) data gets negatives and
# ReLU-like ops stop being the identity), fresh normal, and heavy-tailed.
# The reference process drops a variant for a trial when it takes the task
# out of its domain (see reference.py); that trial then uses "task".
VARIANTS = ("task", "scaled", "centred", "normal", "heavy_tailed")


def _randn(shape, dtype: torch.dtype, device: torch.device, g: torch.Generator) -> torch.Tensor:
    """Standard normal values (drawn in float32 for half types, whose own
    draws are not supported everywhere)."""
    if dtype in (torch.float32, torch.float64):
        return torch.randn(shape, generator=g, dtype=dtype, device=device)
    return torch.randn(shape, generator=g, dtype=torch.float32, device=device).to(dtype)


def _base_view(x: torch.Tensor, layout: torch.Tensor | None = None) -> torch.Tensor:
    """x without the broadcast dimensions of `layout` (default x's own):
    each dimension of stride 0 there narrowed to one element (the values
    that are really stored)."""
    for d, (n, st) in enumerate(zip(x.shape, (layout if layout is not None else x).stride())):
        if st == 0 and n > 1:
            x = x.narrow(d, 0, 1)
    return x


def _overlaps(shape, stride) -> bool:
    """Whether two elements of a tensor of this shape and these strides
    (with no stride-0 dimension) share memory."""
    dims = sorted((st, n) for n, st in zip(shape, stride) if n > 1)
    extent = 1
    for st, n in dims:
        if st < extent:
            return True
        extent = st * (n - 1) + 1 if st * (n - 1) + 1 > extent else extent
    return False


def empty_laid_out(x: torch.Tensor, device: torch.device | None = None):
    """(fill, out): new storage laid out as x. `fill` is the part to write
    (x's base view's shape, strides and storage offset: distinct memory per
    element); `out` is fill with x's broadcast dimensions expanded again. A
    layout with overlapping elements other than broadcasts gets contiguous
    storage (fill is out)."""
    device = device or x.device
    if x.is_contiguous() and x.storage_offset() == 0:
        y = torch.empty(x.shape, dtype=x.dtype, device=device)
        return y, y
    b = _base_view(x)
    shape, stride, offset = tuple(b.shape), tuple(b.stride()), x.storage_offset()
    if _overlaps(shape, stride) or any(st < 0 for st in stride):
        y = torch.empty(x.shape, dtype=x.dtype, device=device)
        return y, y
    span = offset + 1 + sum((n - 1) * st for n, st in zip(shape, stride)) if b.numel() else offset
    fill = torch.empty(span, dtype=x.dtype, device=device).as_strided(shape, stride, offset)
    return fill, fill.expand(x.shape)


def layout_template(x: torch.Tensor) -> torch.Tensor:
    """A meta tensor with x's shape, strides and storage offset."""
    span = x.storage_offset() + 1 + sum((n - 1) * abs(st) for n, st in zip(x.shape, x.stride())) if x.numel() else 0
    return torch.empty(span, dtype=x.dtype, device="meta").as_strided(x.shape, x.stride(), x.storage_offset())


def same_layout(values: torch.Tensor, template: torch.Tensor) -> torch.Tensor:
    """`values` (any layout) laid out as `template` (a tensor or a
    layout_template): itself when it already is, else a copy into storage
    laid out as template, on values' device (empty_laid_out)."""
    if values.stride() == template.stride() and values.storage_offset() == template.storage_offset():
        return values
    fill, out = empty_laid_out(template, values.device)
    fill.copy_(_base_view(values, template) if fill is not out else values)
    return out


def _variant(inputs: list, i: int, variant: str, g: torch.Generator) -> None:
    """Replaces inputs[i] (a float tensor) by its trial variant, in its own
    dtype. The list slot is the only reference the caller keeps, so the old
    tensor is freed as soon as the new one exists: at most two tensors of
    its size are alive at once."""
    x = inputs[i]
    if variant == "task" or x.numel() == 0:
        return
    # The variant's values keep the draw's layout (a meta tensor holds it:
    # no memory).
    layout = layout_template(x)
    if x.numel() > 1:
        std_t, mean_t = torch.std_mean(x if x.dtype in (torch.float32, torch.float64) else x.float())
        std, mean = float(std_t), float(mean_t)
    else:
        std, mean = 1.0, float(x.float().reshape(-1)[0])
    std = std if std > 1e-6 and std == std else 1.0
    if variant == "scaled":
        scale = 0.5 + 1.5 * float(torch.rand((), generator=g, device=x.device))
        inputs[i] = x * scale
    elif variant == "centred":
        inputs[i] = x - mean
    elif variant in ("normal", "heavy_tailed"):
        shape, dtype, dev = x.shape, x.dtype, x.device
        inputs[i] = None
        del x
        z = _randn(shape, dtype, dev, g)
        if variant == "heavy_tailed":
            s = _randn(shape, dtype, dev, g)
            s.mul_(0.5).exp_()
            z.mul_(s)
            del s
        inputs[i] = z.mul_(std)
    else:
        raise ValueError(variant)
    y = inputs[i]
    if y.dtype in (torch.float16, torch.bfloat16):
        limit = float(torch.finfo(y.dtype).max) / 16
        y.clamp_(-limit, limit)
    inputs[i] = same_layout(y, layout)


def trial_inputs(task, seed: int, trial: int, device: torch.device, variant: str | None = None) -> list:
    """Inputs for correctness trial `trial`: the task's draw under `seed` on
    `device`, reshaped by the trial's distribution (`variant`, by default the
    trial's turn in VARIANTS)."""
    out = task_inputs(task, seed, device)
    variant = variant or VARIANTS[trial % len(VARIANTS)]
    g = torch.Generator(device=device).manual_seed(seed ^ 0x5EED)
    for i in range(len(out)):
        x = out[i]
        if isinstance(x, torch.Tensor):
            if x.device != device:
                fill, y = empty_laid_out(x, device)
                fill.copy_(_base_view(x))
                out[i] = x = y
            if x.is_floating_point():
                del x
                _variant(out, i, variant, g)
    return out


def fresh_like(base: list, seed: int, device: torch.device) -> list:
    """Inputs for one timed call: fresh storage and fresh values, generated on
    the device, with the base inputs' signs and scale: every float element is
    multiplied by an independent U(0.5, 1.5) factor (drawn straight into the
    new tensor, so a call costs one tensor per input). Integer and boolean
    tensors are copied into fresh storage."""
    g = torch.Generator(device=device).manual_seed(seed)
    out = []
    for x in base:
        if isinstance(x, torch.Tensor):
            fill, y = empty_laid_out(x, device)
            if x.is_floating_point():
                fill.uniform_(0.5, 1.5, generator=g)
                fill.mul_(_base_view(x) if fill is not y else x)
            else:
                fill.copy_(_base_view(x) if fill is not y else x)
            x = y
        out.append(x)
    return out


def nbytes(values: list) -> int:
    """Bytes held by the tensors of a list."""
    return sum(x.numel() * x.element_size() for x in values if isinstance(x, torch.Tensor))


def describe(inputs: list) -> list:
    """Shapes and dtypes, for messages."""
    out = []
    for x in inputs:
        if isinstance(x, torch.Tensor):
            out.append({"shape": list(x.shape), "dtype": record_name(x.dtype)})
        else:
            out.append({"value": repr(x)[:80]})
    return out
