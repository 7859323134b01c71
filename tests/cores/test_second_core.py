"""The runtime starts the SSE-200's second core and hands it work (qemu/mps2-an521).

tests/cores/fixture/second_core.c is built from the board record alone (port,
flags, memory map, board defines) and run under the record's QEMU: core 0
starts core 1 (CPUWAIT/INITSVTOR1), queues more tasks than the queue holds,
waits at the barrier, and checks every result and where each task ran.
"""

from __future__ import annotations

import pytest
from support.core_fixture import AN521, build_fixture, run_fixture

from aot.export import board_defines
from aot.target import load_board

AOT_ERR_BAD_ARGUMENT = 12


def test_only_a_multi_core_record_gives_the_core_defines():
    flags = board_defines(load_board(AN521))
    assert "-DAOT_BOARD_CORES=2" in flags
    assert "-DAOT_CORES_START_SSE200_CPUWAIT=1" in flags
    assert "-DAOT_CORES_SYSCTL_BASE=0x50021000u" in flags
    assert "-DAOT_CORES_IDENTITY_BASE=0x4001f000u" in flags
    assert "-DAOT_CORES_STACK_BYTES=8192" in flags
    for tag in ("qemu/mps2-an505", "qemu/mps2-an386"):
        assert not [f for f in board_defines(load_board(tag)) if "CORES" in f], tag


def _run_fixture(tmp_path) -> dict[str, int]:
    return run_fixture(build_fixture("second_core", tmp_path))


@pytest.mark.slow
@pytest.mark.qemu
def test_core_1_takes_the_queued_work_and_joins(tmp_path):
    facts = _run_fixture(tmp_path)
    assert facts["identity0"] == 0
    # Nothing goes to a core before it runs, to a core the board lacks, or without a task.
    assert facts["bad_before_start"] == AOT_ERR_BAD_ARGUMENT
    assert facts["bad_core"] == facts["bad_fn"] == AOT_ERR_BAD_ARGUMENT
    assert facts["cores"] == facts["cores_again"] == 2
    # Three queues' worth of tasks, every one run by core 1, every result right.
    assert facts["on_core1"] == facts["tasks"] == 24
    assert facts["wrong"] == 0
    # The QEMU fact docs/targets.md relies on: under -icount the two vCPUs take
    # turns on one virtual clock, so core 0's SysTick counts core 1's
    # instructions too and half the work on core 1 saves no guest time.
    one, two = facts["insns_one_core"], facts["insns_two_cores"]
    assert abs(two - one) < one // 20, (one, two)
