"""The fixture model on every emulated board, over the RPC, with instruction counts."""

import numpy as np
import pytest
from conftest import fw

from aot.rpc import connect
from aot.rpc.protocol import TimerUnit
from flash.qemu import QemuConfig, QemuRunner


# Instructions per timer tick under -icount shift=0 (see runtime_c/ports).
# 0: exact (mps2: vernier on a 40-instruction SysTick; sifive_e: instret).
RESOLUTION = {"qemu/mps2-an385": 0, "qemu/mps2-an386": 0, "qemu/mps2-an500": 0,
              "qemu/mps3-an547": 32, "qemu/sifive_e": 0}


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.parametrize("tag", sorted(fw.BOARDS))
def test_fixture_model_runs_bit_exact_with_deterministic_counts(tag, tmp_path):
    board = fw.BOARDS[tag]
    if not fw.have(board.cc, board.qemu):
        pytest.skip(f"needs {board.cc} and {board.qemu}")
    elf = fw.build_board(tmp_path, tag, extra_cflags="-DAOT_FIXTURE_NOP_KERNELS")
    x = np.random.default_rng(1).integers(-128, 128, (1, 64), dtype=np.int8)
    with QemuRunner(QemuConfig(elf=elf, machine=board.machine, qemu=board.qemu)) as url:
        with connect(url, timeout=5) as client:
            assert client.info().board_tag == tag
            client.write_tensor("input", x)
            first = client.run(3)
            second = client.run(2)
            np.testing.assert_array_equal(client.read_tensor("output"), fw.reference(x)[1])
            dense = client.run(1, "dense").timings[0]
            requant = client.run(1, "requant").timings[0]
            nops = [client.run(2, f"nops_{n}").timings for n in (100, 137)]
    assert first.unit is TimerUnit.INSTRUCTIONS
    counts = first.timings + second.timings
    # -icount makes the count deterministic up to the timer's resolution; on
    # an547 (no vernier) where a run starts within a tick depends on when the
    # request's last byte arrived, so runs may read one tick apart.
    assert max(counts) - min(counts) <= RESOLUTION[tag]
    count = counts[0]
    # 1024 multiply-accumulates take several instructions each; the parts add up
    # to the whole (within one tick per part).
    assert 1024 < count < 64 * 1024
    assert abs(dense + requant - count) <= 2 * RESOLUTION[tag] + 16  # + the calls in run()
    # Two kernels 37 NOPs apart read exactly 37 apart where the timer is exact.
    assert abs(nops[1][0] - nops[0][0] - 37) <= RESOLUTION[tag]
    assert max(nops[0]) - min(nops[0]) <= RESOLUTION[tag]
