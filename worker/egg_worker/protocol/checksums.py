"""checksums.py: compact summaries of outputs, for checking timed calls.

A timed call's output is summarised by the candidate's process right after
the call; the trusted reference recomputes chosen calls and compares the
summaries with a bound derived from the tolerances. The sums run in chunks
on the output's device and accumulate in float64 without a float64 copy.

Sums alone cannot tell two unrelated outputs of the same distribution
apart once they are large: elements each within a tolerance of each other
allow the sums to differ by n x tolerance, while two independent zero-mean
outputs differ by about sqrt(n) (an fp16 output of a few thousand elements
is already past that point). So a summary also carries SAMPLES elements at
positions drawn from the call's seed, compared one by one with the
elementwise rule: a stale or unrelated output misses on nearly all of them.

Large outputs in the candidate's process on a GPU are summed by
fastsums.py's one-read kernel instead of _row_sums (enable_fused).
"""
from __future__ import annotations

import torch

from .sumlayout import CPU_CHUNK, GPU_CHUNK, ROW

SAMPLES = 64  # elements per output carried in a summary
SUMS = 7  # the summary's fixed part: sums, counts, numel
# The float32 rows' rounding, relative to the sum of |x|: at most (ROW - 1)
# units of 2^-24 per row, on each of the two sides compared.
ROUNDING = 2 * ROW * 2.0 ** -24
# Outputs from this size on are summed by fastsums' one-read Triton kernel
# once enable_fused() has been called (the candidate's process on a GPU):
# below it, the kernel's compile costs more than it saves over a timed loop
# (bench/checksum-sums.py: 207 ms, break-even at 928 MB on an H200).
FUSED_MIN_BYTES = 1 << 30
_weights: dict = {}
_fused: str | None = None  # the device type whose large outputs fastsums sums


def enable_fused(device_type: str = "cuda") -> None:
    """Sum large outputs on devices of this type with fastsums.three_sums
    from now on (Triton is imported at the first such output; "cpu" only
    for tests, in Triton's interpreter)."""
    global _fused
    _fused = device_type


def _fused_sums(flat: torch.Tensor):
    """fastsums' three sums, or None when the kernel cannot run here (the
    PyTorch path is then used from now on: a summary is as valid either way,
    and a failure of egg's own kernel must not become the candidate's)."""
    global _fused
    try:
        from .fastsums import three_sums
        return three_sums(flat)
    except Exception:
        _fused = None
        return None


def _chunk(device: torch.device) -> int:
    return CPU_CHUNK if device.type == "cpu" else GPU_CHUNK


