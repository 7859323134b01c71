"""The C RPC server, through the host port: commands, checks, sessions, duplicates."""

import struct
import time

import numpy as np
import pytest
from support.firmware import fw

from aot.rpc import (
    DeviceResetError,
    PipeTransport,
    ProtocolError,
    RemoteError,
    RpcError,
    connect,
)
from aot.rpc.framing import FrameDecoder, Header, encode_frame
from aot.rpc.protocol import Command, Role, Status, TimerUnit


def test_info_reports_build_model_and_capacities(device):
    info = device.info()
    assert (info.protocol_version, info.max_frame, info.max_runs) == (1, 512, 32)
    assert (info.board_tag, info.build_id) == ("test/host", "fixture-1")
    assert (info.model_name, info.target_hash) == ("fixture_dense", "fixture-target-0")
    assert (info.num_tensors, info.num_kernels) == (5, 3)
    assert info.timer_unit is TimerUnit.NANOSECONDS


def test_tensors_and_kernels_are_declared_as_in_the_descriptor(device):
    t = device.tensors()
    assert list(t) == ["input", "output", "acc", "weight", "bias"]
    assert (t["input"].shape, t["input"].dtype, t["input"].role, t["input"].writable) == (
        (1, 64), np.dtype("int8"), Role.INPUT, True)
    assert (t["acc"].shape, t["acc"].dtype, t["acc"].size_bytes) == ((16,), np.dtype("int32"), 64)
    assert not t["weight"].writable and t["weight"].role is Role.CONSTANT
    assert device.kernels() == ["dense", "requant", "fail"]


@pytest.mark.parametrize("seed", range(4))
def test_model_output_equals_the_reference(device, seed):
    x = np.random.default_rng(seed).integers(-128, 128, (1, 64), dtype=np.int8)
    device.write_tensor("input", x)
    result = device.run(3)
    assert len(result.timings) == 3
    acc, out = fw.reference(x)
    np.testing.assert_array_equal(device.read_tensor("output"), out)
    np.testing.assert_array_equal(device.read_tensor("acc"), acc)


def test_named_kernels_run_alone(device):
    x = np.full((1, 64), 3, dtype=np.int8)
    device.write_tensor("input", x)
    device.run(1, "dense")
    acc, out = fw.reference(x)
    np.testing.assert_array_equal(device.read_tensor("acc"), acc)
    assert not np.array_equal(device.read_tensor("output"), out)  # requant not run yet
    device.run(1, "requant")
    np.testing.assert_array_equal(device.read_tensor("output"), out)


def test_more_runs_than_one_frame_holds_are_batched(device):
    assert len(device.run(70).timings) == 70


def test_constants_read_back_exactly(device):
    np.testing.assert_array_equal(device.read_tensor("weight"), fw.WEIGHT.astype(np.int8))
    np.testing.assert_array_equal(device.read_tensor("bias"), fw.BIAS.astype(np.int32))


def test_failing_kernel_is_reported_with_its_code(device):
    with pytest.raises(RemoteError, match="fail returned 7 in run 0") as err:
        device.run(1, "fail")
    assert err.value.status is Status.RUN_FAILED


def test_client_checks_names_dtypes_and_shapes(device):
    with pytest.raises(RpcError, match="did you mean 'input'"):
        device.write_tensor("inptu", np.zeros((1, 64), np.int8))
    with pytest.raises(RpcError, match=r"int8\[1, 64\], got int16\[1, 64\]"):
        device.write_tensor("input", np.zeros((1, 64), np.int16))
    with pytest.raises(RpcError, match="not writable"):
        device.write_tensor("output", np.zeros((1, 16), np.int8))
    with pytest.raises(RpcError, match="no kernel 'dens'"):
        device.run(1, "dens")


