"""devregion.py: the output region in GPU memory, shared by a file descriptor.

On a GPU the host region (outputs.Region) costs more than the evaluation's
GPU work: every page of a many-GB memfd is zeroed and pinned once in each
child (4 s for the 6.4 GB output of KernelBench's 19_ReLU on an H200), and
each trial copies the outputs to the host and back. So on a GPU the
reference process creates the region in device memory instead: one
allocation of its own through the CUDA driver's virtual memory API
(cuMemCreate), never PyTorch's caching allocator, so that nothing else of
the reference lives in it, zeroed before it is shared, and exported as a
file descriptor (a POSIX handle: it works across the candidate's PID and
IPC namespaces, which the legacy CUDA IPC handles do not). The reference
sends the descriptor to the candidate over a socket pair the parent made
for them; the candidate maps it and copies its outputs into it device to
device, and the reference compares them where they are.

What the candidate can do with it is what it could do with the host region:
write its own outputs, at any time (the late-write and timed-output checks
stand), and read back only what it wrote. Whatever fails on either side
(no driver support, a refused descriptor, an old driver) leaves the host
region in use: the candidate says in each output's spec where it wrote it
("where": "device" or "host"), and the reference reads it from there.
"""
from __future__ import annotations

import ctypes
import os
import socket

import torch

from .outputs import slot

# cuda.h (stable since CUDA 10.2)
_PINNED = 1  # CU_MEM_ALLOCATION_TYPE_PINNED
_POSIX_FD = 1  # CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
_LOCATION_DEVICE = 1  # CU_MEM_LOCATION_TYPE_DEVICE
_READWRITE = 3  # CU_MEM_ACCESS_FLAGS_PROT_READWRITE
_GRANULARITY_MINIMUM = 0


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class _Prop(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", _Location),
                ("win32HandleMetaData", ctypes.c_void_p), ("allocFlags", _AllocFlags)]


class _Access(ctypes.Structure):
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


class Unavailable(Exception):
    """The device region could not be made or mapped here (the host region
    is used instead)."""


_lib = None


def _cuda():
    global _lib
    if _lib is None:
        try:
            _lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise Unavailable(f"libcuda: {e}") from None
        u64, sz, vp = ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p
        sig = {"cuMemGetAllocationGranularity": [ctypes.POINTER(sz), ctypes.POINTER(_Prop), ctypes.c_int],
               "cuMemCreate": [ctypes.POINTER(u64), sz, ctypes.POINTER(_Prop), u64],
               "cuMemExportToShareableHandle": [vp, u64, ctypes.c_int, u64],
               "cuMemImportFromShareableHandle": [ctypes.POINTER(u64), vp, ctypes.c_int],
               "cuMemAddressReserve": [ctypes.POINTER(u64), sz, sz, u64, u64],
               "cuMemMap": [u64, sz, sz, u64, u64],
               "cuMemSetAccess": [u64, sz, ctypes.POINTER(_Access), sz],
               "cuMemRelease": [u64]}
        for name, args in sig.items():
            fn = getattr(_lib, name, None)
            if fn is None:
                raise Unavailable(f"the CUDA driver has no {name}")
            fn.argtypes, fn.restype = args, ctypes.c_int
    return _lib


def _check(rc: int, what: str) -> None:
    if rc != 0:
        raise Unavailable(f"{what} returned CUDA error {rc}")


def _prop(ordinal: int) -> _Prop:
    p = _Prop()
    p.type, p.requestedHandleTypes = _PINNED, _POSIX_FD
    p.location.type, p.location.id = _LOCATION_DEVICE, ordinal
    return p


class _Interface:
    """A raw device allocation as PyTorch can wrap it without a copy."""

    def __init__(self, ptr: int, size: int):
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1", "data": (ptr, False),
                                         "version": 2, "strides": None}


