"""outputs.py: what a forward produced (its result as a flat list of
tensors, taskload.flatten, and the inputs it modifies in place), and the
shared region that carries a candidate's outputs to the reference process.

Every output form a task may return is accepted: a tensor (0-dim included),
lists and tuples of them (nested), integer and boolean tensors,
non-contiguous tensors, and plain Python numbers (carried as 0-dim tensors).

The region is a memfd that the worker's parent creates before it forks its
children and then sizes and seals once the reference has said how large the
outputs are. The candidate copies each output straight into its slot; the
reference reads the slots in place. No output passes through a pipe, the
parent never holds output bytes, and neither child can resize the region
under the other (the seals forbid it).

On a GPU the outputs normally travel in device memory instead
(devregion.py); this region is then sealed but never touched. Where it is
used on a GPU, each child pins it in a thread of its own
(map_in_background) while it compiles or waits for the other, and map()
joins that thread before the first byte is read or written.
"""
from __future__ import annotations

import fcntl
import mmap
import os
import threading

import torch

from ..dtypes import RECORD_DTYPES, record_name
from ..taskload import flatten

# Python number kinds, carried as 0-dim tensors of these dtypes.
SCALAR_DTYPES = {"float": torch.float64, "int": torch.int64, "bool": torch.bool}
DTYPES = RECORD_DTYPES
ALIGN = 4096


def results(result, inputs: list, mutated: list) -> tuple[list[torch.Tensor], list[str]]:
    """What a forward produced: its returned outputs (flatten), then the
    inputs it modifies in place (`mutated`: their positions, as the
    reference showed them), whose final values are compared like outputs.
    An in-place operator's result is the state it leaves behind."""
    tensors, kinds = flatten(result)
    return tensors + [inputs[k] for k in mutated], kinds + ["tensor"] * len(mutated)


def spec(t: torch.Tensor, kind: str) -> dict:
    """What the trusted side needs to know of one output."""
    return {"kind": kind, "shape": list(t.shape), "dtype": record_name(t.dtype),
            "nbytes": t.numel() * t.element_size()}


def layout(specs: list[dict]) -> tuple[list[int], int]:
    """Offsets of the outputs in the region and its size (page-aligned)."""
    offsets, off = [], 0
    for s in specs:
        offsets.append(off)
        off += (int(s["nbytes"]) + ALIGN - 1) // ALIGN * ALIGN
    return offsets, max(off, ALIGN)