# Requests the client would never send: the device must reject each one.
BAD_REQUESTS = [
    (Command.WRITE, struct.pack("<HI", 3, 0) + b"\x01", Status.READ_ONLY),  # weights
    (Command.WRITE, struct.pack("<HI", 2, 0) + b"\x01", Status.READ_ONLY),  # workspace
    (Command.WRITE, struct.pack("<HI", 0, 60) + b"12345", Status.OUT_OF_RANGE),
    (Command.WRITE, struct.pack("<HI", 0, 0xFFFFFFFF) + b"1", Status.OUT_OF_RANGE),
    (Command.WRITE, struct.pack("<HI", 5, 0) + b"1", Status.BAD_TENSOR),
    (Command.WRITE, struct.pack("<HH", 0, 0), Status.BAD_LENGTH),
    (Command.READ, struct.pack("<HIH", 1, 0, 17), Status.OUT_OF_RANGE),
    (Command.READ, struct.pack("<HIH", 1, 0xFFFFFFF0, 0x20), Status.OUT_OF_RANGE),
    (Command.READ, struct.pack("<HIH", 3, 0, 501), Status.BAD_LENGTH),
    (Command.READ, struct.pack("<HIH", 0xFFFF, 0, 1), Status.BAD_TENSOR),
    (Command.READ, struct.pack("<HI", 0, 0), Status.BAD_LENGTH),
    (Command.RUN, struct.pack("<HH", 0xFFFF, 0), Status.BAD_COUNT),
    (Command.RUN, struct.pack("<HH", 0xFFFF, 33), Status.BAD_COUNT),
    (Command.RUN, struct.pack("<HH", 3, 1), Status.BAD_KERNEL),
    (Command.RUN, struct.pack("<HHH", 0xFFFF, 1, 0), Status.BAD_LENGTH),
    (Command.TENSOR_INFO, struct.pack("<H", 5), Status.BAD_TENSOR),
    (Command.KERNEL_INFO, struct.pack("<H", 3), Status.BAD_KERNEL),
    (Command.INFO, b"\x00", Status.BAD_LENGTH),
    (0x55, b"", Status.UNKNOWN_COMMAND),
]


@pytest.mark.parametrize("command, payload, status", BAD_REQUESTS)
def test_out_of_bounds_requests_are_rejected(device, command, payload, status):
    before = {n: device.read_tensor(n) for n in device.tensors()}
    with pytest.raises(RemoteError) as err:
        device.session.call(command, payload)
    assert err.value.status is status
    for name, value in before.items():  # nothing changed anywhere
        np.testing.assert_array_equal(device.read_tensor(name), value)


def test_read_of_exactly_the_last_bytes_is_allowed(device):
    tail = device.session.call(Command.READ, struct.pack("<HIH", 3, 1020, 4))
    assert tail == fw.WEIGHT.astype(np.int8).tobytes()[1020:]
    assert device.session.call(Command.READ, struct.pack("<HIH", 3, 1024, 0)) == b""


def test_echo_carries_every_byte_value(device):
    data = bytes(range(256)) + b"\x7e\x7d" * 100
    assert device.echo(data[:500]) == data[:500]


class Raw:
    """Hand-made frames on the session's transport, for duplicate/stale tests."""

    def __init__(self, client):
        self.s = client.session
        self.decoder = FrameDecoder()

    def take_ids(self, n):
        """Request ids the session would use next (so the device accepts them)."""
        first = self.s._next_id
        self.s._next_id = (first + n) & 0xFFFF
        return [(first + i) & 0xFFFF for i in range(n)]

    def frame(self, command, request_id, payload):
        return encode_frame(Header(command, 0, self.s.session_id, request_id).pack() + payload)

    def replies(self, wait=0.3):
        out, end = [], time.monotonic() + wait
        while time.monotonic() < end:
            out += self.decoder.feed(self.s.transport.read(0.05))
        return out


def test_a_repeated_request_is_answered_from_cache_and_an_old_one_dropped(device):
    raw = Raw(device)
    x_id, y_id = raw.take_ids(2)
    x_frame = raw.frame(Command.WRITE, x_id, struct.pack("<HI", 0, 0) + b"\x11")
    y_frame = raw.frame(Command.WRITE, y_id, struct.pack("<HI", 0, 0) + b"\x22")
    raw.s.transport.write(x_frame + y_frame)
    first = raw.replies()
    assert [Header.unpack(r).request_id for r in first] == [x_id, y_id]
    raw.s.transport.write(y_frame + x_frame)  # a retry of 101, a stale copy of 100
    again = raw.replies()
    assert again == first[1:]  # same bytes for y, nothing for x
    assert device.read_tensor("input")[0, 0] == 0x22  # the stale write was not replayed


def test_an_id_reused_for_another_request_is_refused(device):
    raw = Raw(device)
    (rid,) = raw.take_ids(1)
    raw.s.transport.write(raw.frame(Command.ECHO, rid, b"a") + raw.frame(Command.ECHO, rid, b"b"))
    statuses = [Header.unpack(r).status for r in raw.replies()]
    assert statuses == [Status.OK, Status.DUPLICATE_ID]


def test_wrong_session_reads_as_a_device_reset(device):
    device.session.session_id ^= 0x1234
    with pytest.raises(DeviceResetError, match="reset"):
        device.info()


def test_a_restarted_device_is_noticed_and_reconnect_recovers(device):
    device.write_tensor("input", np.ones((1, 64), np.int8))
    device.session.transport.reset_device()
    with pytest.raises(DeviceResetError):
        device.read_tensor("input")
    device.reconnect()
    np.testing.assert_array_equal(device.read_tensor("input"), np.zeros((1, 64), np.int8))