class DeviceRegion:
    """A mapped device allocation of `size` bytes, viewed like the host
    region (outputs.Region.view)."""

    kind = "device"

    def __init__(self, device: torch.device, size: int, fd: int | None = None):
        """fd None: create (the reference); otherwise import fd (the candidate)."""
        if device.type != "cuda":
            raise Unavailable("not a CUDA device")
        lib = _cuda()
        ordinal = device.index if device.index is not None else torch.cuda.current_device()
        torch.cuda.set_device(ordinal)
        torch.cuda.synchronize(ordinal)  # the primary context current on this thread
        prop = _prop(ordinal)
        gran = ctypes.c_size_t(0)
        _check(lib.cuMemGetAllocationGranularity(ctypes.byref(gran), ctypes.byref(prop), _GRANULARITY_MINIMUM),
               "cuMemGetAllocationGranularity")
        step = max(int(gran.value), 1)
        self.size = size
        self.mapped = (max(size, 1) + step - 1) // step * step
        handle = ctypes.c_uint64(0)
        if fd is None:
            _check(lib.cuMemCreate(ctypes.byref(handle), self.mapped, ctypes.byref(prop), 0), "cuMemCreate")
        else:
            _check(lib.cuMemImportFromShareableHandle(ctypes.byref(handle), ctypes.c_void_p(fd), _POSIX_FD),
                   "cuMemImportFromShareableHandle")
        self.handle = handle.value
        ptr = ctypes.c_uint64(0)
        try:
            _check(lib.cuMemAddressReserve(ctypes.byref(ptr), self.mapped, 0, 0, 0), "cuMemAddressReserve")
            _check(lib.cuMemMap(ptr.value, self.mapped, 0, self.handle, 0), "cuMemMap")
            access = _Access()
            access.location.type, access.location.id, access.flags = _LOCATION_DEVICE, ordinal, _READWRITE
            _check(lib.cuMemSetAccess(ptr.value, self.mapped, ctypes.byref(access), 1), "cuMemSetAccess")
        except Unavailable:
            lib.cuMemRelease(self.handle)
            raise
        self._iface = _Interface(ptr.value, self.mapped)
        self.raw = torch.as_tensor(self._iface, device=device)
        if fd is None:
            self.raw.zero_()  # nothing of an earlier allocation of this process is ever readable
            torch.cuda.synchronize(device)

    def export_fd(self) -> int:
        """The reference: a new file descriptor for the allocation."""
        fd = ctypes.c_int(-1)
        _check(_cuda().cuMemExportToShareableHandle(ctypes.byref(fd), self.handle, _POSIX_FD, 0),
               "cuMemExportToShareableHandle")
        return fd.value

    def view(self, s: dict, offset: int) -> torch.Tensor:
        """The slot of one output as a device tensor of its spec's dtype and shape."""
        n, dtype = slot(s, offset, self.size)
        if n == 0:
            return torch.empty(s["shape"], dtype=dtype, device=self.raw.device)
        return self.raw[offset:offset + n].view(dtype).view(s["shape"])


def send(sock: socket.socket, region: DeviceRegion) -> None:
    """The reference: the region's descriptor to the candidate."""
    fd = region.export_fd()
    try:
        socket.send_fds(sock, [b"r"], [fd])
    finally:
        os.close(fd)


def receive(sock: socket.socket, device: torch.device, size: int, timeout: float = 10.0) -> DeviceRegion:
    """The candidate: the reference's descriptor, mapped."""
    sock.settimeout(timeout)
    try:
        msg, fds, _flags, _addr = socket.recv_fds(sock, 16, 4)
    except OSError as e:
        raise Unavailable(f"no descriptor from the reference: {e}") from None
    if msg != b"r" or len(fds) != 1:
        raise Unavailable("the reference sent no descriptor")
    try:
        return DeviceRegion(device, size, fds[0])
    finally:
        for fd in fds:
            os.close(fd)


def socket_pair() -> tuple[socket.socket, socket.socket]:
    """The parent: the pair the descriptor travels on (reference end, candidate end)."""
    return socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
