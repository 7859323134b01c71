"""A firmware project run under QEMU with its execution log streamed to a trace parser.

:func:`traced_device` starts the board's QEMU like the qemu runner does
(same machine, ``-icount``, serial port) plus ``-d exec,nochain -D FIFO``,
reads the FIFO in a thread (:class:`aot.cycles.trace.TraceReader`) and yields
a connected RPC client with the reader.  QEMU opens its log before it boots,
so the reader starts first; if QEMU fails, a writer opened here ends the
reader's wait.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from aot.cycles.errors import CycleModelError
from aot.cycles.trace import TraceParser, TraceReader
from aot.rpc import Client, connect
from flash import QemuConfig
from flash.qemu import QemuRunner, qemu_extra_args

#: Options that make QEMU log every executed translation block (docs/cycles.md).
TRACE_ARGS = ("-d", "exec,nochain")


def check_emulated(board) -> None:
    """Refuse a board QEMU cannot run, or a QEMU that is not installed."""
    if board.qemu is None:
        raise CycleModelError(f"{board.tag} is not emulated: the cycle estimate needs an "
                              "execution trace from QEMU; profile on the emulated board of the "
                              "same core (aot boards lists them)")
    if shutil.which(board.qemu.system) is None:
        raise CycleModelError(f"{board.qemu.system} is not installed or not on PATH; install "
                              "QEMU (apt-get install qemu-system-arm qemu-system-misc)")


def log_filter(excluded: list[tuple[int, int]]) -> tuple[str, ...]:
    """QEMU's ``-dfilter`` option logging every address but the ``(address, size)``
    ranges of ``excluded`` (nothing when empty)."""
    ranges, start = [], 0
    for address, size in sorted(excluded):
        if address > start:
            ranges.append(f"0x{start:x}..0x{address - 1:x}")
        start = max(start, address + size)
    if not excluded:
        return ()
    ranges.append(f"0x{start:x}..0xffffffff")
    return ("-dfilter", ",".join(ranges))


@contextlib.contextmanager
def traced_device(project, parser: TraceParser, *, timeout: float = 5.0,
                  excluded: list[tuple[int, int]] | None = None,
                  extra_args: tuple[str, ...] = ()
                  ) -> Iterator[tuple[Client, TraceReader]]:
    """Run ``project``'s firmware under QEMU with the exec log going to ``parser``.

    ``excluded`` are ``(address, size)`` ranges of code QEMU does not log
    (``-dfilter``): code that never runs inside a measured window, such as the
    port's loop polling the UART while the host is busy (about 500,000 blocks
    a second of idle time otherwise).  ``extra_args`` go to QEMU as they are
    (the memory trace plugin, :mod:`aot.cycles.memtrace`)."""
    board = project.board
    check_emulated(board)
    with tempfile.TemporaryDirectory(prefix="aot-trace-") as tmp:
        fifo = Path(tmp) / "exec.log"
        os.mkfifo(fifo)
        reader = TraceReader(fifo, parser)
        reader.start()
        config = QemuConfig(elf=project.elf, machine=board.qemu.machine, qemu=board.qemu.system,
                            extra_args=qemu_extra_args(board.qemu.args)
                            + TRACE_ARGS + ("-D", str(fifo)) + log_filter(excluded or [])
                            + tuple(extra_args))
        try:
            with QemuRunner(config) as url, connect(url, timeout=timeout) as client:
                yield client, reader
        finally:
            _release(fifo, reader)


def _release(fifo: Path, reader: TraceReader) -> None:
    """Let the reader see the end of the log even if QEMU never opened it."""
    with contextlib.suppress(OSError):
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
    reader.join(timeout=10)


def trace_elf(elf, machine: str, parser: TraceParser, *, qemu: str = "qemu-system-arm",
              timeout: float = 600.0) -> TraceParser:
    """Run a bare-metal ELF that ends itself (semihosting exit) and feed its trace.

    For programs without the RPC: hand-written timing loops, kernels of
    other libraries built into a small test program (docs/cycles.md,
    "Validation").  Raises when QEMU is missing or exits with a failure.
    """
    if shutil.which(qemu) is None:
        raise CycleModelError(f"{qemu} is not installed or not on PATH; install QEMU "
                              "(apt-get install qemu-system-arm)")
    argv = [qemu, "-M", machine, "-nographic", "-monitor", "none",
            "-icount", "shift=0,align=off,sleep=off",
            "-semihosting-config", "enable=on,target=native", "-kernel", str(elf),
            # The log into our pipe: /proc/self/fd/1 is what /dev/stdout links to,
            # without depending on that link (a machine where /dev/stdout had
            # become a plain file silently sent every trace there).
            *TRACE_ARGS, "-D", "/proc/self/fd/1"]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL) as proc:
        for line in proc.stdout:
            parser.feed(line)
        try:
            status = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise CycleModelError(f"{elf} did not end within {timeout:g} s under QEMU") from None
        if status != 0:
            raise CycleModelError(f"{elf} ended with status {status} under QEMU: "
                                  f"{proc.stderr.read().decode(errors='replace')[-400:]}")
    return parser