def test_each_handshake_opens_a_different_session(host_firmware):
    with connect(PipeTransport([str(host_firmware)])) as client:
        first = client.session.session_id
        client.reconnect()
        assert client.session.session_id not in (0, first)


def test_a_late_copy_of_the_opening_hello_keeps_the_session(device):
    """Only a new nonce opens a new session; a stale HELLO must not look like a reset."""
    raw = Raw(device)

    def hello(nonce):
        (rid,) = raw.take_ids(1)
        raw.s.transport.write(encode_frame(Header(Command.HELLO, 0, nonce, rid).pack()))
        (reply,) = raw.replies()
        return struct.unpack_from("<I", reply, 8)[0]

    first = hello(0x1234567)
    assert hello(0x1234567) == first
    assert hello(0x7654321) not in (0, first)


def test_info_reads_the_clock_after_the_loader_fields():
    """INFO's optional fields follow the capabilities word in bit order."""
    from aot.rpc.client import Client
    from aot.rpc.protocol import Capability

    def reply(caps: int, *extra: int) -> bytes:
        head = struct.pack("<HHHHHBBI", 1, 512, 32, 0, 0, 1, 6, 0)
        strings = b"".join(bytes([len(s)]) + s for s in (b"b", b"id", b"m", b"h"))
        return head + strings + struct.pack(f"<I{len(extra)}I", caps, *extra)

    class FakeSession:
        def __init__(self, payload):
            self.payload = payload

        def call(self, command):
            assert command is Command.INFO
            return self.payload

    both = Client(FakeSession(reply(3, 0x20000000, 4096, 16_000_000))).info()
    assert (both.code_origin, both.code_size, both.clock_hz) == (0x20000000, 4096, 16_000_000)
    assert both.capabilities == Capability.RAM_LOADER | Capability.CLOCK
    assert Client(FakeSession(reply(2, 168_000_000))).info().clock_hz == 168_000_000
    assert Client(FakeSession(reply(0))).info().clock_hz == 0  # the host port: unknown


def _info_payload(caps: int, *fields: bytes) -> bytes:
    head = struct.pack("<HHHHHBBI", 1, 512, 32, 0, 0, 1, 6, 0)
    strings = b"".join(bytes([len(s)]) + s for s in (b"b", b"id", b"m", b"h"))
    return head + strings + struct.pack("<I", caps) + b"".join(fields)


class _FakeSession:
    def __init__(self, payload):
        self.payload = payload

    def call(self, command):
        assert command is Command.INFO
        return self.payload


def test_info_reads_the_device_report_after_the_clock():
    from aot.rpc.client import Client

    report = bytes([7]) + struct.pack("<IBH", 215_990_000, 7, 0x03)
    info = Client(_FakeSession(_info_payload(6, struct.pack("<I", 216_000_000), report))).info()
    assert info.device.to_json() == {"core_clock_hz": 216_000_000,
                                     "measured_clock_hz": 215_990_000,
                                     "flash_wait_states": 7,
                                     "caches": ["l1_icache", "l1_dcache"]}
    # 0 reads as "not measured" / unknown clock; 0xFF as "no wait states to set";
    # a longer block from a newer firmware is skipped to its announced end.
    report = bytes([9]) + struct.pack("<IBH", 0, 0xFF, 0x40) + b"\x01\x02"
    info = Client(_FakeSession(_info_payload(4, report))).info()
    assert info.device.to_json() == {"core_clock_hz": None, "measured_clock_hz": None,
                                     "flash_wait_states": None, "caches": ["xip"]}
    # Firmware without the capability: no report (older firmware stays readable).
    assert Client(_FakeSession(_info_payload(2, struct.pack("<I", 1)))).info().device is None


@pytest.mark.parametrize("block, message", [
    (bytes([6]) + struct.pack("<IBH", 0, 0, 0)[:6], "is 6 bytes; at least 7"),
    (bytes([7]) + struct.pack("<IBH", 0, 0, 0)[:5], "truncated"),
    (bytes([7]) + struct.pack("<IBH", 0, 16, 0), "16 flash wait states is not a setting"),
    (bytes([7]) + struct.pack("<IBH", 0, 0, 0x80), "unknown cache bits 0x0080"),
])
def test_a_malformed_device_report_is_refused_by_name(block, message):
    from aot.rpc.client import Client

    with pytest.raises(ProtocolError, match=message):
        Client(_FakeSession(_info_payload(4, block))).info()


def test_the_host_port_reports_itself_as_unmeasured(device):
    report = device.info().device
    assert report is not None
    assert report.to_json() == {"core_clock_hz": None, "measured_clock_hz": None,
                                "flash_wait_states": None, "caches": []}
