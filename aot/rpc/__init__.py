"""Host side of the serial RPC: framing, transports, session, client.

The protocol is specified in docs/runtime.md; the device side is
runtime_c/src/rpc_server.c.
"""

from aot.rpc.client import Client, DeviceInfo, DeviceReport, RunResult, TensorInfo, connect
from aot.rpc.errors import (
    DeviceResetError,
    ProtocolError,
    RemoteError,
    RpcError,
    RpcTimeoutError,
    TransportError,
)
from aot.rpc.session import Session
from aot.rpc.transport import FaultPlan, FaultyTransport, PipeTransport, SerialTransport, Transport

__all__ = [
    "Client",
    "DeviceInfo",
    "DeviceReport",
    "DeviceResetError",
    "FaultPlan",
    "FaultyTransport",
    "PipeTransport",
    "ProtocolError",
    "RemoteError",
    "RpcError",
    "RpcTimeoutError",
    "RunResult",
    "Session",
    "SerialTransport",
    "TensorInfo",
    "Transport",
    "TransportError",
    "connect",
]
