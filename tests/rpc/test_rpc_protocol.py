"""The Python protocol constants equal the C headers' (the two cannot drift)."""

import re

import pytest

from aot.rpc import protocol as p
from aot.resources import runtime_dir

INCLUDE = runtime_dir() / "include" / "aot"


def c_constants() -> dict[str, int]:
    text = "".join(f.read_text() for f in INCLUDE.glob("*.h"))
    found = {}
    for name, value in re.findall(r"\b(AOT_[A-Z0-9_]+)\s*=\s*(0x[0-9A-Fa-f]+|\d+)", text):
        found[name] = int(value, 0)
    for name, value in re.findall(r"#define\s+(AOT_[A-Z0-9_]+)\s+(0x[0-9A-Fa-f]+|\d+)u?\b", text):
        found[name] = int(value, 0)
    return found


C = c_constants()


@pytest.mark.parametrize(
    "enum, prefix",
    [(p.Command, "AOT_CMD_"), (p.Status, "AOT_ERR_"), (p.Dtype, "AOT_DTYPE_"),
     (p.Role, "AOT_ROLE_"), (p.TimerUnit, "AOT_TIMER_"), (p.Cache, "AOT_CACHE_")],
)
def test_enums_match_the_c_headers(enum, prefix):
    c_side = {k[len(prefix):]: v for k, v in C.items() if k.startswith(prefix)
              and k != "AOT_CACHE_ALL"}  # the mask of every bit, checked below
    py_side = {m.name: m.value for m in enum if m.name != "OK"}
    assert py_side == c_side


def test_scalars_match_the_c_headers():
    assert C["AOT_OK"] == p.Status.OK == 0
    assert C["AOT_RPC_PROTOCOL_VERSION"] == p.PROTOCOL_VERSION
    assert C["AOT_RPC_REPLY"] == p.REPLY
    assert C["AOT_RPC_WHOLE_MODEL"] == p.WHOLE_MODEL
    assert C["AOT_RPC_LOADED_KERNEL"] == p.LOADED_KERNEL
    assert C["AOT_RPC_CAP_RAM_LOADER"] == p.Capability.RAM_LOADER
    assert C["AOT_RPC_CAP_CLOCK"] == p.Capability.CLOCK
    assert C["AOT_RPC_CAP_DEVICE"] == p.Capability.DEVICE
    assert C["AOT_RPC_DEVICE_REPORT_BYTES"] == p.DEVICE_REPORT_BYTES
    assert C["AOT_NO_WAIT_STATES"] == p.NO_WAIT_STATES
    assert C["AOT_CACHE_ALL"] == sum(p.Cache)
    assert C["AOT_TENSOR_WRITABLE"] == p.TENSOR_WRITABLE
    assert C["AOT_FRAME_HEADER"] == p.HEADER_SIZE
    assert C["AOT_FRAME_CRC"] == p.CRC_SIZE
