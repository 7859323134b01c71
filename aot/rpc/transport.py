"""Byte streams to a device: by URL (pyserial), a child process's pipes, and a
fault-injecting wrapper for robustness tests.

A transport moves bytes and nothing else: :meth:`write` sends all of them,
:meth:`read` returns what arrived within ``timeout`` seconds (possibly
``b""``), :meth:`close` releases everything and may be called twice.
"""

from __future__ import annotations

import os
import random
import select
import subprocess
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import serial

from aot.rpc.errors import TransportError


class Transport:
    """Interface of every transport; also a context manager that closes it."""

    def write(self, data: bytes) -> None:
        raise NotImplementedError

    def read(self, timeout: float) -> bytes:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class SerialTransport(Transport):
    """Any pyserial URL: ``socket://127.0.0.1:PORT`` (QEMU), ``/dev/ttyACM0``
    (a board), ``loop://`` (tests), ``rfc2217://...``."""

    def __init__(self, url: str, baudrate: int = 115200):
        self.url = url
        try:
            self._port = serial.serial_for_url(url, baudrate=baudrate, timeout=0)
        except (serial.SerialException, ValueError, OSError) as err:
            raise TransportError(
                f"cannot open {url!r}: {err}; check that the device is connected "
                "(or that QEMU is running) and that the URL is right"
            ) from None

    def write(self, data: bytes) -> None:
        try:
            self._port.write(data)
            self._port.flush()
        except (serial.SerialException, OSError) as err:
            raise TransportError(f"writing to {self.url} failed: {err}") from None

    def read(self, timeout: float) -> bytes:
        try:
            self._port.timeout = max(timeout, 0.0)
            first = self._port.read(1)
            if not first:
                return b""
            # Then whatever else has arrived, without waiting: in_waiting is
            # only 0 or 1 for socket:// URLs, so it cannot size this read.
            self._port.timeout = 0
            return first + self._port.read(65536)
        except (serial.SerialException, OSError) as err:
            raise TransportError(f"reading from {self.url} failed: {err}") from None

    def close(self) -> None:
        self._port.close()


class PipeTransport(Transport):
    """A child process (the host port) speaking on its stdin/stdout.

    :meth:`reset_device` kills and restarts the process: the closest thing a
    process has to a board reset, used by the fault-injection tests.
    """

    def __init__(self, argv: Sequence[str], env: dict[str, str] | None = None):
        self.argv = list(argv)
        self.env = env
        self._proc: subprocess.Popen | None = None
        self._start()

    def _start(self) -> None:
        try:
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
                env=self.env,
            )
        except OSError as err:
            raise TransportError(f"cannot start {self.argv[0]}: {err}") from None

    def _exited(self) -> TransportError:
        code = self._proc.poll() if self._proc else None
        return TransportError(
            f"the device process {self.argv[0]} exited (status {code}); "
            "see its stderr for the reason"
        )

    def write(self, data: bytes) -> None:
        try:
            self._proc.stdin.write(data)
        except (BrokenPipeError, ValueError, OSError):
            raise self._exited() from None

    def read(self, timeout: float) -> bytes:
        fd = self._proc.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], max(timeout, 0.0))
        if not ready:
            return b""
        data = os.read(fd, 65536)
        if not data:
            raise self._exited()
        return data

    def reset_device(self) -> None:
        self.close()
        self._start()

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            stream.close()
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass(frozen=True)
class FaultPlan:
    """What :class:`FaultyTransport` does to each byte, in each direction.

    Probabilities are per byte.  A delay holds the byte (and, to keep the
    stream in order, every byte after it) for up to ``max_delay`` seconds.
    ``reset_after`` resets the device once, when that many bytes have been
    written to it (mid-frame in general).
    """

    seed: int = 0
    drop: float = 0.0
    corrupt: float = 0.0
    duplicate: float = 0.0
    delay: float = 0.0
    max_delay: float = 0.05
    reset_after: int | None = None


class _Lane:
    """One direction: faults applied on entry, bytes released when due."""

    def __init__(self, plan: FaultPlan, rng: random.Random):
        self.plan, self.rng = plan, rng
        self.queue: deque[tuple[float, int]] = deque()
        self.not_before = 0.0

    def push(self, data: bytes) -> None:
        plan, rng = self.plan, self.rng
        for byte in data:
            if rng.random() < plan.drop:
                continue
            if rng.random() < plan.corrupt:
                byte ^= 1 << rng.randrange(8)
            copies = 2 if rng.random() < plan.duplicate else 1
            due = max(time.monotonic(), self.not_before)
            if rng.random() < plan.delay:
                due += rng.uniform(0, plan.max_delay)
            self.not_before = due
            for _ in range(copies):
                self.queue.append((due, byte))

    def pop_due(self) -> bytes:
        now, out = time.monotonic(), bytearray()
        while self.queue and self.queue[0][0] <= now:
            out.append(self.queue.popleft()[1])
        return bytes(out)

    def next_due(self) -> float | None:
        return self.queue[0][0] if self.queue else None


class FaultyTransport(Transport):
    """Wraps a transport and damages the stream in both directions (tests only).

    Deterministic for a given plan and timing; the device side is the wrapped
    transport, the host side is whoever calls this one.
    """

    def __init__(self, inner: Transport, plan: FaultPlan):
        if plan.reset_after is not None and not hasattr(inner, "reset_device"):
            raise ValueError(f"{type(inner).__name__} cannot reset its device; "
                             "reset_after needs a PipeTransport")
        self.inner, self.plan = inner, plan
        rng = random.Random(plan.seed)
        self._to_device = _Lane(plan, rng)
        self._to_host = _Lane(plan, rng)
        self._written = 0
        self.resets = 0

    def _flush_to_device(self) -> None:
        data = self._to_device.pop_due()
        if not data:
            return
        at = self.plan.reset_after
        if at is not None and self.resets == 0 and self._written + len(data) > at:
            cut = at - self._written
            self.inner.write(data[:cut])
            self.inner.reset_device()
            self.resets += 1
            data = data[cut:]
        self._written += len(data)
        self.inner.write(data)

    def write(self, data: bytes) -> None:
        self._to_device.push(data)
        self._flush_to_device()

    def read(self, timeout: float) -> bytes:
        deadline = time.monotonic() + max(timeout, 0.0)
        while True:
            self._flush_to_device()
            now = time.monotonic()
            pending = [t for t in (self._to_device.next_due(), self._to_host.next_due()) if t]
            wait = min([deadline, *pending]) - now
            self._to_host.push(self.inner.read(max(min(wait, 0.01), 0.0)))
            out = self._to_host.pop_due()
            if out or time.monotonic() >= deadline:
                return out

    def close(self) -> None:
        self.inner.close()
