"""proto.py: framed messages between the worker's trusted parent and its children.

A frame is one type byte, an 8-byte big-endian length and the payload:
b"J" + JSON text, or b"B" + raw bytes (tensor data, always announced by a
preceding JSON header). Nothing is ever unpickled: a candidate's process can
only send JSON and bytes that the trusted side parses defensively.
"""
from __future__ import annotations

import json
import os
import select
import struct
import time

MAX_FRAME = 8 << 30


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
        body = json.dumps(obj).encode()
        self._write_all(b"J" + struct.pack(">Q", len(body)) + body)

    def send_frame(self, kind: str, body: bytes) -> None:
        """Forward a frame received from another channel unchanged."""
        self._write_all(kind.encode("latin-1") + struct.pack(">Q", len(body)))
        self._write_all(body)

    def send_bytes(self, data: bytes | memoryview) -> None:
        self._write_all(b"B" + struct.pack(">Q", len(data)))
        self._write_all(data)

    def _read_exact(self, n: int, deadline: float | None) -> bytes:
        chunks = []
        while n:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Deadline()
                ready, _, _ = select.select([self.rfd], [], [], left)
                if not ready:
                    raise Deadline()
            chunk = os.read(self.rfd, min(n, 1 << 20))
            if not chunk:
                raise ChannelClosed("peer closed the channel")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def recv_frame(self, deadline: float | None = None) -> tuple[str, bytes]:
        head = self._read_exact(9, deadline)
        kind = head[:1].decode("latin-1")
        (length,) = struct.unpack(">Q", head[1:])
        if kind not in ("J", "B") or length > MAX_FRAME:
            raise ChannelClosed("malformed frame")
        return kind, self._read_exact(length, deadline)

    def recv(self, deadline: float | None = None) -> dict:
        kind, body = self.recv_frame(deadline)
        if kind != "J":
            raise ChannelClosed("expected a JSON frame")
        obj = json.loads(body)
        if not isinstance(obj, dict):
            raise ChannelClosed("expected a JSON object")
        return obj

    def recv_bytes(self, deadline: float | None = None) -> bytes:
        kind, body = self.recv_frame(deadline)
        if kind != "B":
            raise ChannelClosed("expected a bytes frame")
        return body
