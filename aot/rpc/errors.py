"""Errors of the RPC host side; all are :class:`aot.errors.AotError`."""

from __future__ import annotations

from aot.errors import AotError
from aot.rpc.protocol import Status


class RpcError(AotError):
    """Talking to the device failed; the message says what to try."""


class TransportError(RpcError):
    """The byte stream itself failed (port missing, process exited, socket closed)."""


class RpcTimeoutError(RpcError):
    """No valid reply arrived within the call's time budget, retries included."""


class DeviceResetError(RpcError):
    """The device no longer knows our session: it was reset or re-flashed.

    Tensor contents written earlier are lost; call ``Session.handshake()`` (or
    ``Client.reconnect()``) and write the inputs again.
    """


class ProtocolError(RpcError):
    """The device answered something this host does not understand."""


class RemoteError(RpcError):
    """The device rejected a request with a status code."""

    def __init__(self, message: str, status: Status, detail: bytes = b""):
        super().__init__(message)
        self.status = status
        self.detail = detail
