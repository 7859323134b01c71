"""Client: the typed API over a :class:`Session` (info, tensors, run).

    with connect("socket://127.0.0.1:5555") as dev:
        dev.write_tensor("input", x)
        result = dev.run(10)           # 10 inferences, one timing each
        y = dev.read_tensor("output")
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import numpy as np

from aot.errors import did_you_mean, one_of
from aot.rpc.errors import ProtocolError, RemoteError, RpcError
from aot.rpc.protocol import (
    DEVICE_REPORT_BYTES,
    LOADED_KERNEL,
    MAX_WAIT_STATES,
    NO_WAIT_STATES,
    NUMPY_DTYPES,
    TENSOR_WRITABLE,
    WHOLE_MODEL,
    Cache,
    Capability,
    Command,
    Dtype,
    Role,
    Status,
    TimerUnit,
)
from aot.rpc.session import Session
from aot.rpc.transport import SerialTransport, Transport


@dataclass(frozen=True)
class DeviceReport:
    """What the firmware says about its own set-up (INFO, Capability.DEVICE).

    ``core_clock_hz`` is the clock the port configured (None: not known),
    ``measured_clock_hz`` that clock counted against a timer independent of
    it (None: not measured: QEMU, or no independent timer set up),
    ``flash_wait_states`` read back from the flash interface (None: the flash
    has no such setting), ``caches`` the caches and accelerators found on.
    """

    core_clock_hz: int | None
    measured_clock_hz: int | None
    flash_wait_states: int | None
    caches: tuple[str, ...]

    def to_json(self) -> dict:
        return {"core_clock_hz": self.core_clock_hz, "measured_clock_hz": self.measured_clock_hz,
                "flash_wait_states": self.flash_wait_states, "caches": list(self.caches)}

    def summary(self) -> str:
        """One line for people: ``core 216 MHz (not measured), 7 flash wait states,
        caches l1_icache, l1_dcache``."""
        core = (f"core {self.core_clock_hz / 1e6:g} MHz" if self.core_clock_hz
                else "core clock unknown")
        measured = (f"measured {self.measured_clock_hz / 1e6:.6g} MHz"
                    if self.measured_clock_hz else "not measured")
        ws = ("no flash wait states to set" if self.flash_wait_states is None
              else f"{self.flash_wait_states} flash wait states")
        caches = f"caches {', '.join(self.caches)}" if self.caches else "no caches on"
        return f"{core} ({measured}), {ws}, {caches}"


@dataclass(frozen=True)
class DeviceInfo:
    protocol_version: int
    max_frame: int
    max_runs: int
    num_tensors: int
    num_kernels: int
    timer_unit: TimerUnit
    max_dims: int
    timer_overhead: int
    board_tag: str
    build_id: str
    model_name: str
    target_hash: str
    capabilities: Capability = Capability(0)
    code_origin: int = 0     # the RAM loader's region (Capability.RAM_LOADER only)
    code_size: int = 0
    clock_hz: int = 0        # the core clock the firmware runs at; 0: not reported
    device: DeviceReport | None = None  # Capability.DEVICE only: firmware older has none


@dataclass(frozen=True)
class TensorInfo:
    index: int
    name: str
    dtype: np.dtype
    role: Role
    writable: bool
    shape: tuple[int, ...]
    size_bytes: int


@dataclass(frozen=True)
class RunResult:
    """Per-run timings in ``unit`` (instructions under QEMU -icount)."""

    timings: tuple[int, ...]
    unit: TimerUnit


class _Reader:
    def __init__(self, data: bytes, what: str):
        self.data, self.pos, self.what = data, 0, what

    def take(self, fmt: str):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise ProtocolError(f"{self.what} reply is truncated")
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return values if len(values) > 1 else values[0]

    def string(self) -> str:
        n = self.take("<B")
        raw = self.data[self.pos : self.pos + n]
        if len(raw) != n:
            raise ProtocolError(f"{self.what} reply is truncated")
        self.pos += n
        return raw.decode("utf-8", "replace")


def parse_device_report(r: _Reader, clock_hz: int) -> DeviceReport:
    """The device report block: a length byte, then at least
    DEVICE_REPORT_BYTES bytes (more from a newer firmware are skipped).
    Every value is checked: nothing from the wire is trusted."""
    size = r.take("<B")
    if size < DEVICE_REPORT_BYTES:
        raise ProtocolError(f"INFO device report is {size} bytes; at least "
                            f"{DEVICE_REPORT_BYTES} expected")
    end = r.pos + size
    if end > len(r.data):
        raise ProtocolError("INFO reply is truncated")
    measured, wait_states, caches = r.take("<IBH")
    r.pos = end
    if wait_states != NO_WAIT_STATES and wait_states > MAX_WAIT_STATES:
        raise ProtocolError(f"INFO device report: {wait_states} flash wait states is not a "
                            f"setting (0..{MAX_WAIT_STATES}, or {NO_WAIT_STATES:#x} for none)")
    unknown = caches & ~sum(Cache)
    if unknown:
        raise ProtocolError(f"INFO device report: unknown cache bits {unknown:#06x}")
    return DeviceReport(clock_hz or None, measured or None,
                        None if wait_states == NO_WAIT_STATES else wait_states,
                        tuple(c.name.lower() for c in Cache if caches & c))


class Client:
    """Typed access to one device; tensors are addressed by name."""

    def __init__(self, session: Session):
        self.session = session
        self._info: DeviceInfo | None = None
        self._tensors: dict[str, TensorInfo] | None = None
        self._code: bytes | None = None  # what the loader region holds, as far as we know
        self._kernels: list[str] | None = None

    def close(self) -> None:
        self.session.transport.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def reconnect(self) -> None:
        """Open a new session (after :class:`DeviceResetError`)."""
        self.session.handshake()
        self._info = self._tensors = self._kernels = None
        self._code = None

    def info(self) -> DeviceInfo:
        if self._info is None:
            r = _Reader(self.session.call(Command.INFO), "INFO")
            head = r.take("<HHHHHBBI")
            strings = [r.string() for _ in range(4)]
            caps, origin, size, clock, device = Capability(0), 0, 0, 0, None
            if r.pos < len(r.data):  # firmware older than the capabilities word ends here
                caps = Capability(r.take("<I"))
                if caps & Capability.RAM_LOADER:
                    origin, size = r.take("<II")
                if caps & Capability.CLOCK:
                    clock = r.take("<I")
                if caps & Capability.DEVICE:
                    device = parse_device_report(r, clock)
            self._info = DeviceInfo(*head[:5], TimerUnit(head[5]), *head[6:], *strings,
                                    caps, origin, size, clock, device)
        return self._info

    def tensors(self) -> dict[str, TensorInfo]:
        if self._tensors is None:
            found = {}
            for index in range(self.info().num_tensors):
                payload = self.session.call(Command.TENSOR_INFO, struct.pack("<H", index))
                r = _Reader(payload, "TENSOR_INFO")
                dtype, role, flags, ndim, size = r.take("<BBBBI")
                shape = tuple(r.take("<I") for _ in range(ndim))
                name = r.string()
                try:
                    np_dtype = np.dtype(NUMPY_DTYPES[Dtype(dtype)])
                    role = Role(role)
                except (ValueError, KeyError):
                    raise ProtocolError(
                        f"tensor {name!r}: unknown dtype {dtype} or role {role}"
                    ) from None
                writable = bool(flags & TENSOR_WRITABLE)
                found[name] = TensorInfo(index, name, np_dtype, role, writable, shape, size)
            self._tensors = found
        return self._tensors

    def kernels(self) -> list[str]:
        if self._kernels is None:
            names = []
            for index in range(self.info().num_kernels):
                payload = self.session.call(Command.KERNEL_INFO, struct.pack("<H", index))
                names.append(_Reader(payload, "KERNEL_INFO").string())
            self._kernels = names
        return list(self._kernels)

    def tensor(self, name: str) -> TensorInfo:
        tensors = self.tensors()
        if name not in tensors:
            raise RpcError(
                f"the model has no tensor {name!r}{did_you_mean(name, tensors)}; "
                f"{one_of(tensors)}"
            )
        return tensors[name]

    def write_tensor(self, name: str, array) -> None:
        """Write a whole tensor; dtype and shape must match the declaration."""
        t = self.tensor(name)
        data = np.asarray(array)
        if data.dtype != t.dtype or data.shape != t.shape:
            raise RpcError(
                f"tensor {name!r} is {t.dtype.name}{list(t.shape)}, "
                f"got {data.dtype.name}{list(data.shape)}"
            )
        if not t.writable:
            raise RpcError(f"tensor {name!r} ({t.role.name.lower()}) is not writable")
        raw = np.ascontiguousarray(data).astype(t.dtype.newbyteorder("<")).tobytes()
        chunk = self.info().max_frame - 12 - 6
        for offset in range(0, len(raw), chunk):
            payload = struct.pack("<HI", t.index, offset) + raw[offset : offset + chunk]
            self.session.call(Command.WRITE, payload)

    def read_tensor(self, name: str) -> np.ndarray:
        t = self.tensor(name)
        chunk = self.info().max_frame - 12
        raw = bytearray()
        while len(raw) < t.size_bytes:
            n = min(chunk, t.size_bytes - len(raw))
            part = self.session.call(Command.READ, struct.pack("<HIH", t.index, len(raw), n))
            if len(part) != n:
                raise ProtocolError(f"READ of {n} bytes returned {len(part)}")
            raw += part
        return np.frombuffer(bytes(raw), dtype=t.dtype.newbyteorder("<")).reshape(t.shape).copy()

    def run(
        self, n: int = 1, kernel: str | None = None, *, timeout: float | None = None
    ) -> RunResult:
        """Run the model (or a named kernel) ``n`` times; one timing per run.

        ``timeout`` bounds each attempt of each batch of up to ``max_runs``
        runs; give one that covers the slowest expected batch.
        """
        index = WHOLE_MODEL
        if kernel is not None:
            names = self.kernels()
            if kernel not in names:
                raise RpcError(f"the model has no kernel {kernel!r}{did_you_mean(kernel, names)}")
            index = names.index(kernel)
        return self._run(index, kernel or "the model", n, timeout)

    def run_loaded(self, n: int = 1, *, timeout: float | None = None) -> RunResult:
        """Run the code committed by :meth:`load_code` ``n`` times, as :meth:`run`."""
        return self._run(LOADED_KERNEL, "the loaded code", n, timeout)

    def _run(self, index: int, label: str, n: int, timeout: float | None) -> RunResult:
        if n < 1:
            raise RpcError(f"run count must be at least 1, got {n}")
        timings: list[int] = []
        unit = None
        while len(timings) < n:
            batch = min(n - len(timings), self.info().max_runs)
            try:
                request = struct.pack("<HH", index, batch)
                payload = self.session.call(Command.RUN, request, timeout=timeout)
            except RemoteError as err:
                if err.status is Status.RUN_FAILED and len(err.detail) >= 6:
                    code, at = struct.unpack_from("<iH", err.detail)
                    raise RemoteError(
                        f"{label} returned {code} in run {len(timings) + at}",
                        err.status,
                        err.detail,
                    ) from None
                raise
            r = _Reader(payload, "RUN")
            unit_code, _, count = r.take("<BBH")
            if count != batch:
                raise ProtocolError(f"RUN of {batch} returned {count} timings")
            timings.extend(r.take("<Q") for _ in range(count))
            unit = TimerUnit(unit_code)
        return RunResult(tuple(timings), unit)

    def load_code(self, image: bytes, entry: int) -> int:
        """Put ``image`` at the start of the device's RAM code region and commit
        it with its entry point (an offset into ``image``; bit 0 set for Thumb
        code); :meth:`run_loaded` then calls it.  Returns the bytes sent.

        Only the parts that differ from what this client last loaded are
        sent (code linked at one address shares most bytes between
        candidates, weights especially); the commit checks the whole image
        with CRC-32, and on a mismatch (the region changed behind our back)
        everything is sent again once.  Raises :class:`RpcError` when the
        device does not advertise the RAM loader or the image does not fit.
        """
        info = self.info()
        if not info.capabilities & Capability.RAM_LOADER:
            raise RpcError(f"the device ({info.board_tag}, build {info.build_id}) does not "
                           "offer the RAM loader: it is only in tuning images built with "
                           "AOT_RPC_LOADER_BYTES")
        image = bytes(image)
        if not 0 < len(image) <= info.code_size:
            raise RpcError(f"code image of {len(image)} bytes does not fit the device's "
                           f"{info.code_size}-byte RAM code region")
        sent = self._send_code(image, self._code)
        commit = struct.pack("<III", len(image), zlib.crc32(image), entry)
        try:
            self.session.call(Command.COMMIT_CODE, commit)
        except RemoteError as err:
            if err.status is not Status.BAD_CHECKSUM or self._code is None:
                self._code = None
                raise
            self._code = None
            sent += self._send_code(image, None)
            self.session.call(Command.COMMIT_CODE, commit)
        return sent

    def _send_code(self, image: bytes, known: bytes | None) -> int:
        chunk = self.info().max_frame - 12 - 4
        sent = 0
        self._code = None  # unknown until every write has been acknowledged
        for start, end in _changed(image, known or b""):
            for offset in range(start, end, chunk):
                part = image[offset : min(end, offset + chunk)]
                self.session.call(Command.LOAD_CODE, struct.pack("<I", offset) + part)
                sent += len(part)
        self._code = image + (known or b"")[len(image):]
        return sent

    def echo(self, data: bytes) -> bytes:
        reply = self.session.call(Command.ECHO, data)
        if reply != data:
            raise ProtocolError("ECHO returned different bytes")
        return reply


def _changed(new: bytes, old: bytes, gap: int = 32) -> list[tuple[int, int]]:
    """Byte ranges ``[start, end)`` where ``new`` differs from ``old`` (or runs
    past it); ranges closer than ``gap`` bytes are merged, since every write
    costs a frame header anyway."""
    ranges: list[list[int]] = []
    common = min(len(new), len(old))
    i = 0
    while i < len(new):
        if i < common and new[i] == old[i]:
            i += 1
            continue
        j = i + 1
        while j < len(new) and not (j < common and new[j] == old[j]):
            j += 1
        if ranges and i - ranges[-1][1] < gap:
            ranges[-1][1] = j
        else:
            ranges.append([i, j])
        i = j
    return [(a, b) for a, b in ranges]


def connect(transport: Transport | str, *, timeout: float = 1.0, retries: int = 3) -> Client:
    """Open a client on a transport or a pyserial URL and shake hands."""
    if isinstance(transport, str):
        transport = SerialTransport(transport)
    session = Session(transport, timeout=timeout, retries=retries)
    try:
        session.handshake()
    except BaseException:
        transport.close()
        raise
    return Client(session)
