"""proto.py: framed messages between the worker's trusted parent and its children.

A frame is one type byte (b"J"), an 8-byte big-endian length and JSON text.
Nothing is ever unpickled: a candidate's process can only send JSON that the
trusted side parses defensively. Output tensors do not travel here: they go
through the shared region (outputs.py).
"""
from __future__ import annotations

import json
import os
import select
import struct
import time

from .messages import check_internal

MAX_FRAME = 64 << 20


class ChannelClosed(Exception):
    """The peer closed the channel or died."""


class Deadline(Exception):
    """No frame arrived before the deadline."""


class Channel:
    def __init__(self, rfd: int, wfd: int):
        self.rfd = rfd
        self.wfd = wfd

    def close(self) -> None:
        for fd in (self.rfd, self.wfd):
            try:
                os.close(fd)
            except OSError:
                pass

    def _write_all(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        while view:
            try:
                n = os.write(self.wfd, view)
            except BrokenPipeError as e:
                raise ChannelClosed("peer closed the channel") from e
            view = view[n:]

    def send(self, obj: dict) -> None:
        check_internal(obj)
        body = json.dumps(obj).encode()
        self._write_all(b"J" + struct.pack(">Q", len(body)) + body)

    def _read_exact(self, n: int, deadline: float | None) -> bytes:
        chunks = []
        while n:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Deadline()
                ready, _, _ = select.select([self.rfd], [], [], min(left, 1.0))
                if not ready:
                    continue
            chunk = os.read(self.rfd, min(n, 1 << 20))
            if not chunk:
                raise ChannelClosed("peer closed the channel")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def recv(self, deadline: float | None = None) -> dict:
        head = self._read_exact(9, deadline)
        (length,) = struct.unpack(">Q", head[1:])
        if head[:1] != b"J" or length > MAX_FRAME:
            raise ChannelClosed("malformed frame")
        obj = json.loads(self._read_exact(length, deadline))
        if not isinstance(obj, dict):
            raise ChannelClosed("expected a JSON object")
        return obj
