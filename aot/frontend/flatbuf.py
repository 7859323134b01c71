"""A bounds-checked reader for FlatBuffers tables, enough to walk a .tflite file.

The ``flatbuffers`` runtime trusts its input: a corrupted offset raises
whatever Python raises (IndexError, struct.error) or reads garbage.  A model
file is user input, so every read here checks its offset against the buffer
and raises :class:`FlatBufferError` instead.  Vector lengths are checked
against the bytes that remain, so a corrupted length cannot make a loop run
for billions of steps.

Layout reminder (FlatBuffers binary format): the file starts with a u32
offset to the root table, then (optionally) a 4-byte file identifier.  A
table starts with an i32 pointing back (``table - value``) to its vtable;
the vtable is ``u16 vtable_bytes, u16 table_bytes, u16 field_offset[...]``
with 0 meaning "absent, use the default".  Offsets to sub-tables, vectors
and strings are u32 relative to where they are stored; a vector is a u32
length followed by its elements.
"""

from __future__ import annotations

import struct

import numpy as np


class FlatBufferError(Exception):
    """The bytes are not a well-formed FlatBuffer (truncated or corrupted)."""


_SCALARS = {
    "b": 1, "B": 1, "?": 1, "h": 2, "H": 2, "i": 4, "I": 4, "q": 8, "Q": 8, "f": 4, "d": 8,
}


class Buffer:
    def __init__(self, data: bytes) -> None:
        self.data = bytes(data)
        self.size = len(self.data)

    def check(self, pos: int, nbytes: int, what: str) -> None:
        if pos < 0 or nbytes < 0 or pos + nbytes > self.size:
            raise FlatBufferError(
                f"{what} at byte {pos} (+{nbytes}) lies outside the {self.size}-byte file"
            )

    def scalar(self, fmt: str, pos: int, what: str = "value"):
        self.check(pos, _SCALARS[fmt], what)
        return struct.unpack_from("<" + fmt, self.data, pos)[0]

    def root(self) -> Table:
        return Table(self, self.scalar("I", 0, "root offset"), "root table")

    def identifier(self) -> bytes:
        return self.data[4:8] if self.size >= 8 else b""


class Table:
    """One table; fields are read by slot number (their order in the schema)."""

    def __init__(self, buf: Buffer, pos: int, what: str) -> None:
        self.buf = buf
        self.pos = pos
        self.what = what
        vtable = pos - buf.scalar("i", pos, f"{what} header")
        vt_bytes = buf.scalar("H", vtable, f"{what} vtable")
        if vt_bytes < 4 or vt_bytes % 2:
            raise FlatBufferError(f"{what}: vtable size {vt_bytes} is malformed")
        buf.check(vtable, vt_bytes, f"{what} vtable")
        self.vtable = vtable
        self.vt_bytes = vt_bytes

    def _offset(self, slot: int) -> int:
        entry = 4 + 2 * slot
        if entry >= self.vt_bytes:
            return 0
        return self.buf.scalar("H", self.vtable + entry)

    def has(self, slot: int) -> bool:
        return self._offset(slot) != 0

    def scalar(self, slot: int, fmt: str, default):
        off = self._offset(slot)
        if not off:
            return default
        return self.buf.scalar(fmt, self.pos + off, f"{self.what} field {slot}")

    def _indirect(self, slot: int) -> int | None:
        off = self._offset(slot)
        if not off:
            return None
        at = self.pos + off
        return at + self.buf.scalar("I", at, f"{self.what} field {slot}")

    def table(self, slot: int, what: str) -> Table | None:
        pos = self._indirect(slot)
        return None if pos is None else Table(self.buf, pos, what)

    def _vector(self, slot: int, elem_bytes: int) -> tuple[int, int] | None:
        pos = self._indirect(slot)
        if pos is None:
            return None
        length = self.buf.scalar("I", pos, f"{self.what} vector {slot} length")
        self.buf.check(pos + 4, length * elem_bytes, f"{self.what} vector {slot}")
        return pos + 4, length

    def array(self, slot: int, dtype: str) -> np.ndarray | None:
        """A vector of scalars as a (copied) numpy array, or None if absent."""
        dt = np.dtype(dtype).newbyteorder("<")
        vec = self._vector(slot, dt.itemsize)
        if vec is None:
            return None
        start, length = vec
        return np.frombuffer(self.buf.data, dt, length, start).astype(dt.newbyteorder("="))

    def byte_span(self, slot: int) -> tuple[int, int] | None:
        """Start and length of a vector of bytes, without copying it."""
        return self._vector(slot, 1)

    def tables(self, slot: int, what: str) -> list[Table]:
        vec = self._vector(slot, 4)
        if vec is None:
            return []
        start, length = vec
        out = []
        for i in range(length):
            at = start + 4 * i
            out.append(Table(self.buf, at + self.buf.scalar("I", at), f"{what} {i}"))
        return out

    def string(self, slot: int) -> str | None:
        vec = self._vector(slot, 1)
        if vec is None:
            return None
        start, length = vec
        return self.buf.data[start:start + length].decode("utf-8", errors="replace")
