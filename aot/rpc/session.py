"""Session: handshake, request ids, retries and timeouts over any transport.

Time budget: one attempt waits ``timeout`` seconds for its reply; a call makes
at most ``retries + 1`` attempts, so it returns or raises within about
``(retries + 1) * timeout`` seconds.  Retries resend the same request id; the
device answers a repeated request from its cache, so a retried WRITE or RUN
is executed once.  Replies are accepted only when command, session and
request id all match the outstanding request, so stale frames (late replies,
replies from an earlier session) are dropped, never mistaken for an answer.
"""

from __future__ import annotations

import secrets
import struct
import time
from dataclasses import dataclass

from aot.rpc.errors import DeviceResetError, ProtocolError, RemoteError, RpcTimeoutError
from aot.rpc.framing import FrameDecoder, Header, encode_frame
from aot.rpc.protocol import CRC_SIZE, HEADER_SIZE, PROTOCOL_VERSION, REPLY, Command, Status
from aot.rpc.transport import Transport


@dataclass
class SessionStats:
    """Counters for diagnostics and benchmarks."""

    calls: int = 0
    retries: int = 0
    stale_frames: int = 0


class Session:
    """One conversation with one device; not thread-safe."""

    def __init__(self, transport: Transport, *, timeout: float = 1.0, retries: int = 3):
        if timeout <= 0 or retries < 0:
            raise ValueError("timeout must be > 0 and retries >= 0")
        self.transport = transport
        self.timeout = timeout
        self.retries = retries
        self.session_id = 0
        self.max_frame = 0
        self.stats = SessionStats()
        self._decoder = FrameDecoder()
        self._next_id = secrets.randbits(16)
        self._lost = False  # the device dropped our session: only handshake() helps

    def handshake(self) -> None:
        """Open a new session; the device forgets the previous one."""
        nonce = secrets.randbits(32) | 1
        payload = self._exchange(Command.HELLO, nonce, b"", self.timeout)
        if len(payload) != 8:
            raise ProtocolError(f"HELLO reply has {len(payload)} bytes, expected 8")
        session, version, max_frame = struct.unpack("<IHH", payload)
        if version != PROTOCOL_VERSION:
            raise ProtocolError(
                f"the device speaks RPC protocol {version}, this host {PROTOCOL_VERSION}; "
                "rebuild the firmware with this version of aot"
            )
        if session == 0 or max_frame < 64:
            raise ProtocolError(f"bad HELLO reply: session {session}, max frame {max_frame}")
        self.session_id, self.max_frame = session, max_frame
        self._lost = False
        # Replies can be no longer than the device's frames: drop longer ones.
        self._decoder.max_body = max_frame - CRC_SIZE

    def call(
        self, command: Command, payload: bytes = b"", *, timeout: float | None = None
    ) -> bytes:
        """Send one request and return the reply payload (status OK).

        Raises :class:`RemoteError` for an error status (``detail`` holds the
        reply payload), :class:`DeviceResetError` when the device has lost the
        session, :class:`RpcTimeoutError` when every attempt timed out.
        """
        if self._lost:
            # Never reconnect silently: the inputs written before are gone.
            raise DeviceResetError(
                f"{_name(command)}: the device was reset earlier in this session; "
                "call reconnect() and write the inputs again"
            )
        if self.session_id == 0:
            self.handshake()
        if self.max_frame and HEADER_SIZE + len(payload) + 4 > self.max_frame:
            raise ProtocolError(
                f"request of {len(payload)} bytes exceeds the device's frame size {self.max_frame}"
            )
        return self._exchange(command, self.session_id, payload, timeout or self.timeout)

    def _exchange(self, command: Command, session: int, payload: bytes, timeout: float) -> bytes:
        request_id = self._next_id
        self._next_id = (self._next_id + 1) & 0xFFFF
        frame = encode_frame(Header(command, 0, session, request_id).pack() + payload)
        self.stats.calls += 1
        for attempt in range(self.retries + 1):
            if attempt:
                self.stats.retries += 1
            self.transport.write(frame)
            reply = self._await(command, session, request_id, time.monotonic() + timeout)
            if reply is not None:
                return self._check(command, reply)
        raise RpcTimeoutError(
            f"no valid reply to {_name(command)} after {self.retries + 1} attempts of "
            f"{timeout:g} s; the device may be hung, busy with a long run (raise the "
            "timeout), or the link may be broken (check cable, port and baud rate)"
        )

    def _await(self, command: int, session: int, request_id: int, deadline: float):
        while (left := deadline - time.monotonic()) > 0:
            for body in self._decoder.feed(self.transport.read(left)):
                if len(body) < HEADER_SIZE:
                    self.stats.stale_frames += 1
                    continue
                head = Header.unpack(body)
                if (head.command, head.session, head.request_id) != (
                    command | REPLY,
                    session,
                    request_id,
                ):
                    self.stats.stale_frames += 1
                    continue
                return head, body[HEADER_SIZE:]
        return None

    def _check(self, command: Command, reply: tuple[Header, bytes]) -> bytes:
        head, payload = reply
        name = _name(command)
        try:
            status = Status(head.status)
        except ValueError:
            raise ProtocolError(f"{name}: unknown status {head.status}") from None
        if status is Status.OK:
            return payload
        if status is Status.SESSION:
            self.session_id, self._lost = 0, True
            raise DeviceResetError(
                f"{name}: the device does not know this session: it was reset "
                "or re-flashed; reconnect and write the inputs again"
            )
        raise RemoteError(f"{name} rejected by the device: {status.name}", status, payload)


def _name(command: int) -> str:
    try:
        return Command(command).name
    except ValueError:
        return f"command 0x{command:02x}"
