"""Frame codec: byte stuffing and CRC-32, the host half of runtime_c/src/frame.c.

On the wire: ``FLAG stuffed(body + crc32(body) as 4 little-endian bytes) FLAG``
with FLAG = 0x7E; 0x7E and 0x7D inside are sent as 0x7D, byte ^ 0x20.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from aot.rpc.protocol import CRC_SIZE

FLAG = 0x7E
ESCAPE = 0x7D
XOR = 0x20

_HEADER = struct.Struct("<BBIH")


def encode_frame(body: bytes) -> bytes:
    """Return the wire bytes of one frame carrying ``body``."""
    raw = body + struct.pack("<I", zlib.crc32(body))
    stuffed = raw.replace(b"\x7d", b"\x7d\x5d").replace(b"\x7e", b"\x7d\x5e")
    return b"\x7e" + stuffed + b"\x7e"


class FrameDecoder:
    """Incremental decoder: feed any chunks, get back the bodies with a good CRC.

    Bytes before the first flag are skipped; a frame longer than ``max_body``
    (CRC excluded), with a bad escape or a bad CRC is dropped and counted in
    :attr:`dropped`.
    """

    def __init__(self, max_body: int = 65535):
        self.max_body = max_body
        self.dropped = 0
        self._buf = bytearray()
        self._synced = False
        self._escaped = False
        self._broken = False

    def feed(self, data: bytes) -> list[bytes]:
        frames = []
        for byte in data:
            if byte == FLAG:
                frame = self._finish()
                if frame is not None:
                    frames.append(frame)
            elif not self._synced or self._broken:
                continue
            elif self._escaped:
                self._escaped = False
                byte ^= XOR
                if byte not in (FLAG, ESCAPE):
                    self._broken = True
                else:
                    self._append(byte)
            elif byte == ESCAPE:
                self._escaped = True
            else:
                self._append(byte)
        return frames

    def _append(self, byte: int) -> None:
        if len(self._buf) >= self.max_body + CRC_SIZE:
            self._broken = True
        else:
            self._buf.append(byte)

    def _finish(self) -> bytes | None:
        raw, bad = bytes(self._buf), self._broken or self._escaped
        was_synced = self._synced
        self._buf.clear()
        self._synced, self._escaped, self._broken = True, False, False
        if not was_synced or (not raw and not bad):
            return None
        if bad or len(raw) <= CRC_SIZE:
            self.dropped += 1
            return None
        body, crc = raw[:-CRC_SIZE], raw[-CRC_SIZE:]
        if struct.unpack("<I", crc)[0] != zlib.crc32(body):
            self.dropped += 1
            return None
        return body


@dataclass(frozen=True)
class Header:
    """The 8-byte header at the start of every frame body."""

    command: int
    status: int
    session: int
    request_id: int

    def pack(self) -> bytes:
        return _HEADER.pack(self.command, self.status, self.session, self.request_id)

    @classmethod
    def unpack(cls, body: bytes) -> Header:
        """Parse the header; ``body`` must hold at least :data:`HEADER_SIZE` bytes."""
        return cls(*_HEADER.unpack_from(body))