def _weights_for(device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """Fixed pseudo-random weights in [0.5, 1.5), one per position in a
    chunk (element i gets weight i mod CPU_CHUNK): the same in every
    process and on every device, made once per device and dtype."""
    key = (str(device), dtype)
    if key not in _weights:
        idx = torch.arange(_chunk(device), device=device, dtype=torch.int64) % CPU_CHUNK
        _weights[key] = ((idx * 2654435761) & 0xFFFFF).to(torch.float64).div_(1 << 20).add_(0.5).to(dtype)
    return _weights[key]


def _sample_positions(n: int, seed: int, device: torch.device) -> torch.Tensor:
    """SAMPLES positions in [0, n) spread over the output, fixed by seed:
    the candidate's process and the reference pick the same ones."""
    offset = (seed * 0x9E3779B1 + 12345) % n
    return (torch.arange(SAMPLES, device=device, dtype=torch.int64) * 2654435761 + offset) % n


def _row_sums(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """[sum, weighted sum, sum of |x|] of a flat chunk in float64, each in
    one read of the chunk: rows of ROW elements are summed in the chunk's
    own dtype, then the row sums in float64 (a float64 sum of a float32
    tensor would first write a float64 copy of it, three times per chunk:
    39 ms for 6.4 GB on an H200 against about 5 ms now). The rows' float32
    rounding is what ROUNDING allows for in checksum_close."""
    n = x.numel()
    full = n - n % ROW
    parts = []
    if full:
        rows, wrows = x[:full].view(-1, ROW), w[:full].view(-1, ROW)
        parts.append(torch.stack([rows.sum(1), (rows * wrows).sum(1),
                                  torch.linalg.vector_norm(rows, 1, dim=1)]).to(torch.float64).sum(1))
    if full < n:
        tail, wt = x[full:].to(torch.float64), w[full:].to(torch.float64)
        parts.append(torch.stack([tail.sum(), (tail * wt).sum(), tail.abs().sum()]))
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


def checksum(t: torch.Tensor, seed: int = 0) -> list:
    """[sum, weighted sum, sum of |x|, #nan, #+inf, #-inf, numel, then
    SAMPLES elements at the positions seed picks (none for an empty
    output; NaN and Inf read as 0, the counts compare them)]. Two outputs
    that agree elementwise within (atol, rtol) have summaries that agree
    within the bounds checksum_close uses. Accumulated on the device: one
    transfer to the host at the end, whatever the size."""
    flat = t.detach().reshape(-1)
    fused = (flat.device.type == _fused
             and flat.dtype in (torch.float32, torch.float16, torch.bfloat16)
             and flat.numel() * flat.element_size() >= FUSED_MIN_BYTES)
    if fused:
        flat = flat.contiguous()  # the kernel reads the output's own dtype
    elif not flat.is_floating_point():
        flat = flat.to(torch.float64 if flat.element_size() > 4 else torch.float32)
    n = flat.numel()
    step = _chunk(flat.device)
    # The sums first, without the element tests: when they are finite the
    # output holds no NaN or Inf (a NaN makes every sum NaN, an Inf the sum
    # of |x| infinite) and the counts are zero. Only an output whose sums are
    # not finite (rare: the reference's own NaNs, a broken kernel) takes the
    # careful path that counts them and sums the finite values.
    acc = torch.zeros(6, dtype=torch.float64, device=flat.device)
    sums = _fused_sums(flat) if fused else None
    if sums is not None:
        acc[:3] = sums
    half = flat.dtype in (torch.float16, torch.bfloat16)  # the PyTorch path sums these in float32
    if sums is None:
        flat = flat.float() if half else flat
        for s in range(0, n, step):
            x = flat[s:s + step]
            acc[:3] += _row_sums(x, _weights_for(x.device, x.dtype)[:x.numel()])
    if n and not bool(torch.isfinite(acc[:3]).all()):
        acc = _careful_sums(flat.float() if half else flat, step)
    if n:
        picked = flat[_sample_positions(n, seed, flat.device)].to(torch.float64)
        acc = torch.cat([acc, torch.nan_to_num(picked, nan=0.0, posinf=0.0, neginf=0.0)])
    v = [float(x) for x in acc.tolist()]
    return v[:6] + [float(n)] + v[6:]


def _careful_sums(flat: torch.Tensor, step: int) -> torch.Tensor:
    """The summary's sums over the finite values, and the NaN/+Inf/-Inf counts."""
    acc = torch.zeros(6, dtype=torch.float64, device=flat.device)
    for s in range(0, flat.numel(), step):
        x = flat[s:s + step]
        w = _weights_for(x.device, x.dtype)[:x.numel()]
        nan, pinf, ninf = torch.isnan(x), torch.isposinf(x), torch.isneginf(x)
        x = torch.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0)
        acc[3:] += torch.stack([nan.sum(dtype=torch.float64), pinf.sum(dtype=torch.float64),
                                ninf.sum(dtype=torch.float64)])
        acc[:3] += _row_sums(x, w)
    return acc


def checksum_close(ref: list, out: list, atol: float, rtol: float, widen: float = 1.0) -> bool:
    """Whether summary `out` can come from an output within (atol, rtol)
    of the one `ref` summarises, elementwise. widen > 1 loosens the
    elementwise rule for the sampled elements (a kernel admitted by the
    float64 rule on an ill-conditioned task may sit that many tolerances
    from the fp32 reference)."""
    if not (isinstance(out, list) and len(out) == len(ref) and all(isinstance(v, (int, float)) for v in out)):
        return False
    if out[3:SUMS] != ref[3:SUMS]:
        return False
    n = ref[6]
    bound = atol * n + rtol * ref[2]
    slack = ROUNDING * abs(ref[2]) + 1e-9
    if abs(out[0] - ref[0]) > bound + slack or abs(out[1] - ref[1]) > 1.5 * (bound + slack):
        return False
    return all(abs(o - r) <= widen * (atol + rtol * abs(r)) + 1e-9 * (abs(r) + 1)
               for o, r in zip(out[SUMS:], ref[SUMS:]))