class Region:
    """The memfd that carries outputs. Created by the parent before forking
    (both children inherit the descriptor), sized and sealed by the parent,
    mapped by each child once the size is known."""

    kind = "host"

    def __init__(self) -> None:
        self.fd = os.memfd_create("egg-outputs", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        self.size = 0
        self.mm: mmap.mmap | None = None
        self.pinned = False
        self._mapping: threading.Thread | None = None
        self._map_error: BaseException | None = None

    def seal(self, size: int) -> None:
        """Parent: fix the size for good."""
        os.ftruncate(self.fd, size)
        fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
        self.size = size

    def map(self) -> None:
        """Child: map the sealed region; on a GPU, pin it so that copies run
        at full speed (best effort: pageable copies work too, slower). Joins
        map_in_background's thread when one was started, and raises what it
        raised."""
        t, self._mapping = self._mapping, None
        if t is not None:
            t.join()
        if self._map_error is not None:
            e, self._map_error = self._map_error, None
            raise e
        if self.mm is None:
            self._map_now()

    def map_in_background(self) -> None:
        """Child: map() in a daemon thread, while the child does other work."""
        if self.mm is not None or self._mapping is not None:
            return

        def run() -> None:
            try:
                self._map_now()
            except BaseException as e:  # re-raised by map() in the child's main thread
                self._map_error = e

        self._mapping = threading.Thread(target=run, name="egg-region-map", daemon=True)
        self._mapping.start()

    def _map_now(self) -> None:
        size = os.fstat(self.fd).st_size
        seals = fcntl.fcntl(self.fd, fcntl.F_GET_SEALS)
        need = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW
        if seals & need != need:
            raise RuntimeError("the output region is not sealed")
        mm = mmap.mmap(self.fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            try:
                ptr = torch.frombuffer(mm, dtype=torch.uint8, count=1).data_ptr()
                # Portable: pinned for every device's context, whichever
                # thread registers it.
                self.pinned = int(torch.cuda.cudart().cudaHostRegister(ptr, size, 1)) == 0
            except Exception:
                self.pinned = False
        self.size = size
        self.mm = mm

    def view(self, s: dict, offset: int) -> torch.Tensor:
        """The slot of one output as a CPU tensor of its spec's dtype and shape."""
        assert self.mm is not None
        n, dtype = slot(s, offset, self.size)
        if n == 0:
            return torch.empty(s["shape"], dtype=dtype)
        raw = torch.frombuffer(self.mm, dtype=torch.uint8, count=n, offset=offset)
        return raw.view(dtype).view(s["shape"])

    def close(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


def slot(s: dict, offset: int, size: int) -> tuple[int, torch.dtype]:
    """(bytes, dtype) of one output's slot at `offset` in a region of `size`
    bytes (host or device), checked to fit."""
    n = int(s["nbytes"])
    if offset < 0 or offset + n > size:
        raise ValueError("an output does not fit its slot")
    return n, SCALAR_DTYPES.get(s["kind"]) if s["kind"] != "tensor" else DTYPES[s["dtype"]]


def write_outputs(region: Region, tensors: list[torch.Tensor], kinds: list[str], expected: list[dict]) -> list[dict]:
    """Candidate side: the specs of its outputs, each copied into its slot
    when its dtype and shape match what the reference returned (a mismatch
    is reported by the specs alone; the bytes are not needed to reject it).
    `region` is the host Region or a devregion.DeviceRegion; each spec says
    which ("where")."""
    offsets, _ = layout(expected)
    specs = []
    for k, (t, kind) in enumerate(zip(tensors, kinds)):
        s = spec(t, kind)
        s["written"], s["where"] = False, region.kind
        if k < len(expected) and _fits(s, expected[k]):
            dst = region.view(expected[k], offsets[k])
            if t.numel():
                src = t.detach()
                if expected[k]["kind"] != "tensor":
                    src = src.to(dst.dtype)
                dst.copy_(src.reshape(dst.shape))
            s["written"] = True
        specs.append(s)
    return specs


def _fits(got: dict, want: dict) -> bool:
    """A reference Python number may be returned as a number of any kind or
    as a 0-dim tensor; tensors must match dtype and shape exactly."""
    if want["kind"] != "tensor":
        return got["shape"] == [] and (got["kind"] != "tensor" or got["dtype"] in DTYPES)
    return got["kind"] == "tensor" and got["dtype"] == want["dtype"] and got["shape"] == want["shape"]


def mismatch(got: dict, want: dict) -> str | None:
    """Why a candidate output's spec cannot match the reference's, or None."""
    if _fits(got, want):
        return None
    if want["kind"] != "tensor":
        return f"a {got['kind']} of shape {got['shape']} where the reference returns a Python {want['kind']}"
    if got["kind"] != "tensor":
        return f"a Python {got['kind']} where the reference returns a {want['dtype']} tensor of shape {want['shape']}"
    if got["shape"] != want["shape"]:
        return f"shape {got['shape']} != expected {want['shape']}"
    return f"dtype {got['dtype']} != expected {want['dtype']}"


# ---- fingerprints: exact, cheap detection of changed bytes ----

_INT_VIEW = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
CPU_CHUNK, GPU_CHUNK = 1 << 21, 1 << 26
_weights: dict = {}


def _int_weights(device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    key = (str(device), dtype)
    if key not in _weights:
        n = CPU_CHUNK if device.type == "cpu" else GPU_CHUNK
        w = (torch.arange(n, device=device, dtype=torch.int64) * 2654435761 + 12345) & 0x7FFF
        _weights[key] = (w * 2 + 1).to(dtype if dtype != torch.uint8 else torch.int16)
    return _weights[key]


def fingerprint(t: torch.Tensor) -> tuple[int, int]:
    """Two integer sums over a tensor's bytes (plain and position-weighted,
    wrapping), computed in chunks on its device: equal for equal bytes,
    different for any realistic change. Used to detect writes to inputs and
    late writes to outputs without keeping a copy."""
    if t.numel() == 0:
        return (0, 0)
    flat = t.detach().reshape(-1)
    if not flat.is_contiguous():
        flat = flat.contiguous()
    if flat.dtype == torch.bool:
        flat = flat.view(torch.uint8)
    size = flat.element_size()
    if size not in _INT_VIEW:
        raise ValueError(f"cannot fingerprint {flat.dtype}")
    ints = flat.view(_INT_VIEW[size])
    acc = torch.zeros(2, dtype=torch.int64, device=ints.device)
    step = CPU_CHUNK if ints.device.type == "cpu" else GPU_CHUNK
    for start in range(0, ints.numel(), step):
        part = ints[start:start + step]
        w = _int_weights(part.device, part.dtype)[:part.numel()]
        acc += torch.stack([part.sum(dtype=torch.int64), (part * w).sum(dtype=torch.int64)])
    total, weighted = acc.tolist()
    return (total, weighted)
