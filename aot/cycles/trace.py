"""QEMU's execution log read as a histogram of executed blocks and their successors.

QEMU run with ``-d exec,nochain`` prints one line per translation block it
executes (``nochain``: blocks do not jump into each other unlogged)::

    Trace 0: 0x7fb304000100 [00800408/00000c18/00000110/ff020200] symbol

(cs_base/pc/flags/cflags; the low 9 bits of cflags limit the block's length,
0 meaning QEMU's maximum of 512).  When QEMU logged a block but did not start
it (an interrupt or the instruction budget came first) it says so on a
``Stopped execution of TB chain before ...`` line, and that block is dropped.

:class:`TraceParser` keeps only *windows*: a window opens when a block
starts at one of the ``starts`` addresses (the function whose run is
measured) and closes when a block starts at ``stop`` (the timer read that
ends the RPC's measurement).  Inside a window every executed block is
counted together with the address executed next, which tells whether its
final branch was taken.  ``markers`` split a window into segments: a block
starting at a marker address begins the segment of that marker's label (the
kernels of a whole-model run).  The parser takes lines as bytes, so a FIFO
of several hundred MB streams through without being stored.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from aot.cycles.errors import CycleModelError

#: QEMU's maximum number of instructions per translation block.
MAX_BLOCK = 512

Edge = tuple[int, int, int]  # (block address, block length limit, next address)


@dataclass
class Window:
    """One measured run: per segment label, how often each (block, next address) ran."""

    name: str
    segments: dict[str, Counter] = field(default_factory=dict)

    def edges(self) -> Counter:
        """All segments together."""
        total: Counter = Counter()
        for counts in self.segments.values():
            total.update(counts)
        return total


class TraceParser:
    """Feed QEMU ``-d exec`` lines; collects :class:`Window` objects in :attr:`windows`."""

    def __init__(self, starts: dict[int, str], stop: int, markers: dict[int, str] | None = None):
        self.starts = starts
        self.stop = stop
        self.markers = markers or {}
        self.windows: list[Window] = []
        self.lines = 0
        self._keys: dict[bytes, tuple[int, int]] = {}
        self._window: Window | None = None
        self._segment: Counter | None = None
        self._prev: tuple[int, int] | None = None
        self._undo: tuple[Counter, Edge, tuple[int, int] | None] | None = None

    def _key(self, line: bytes) -> tuple[int, int] | None:
        j = line.find(b"[")
        if j < 0:
            return None
        raw = line[j + 10: j + 37]
        key = self._keys.get(raw)
        if key is None:
            try:
                pc = int(raw[:8], 16)
                limit = int(raw[18:26], 16) & 0x1FF or MAX_BLOCK
            except ValueError:
                raise CycleModelError(f"unexpected QEMU exec log line: {line[:120]!r}") from None
            key = self._keys[raw] = (pc, limit)
        return key

    def feed(self, line: bytes) -> None:
        self.lines += 1
        if line.startswith(b"Trace"):
            key = self._key(line)
            if key is not None:
                self._block(key)
        elif line.startswith(b"Stopped execution") and self._undo is not None:
            counts, edge, prev = self._undo
            counts[edge] -= 1
            if not counts[edge]:
                del counts[edge]
            self._prev, self._undo = prev, None

    def _block(self, key: tuple[int, int]) -> None:
        pc = key[0]
        if self._window is None:
            name = self.starts.get(pc)
            if name is None:
                return
            self._window = Window(name)
            self._segment = self._window.segments.setdefault(self.markers.get(pc, name),
                                                             Counter())
            self._prev, self._undo = key, None
            return
        prev = self._prev
        edge = (prev[0], prev[1], pc)
        self._segment[edge] += 1
        self._undo = (self._segment, edge, prev)
        if pc == self.stop:
            self.windows.append(self._window)
            self._window = self._segment = self._prev = self._undo = None
            return
        label = self.markers.get(pc)
        if label is not None:
            self._segment = self._window.segments.setdefault(label, Counter())
        self._prev = key


class TraceReader(threading.Thread):
    """Reads a QEMU log (a FIFO) into a :class:`TraceParser` in the background."""

    def __init__(self, path, parser: TraceParser):
        super().__init__(daemon=True, name="qemu-exec-trace")
        self.path = path
        self.parser = parser
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with open(self.path, "rb", buffering=1 << 20) as log:
                for line in log:
                    self.parser.feed(line)
        except (OSError, CycleModelError) as err:  # reported by wait_windows
            self.error = err

    def wait_windows(self, count: int, timeout: float) -> list[Window]:
        """Block until ``count`` windows are complete; the windows."""
        deadline = time.monotonic() + timeout
        while len(self.parser.windows) < count:
            if self.error is not None:
                raise CycleModelError(f"reading QEMU's execution log failed: {self.error}")
            if not self.is_alive() or time.monotonic() > deadline:
                raise CycleModelError(
                    f"QEMU's execution log holds {len(self.parser.windows)} measured runs, "
                    f"expected {count} (read {self.parser.lines} lines)")
            time.sleep(0.01)
        return list(self.parser.windows)
