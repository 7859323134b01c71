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
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator

from aot.cycles.cores import CoreTiming, MemoryTiming
from aot.cycles.errors import CycleModelError
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


class CallTrace:
    """Per-call cycle estimates of the functions ``functions`` (label -> C function)
    of a built RPC project, run traced under QEMU."""

    def __init__(self, project, functions: dict[str, str], core: CoreTiming,
                 memory: MemoryTiming):
        self.project = project
        self.program = Program(project.elf)
        self.functions = dict(functions)
        self.starts = {function_address(self.program, fn): label
                       for label, fn in self.functions.items()}
        self.stop = function_address(self.program, TIMER_STOP)
        self.model = CostModel(self.program, core, memory)
        self.reader: TraceReader | None = None

    @contextlib.contextmanager
    def device(self, *, timeout: float = 5.0) -> Iterator:
        """A connected RPC client of the project's firmware under traced QEMU.  Every
        device has a fresh trace (a call that crashed or hung leaves its window open:
        the next device does not see it)."""
        parser = TraceParser(self.starts, self.stop)
        excluded = [self.program.extent(fn) for fn in UNTRACED if self.program.has_function(fn)]
        with traced_device(self.project, parser, timeout=timeout,
                           excluded=excluded) as (dev, reader):
            self.reader = reader
            try:
                yield dev
            finally:
                self.reader = None

    def mark(self) -> int:
        """How many calls the current device's trace holds so far."""
        return len(self._reader().parser.windows)

    def estimates(self, since: int, count: int, timeout: float) -> list[Estimate]:
        """The estimates of ``count`` calls from window ``since`` on (see :meth:`mark`):
        waits up to ``timeout`` s for the reader to see them."""
        windows = self._reader().wait_windows(since + count, timeout)[since:since + count]
        return [self.estimate(w) for w in windows]

    def estimate(self, window: Window) -> Estimate:
        """One call's estimate: the window without the called function's own blocks
        and the RPC server's blocks after it returned (the module docstring)."""
        edges = window.edges()
        glue = {self.functions[window.name]}
        glue |= {self.program.function_at(pc) for (pc, _, nxt) in edges if nxt == self.stop}
        kept: Counter = Counter({e: n for e, n in edges.items()
                                 if self.program.function_at(e[0]) not in glue})
        return self.model.estimate(kept)

    def _reader(self) -> TraceReader:
        if self.reader is None:
            raise CycleModelError("no traced device is open (CallTrace.device)")
        return self.reader
