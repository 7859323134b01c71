"""Estimated cycles of single RPC kernel calls: what ``aot tune --cost cycles`` ranks by.

The recipe::

    calls = CallTrace(project, {"c0": "tune_run_0", ...}, core, memory)
    with calls.device() as dev:            # QEMU with -d exec,nochain (aot.cycles.session)
        result = dev.run(3, kernel="c0")   # three timed calls
        estimates = calls.estimates(3)     # one Estimate per call, in order

One trace window per call of a listed function: from that function's entry
to the block at ``aot_port_timer_stop`` (the RPC's timed call,
``timed_call`` in runtime_c/src/rpc_server.c).  A call's estimate
counts the blocks of every function executed in the window *except* the
listed function itself (a batch image's ``tune_run_<i>`` wrapper, which
only passes the buffers on) and the RPC server's code after it returned
(the function of the blocks that jump to the timer): the candidate kernel's
own function and every helper and C library call it makes.  That is the
definition of a kernel's row in ``aot profile`` (aot.cycles.profile: a
kernel's segment without the model's entry code), so a candidate's cost and
the profile's row of the same kernel on the same data are the same number
(tests/tune/test_cost_cycles.py); the RPC's own overhead is excluded the
same way for every candidate.

With a board's :class:`aot.cycles.memory.MemorySystem` whose accesses wait
(a real board priced on the emulated board of its core, or an emulated
board with flash wait states), QEMU also loads the memory trace plugin
(:mod:`aot.cycles.memtrace`) with one window start per listed function, and
each call's estimate adds the memory stalls of its accesses as ``aot
profile`` adds them to a kernel's row: the window's accesses are walked in
order through the board's caches from cold (the wrapper's and the RPC's
accesses too, as the profile walks the model's entry code), and the stalls
of the blocks the estimate counts are added.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from aot.cycles.cores import CoreTiming, MemoryTiming
from aot.cycles.errors import CycleModelError
from aot.cycles.memory import MemorySystem, Stalls, Walker
from aot.cycles.memtrace import Placement, accesses, plugin_args, plugin_library
from aot.cycles.model import CostModel, Estimate
from aot.cycles.program import Program
from aot.cycles.session import traced_device
from aot.cycles.trace import TraceParser, TraceReader, Window

#: The port's function that ends the RPC's measurement (runtime_c/ports/*/port.c).
TIMER_STOP = "aot_port_timer_stop"
#: Functions QEMU need not log: the port's UART read, which polls while the host
#: prepares its next request and never runs inside a timed call.
UNTRACED = ("aot_port_read_byte",)


def function_address(program: Program, symbol: str) -> int:
    """The address of ``symbol``, or a refusal naming what the firmware lacks."""
    if not program.has_function(symbol):
        raise CycleModelError(f"the firmware {program.path} has no function {symbol!r}: the "
                              "cycle estimate needs RPC firmware built by aot (aot build)")
    return program.address_of(symbol)


@dataclass
class CallEstimate(Estimate):
    """One call's :class:`aot.cycles.model.Estimate`; ``cycles`` include ``stalls``
    (None: the memory never waits)."""

    stalls: Stalls | None = None


class CallTrace:
    """Per-call cycle estimates of the functions ``functions`` (label -> C function)
    of a built RPC project, run traced under QEMU.

    ``memory`` is the board's memory system (None or one that never waits:
    the core table's pricing alone, at zero wait states); ``timing`` the
    uniform wait states of hand-made experiments (:class:`MemoryTiming`)."""

    def __init__(self, project, functions: dict[str, str], core: CoreTiming,
                 timing: MemoryTiming | None = None, *, memory: MemorySystem | None = None):
        self.project = project
        self.program = Program(project.elf)
        self.functions = dict(functions)
        self.starts = {function_address(self.program, fn): label
                       for label, fn in self.functions.items()}
        self.stop = function_address(self.program, TIMER_STOP)
        self.model = CostModel(self.program, core, timing)
        self.memory = None if memory is None or memory.zero_wait else memory
        self.reader: TraceReader | None = None
        self._log: _MemoryLog | None = None
        self._placement: Placement | None = None

    @contextlib.contextmanager
    def device(self, *, timeout: float = 5.0) -> Iterator:
        """A connected RPC client of the project's firmware under traced QEMU.  Every
        device has a fresh trace (a call that crashed or hung leaves its window open:
        the next device does not see it)."""
        parser = TraceParser(self.starts, self.stop)
        excluded = [self.program.extent(fn) for fn in UNTRACED if self.program.has_function(fn)]
        with contextlib.ExitStack() as stack:
            extra: tuple[str, ...] = ()
            log = None
            if self.memory is not None:
                tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(
                    prefix="aot-calls-")))
                log = _MemoryLog(tmp / "memtrace.bin")
                extra = plugin_args(plugin_library(tmp), log.path, list(self.starts),
                                    self.stop)
            with traced_device(self.project, parser, timeout=timeout, excluded=excluded,
                               extra_args=extra) as (dev, reader):
                self.reader = reader
                self._log = log
                try:
                    yield dev
                finally:
                    self.reader = None
                    self._log = None

    def mark(self) -> int:
        """How many calls the current device's trace holds so far."""
        return len(self._reader().parser.windows)

    def estimates(self, since: int, count: int, timeout: float) -> list[Estimate]:
        """The estimates of ``count`` calls from window ``since`` on (see :meth:`mark`):
        waits up to ``timeout`` s for the reader to see them."""
        windows = self._reader().wait_windows(since + count, timeout)[since:since + count]
        if self._log is None:
            return [self.estimate(w) for w in windows]
        records = self._log.windows(since, count, self.stop)
        return [self.estimate(w, r) for w, r in zip(windows, records)]

    def estimate(self, window: Window, records: np.ndarray | None = None) -> CallEstimate:
        """One call's estimate: the window without the called function's own blocks
        and the RPC server's blocks after it returned (the module docstring); with
        the plugin's ``records`` of the same call, plus the stalls of those blocks."""
        edges = window.edges()
        glue = {self.functions[window.name]}
        glue |= {self.program.function_at(pc) for (pc, _, nxt) in edges if nxt == self.stop}
        kept: Counter = Counter({e: n for e, n in edges.items()
                                 if self.program.function_at(e[0]) not in glue})
        base = self.model.estimate(kept)
        out = CallEstimate(base.instructions, base.cycles, base.by_class)
        if records is not None and self.memory is not None:
            out.stalls = self._stalls(records, window, glue)
            out.cycles += out.stalls.total
        return out

    def _stalls(self, records: np.ndarray, window: Window, glue: set) -> Stalls:
        """The stalls of the call's own blocks, its accesses walked in order from cold
        caches (see the module docstring)."""
        from aot.cycles.profile import same_run   # profile imports the compiler: not at load

        records = same_run(records, window, self.stop)
        blocks = np.flatnonzero((records[:, 1] & 3) == 0)
        pcs, inverse = np.unique(records[blocks, 0], return_inverse=True)
        rows = np.array([int(self.program.function_at(int(pc)) in glue)
                         for pc in pcs], dtype=np.int64)[inverse]
        if self._placement is None:
            ram = self.project.board.memory.ram
            self._placement = Placement.of(self.project.elf, (ram.origin, ram.length),
                                           self.memory.tcm_region)
        names = [window.name, "(the RPC's code)"]
        walker = Walker(self.memory)
        out = Stalls()
        for row, acc in accesses(records, rows, self._placement, self.memory, names):
            stalls = walker.walk(acc)
            if row == 0:
                out.add(stalls)
        return out

    def _reader(self) -> TraceReader:
        if self.reader is None:
            raise CycleModelError("no traced device is open (CallTrace.device)")
        return self.reader


class _MemoryLog:
    """The memory trace plugin's log of one device, read window by window."""

    def __init__(self, path: Path):
        self.path = path
        self.offset = 0       # bytes of the file already split into windows
        self.done: list[np.ndarray] = []

    def windows(self, since: int, count: int, stop: int) -> list[np.ndarray]:
        """The records of windows ``since`` to ``since + count - 1``, each ending
        with the block at ``stop`` (the plugin flushes the file there, before the
        RPC answers)."""
        if len(self.done) < since + count and self.path.exists():
            data = self.path.read_bytes()[self.offset:]
            raw = np.frombuffer(data[:len(data) - len(data) % 8], dtype="<u4").reshape(-1, 2)
            ends = np.flatnonzero(((raw[:, 1] & 3) == 0) & (raw[:, 0] == stop))
            first = 0
            for end in ends.tolist():
                self.done.append(raw[first:end + 1])
                first = end + 1
            self.offset += 8 * first
        if len(self.done) < since + count:
            raise CycleModelError(f"the memory trace holds {len(self.done)} finished calls, "
                                  f"expected {since + count}: did QEMU load the plugin?")
        return self.done[since:since + count]
