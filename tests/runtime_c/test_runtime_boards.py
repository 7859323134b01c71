"""The fixture model on every emulated board, over the RPC, with instruction counts."""

import numpy as np
import pytest
from support.firmware import fw

from aot.export import board_defines
from aot.firmware.device import device_warnings
from aot.rpc import connect
from aot.rpc.protocol import TimerUnit
from aot.target import load_board
from flash.qemu import QemuConfig, QemuRunner


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.parametrize("tag", sorted(fw.BOARDS) + fw.RECORD_BOARDS)
def test_fixture_model_runs_bit_exact_with_deterministic_counts(tag, tmp_path):
    if tag in fw.BOARDS:
        board = fw.BOARDS[tag]
        cc, qemu, machine = board.cc, board.qemu, board.machine
    else:
        record = load_board(tag)
        cc, qemu = record.toolchain.tool("gcc"), record.qemu.system
        machine = record.qemu.machine
    if not fw.have(cc, qemu):
        pytest.skip(f"needs {cc} and {qemu}")
    if tag in fw.BOARDS:
        # The record's facts (clock, console, timer) as a project passes them.
        facts = " ".join(board_defines(load_board(tag)))
        elf = fw.build_board(tmp_path, tag, extra_cflags=f"-DAOT_FIXTURE_NOP_KERNELS {facts}")
    else:
        elf = fw.build_from_record(tmp_path, tag, extra_cflags="-DAOT_FIXTURE_NOP_KERNELS")
    x = np.random.default_rng(1).integers(-128, 128, (1, 64), dtype=np.int8)
    with QemuRunner(QemuConfig(elf=elf, machine=machine, qemu=qemu)) as url:
        with connect(url, timeout=5) as client:
            info = client.info()
            assert info.board_tag == tag
            client.write_tensor("input", x)
            first = client.run(3)
            second = client.run(2)
            np.testing.assert_array_equal(client.read_tensor("output"), fw.reference(x)[1])
            dense = client.run(1, "dense").timings[0]
            requant = client.run(1, "requant").timings[0]
            nops = [client.run(2, f"nops_{n}").timings for n in (100, 137)]
    assert first.unit is TimerUnit.INSTRUCTIONS
    # The board reports itself, and what it says agrees with its record:
    # nothing measured under QEMU, no flash interface or cache emulated.
    record = load_board(tag)
    assert info.device is not None and info.device.measured_clock_hz is None
    assert info.device.core_clock_hz == record.expected_device().core_clock_hz
    assert device_warnings(record, info.device) == []
    # -icount makes counts exact (SysTick vernier on Arm, instret on RISC-V)
    # and the same for every run.
    (count,) = set(first.timings + second.timings)
    assert len(set(nops[0])) == len(set(nops[1])) == 1
    # Two kernels 37 NOPs apart read exactly 37 apart.
    assert nops[1][0] - nops[0][0] == 37
    # 1024 multiply-accumulates take several instructions each; the kernels add
    # up to the model, give or take the few instructions of calls and returns
    # (the compiler may inline them into run()).
    assert 1024 < count < 64 * 1024
    assert abs(count - (dense + requant)) <= 16
