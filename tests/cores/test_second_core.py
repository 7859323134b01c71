"""The runtime starts the SSE-200's second core and hands it work (qemu/mps2-an521).

tests/cores/fixture/second_core.c is built from the board record alone (port,
flags, memory map, board defines) and run under the record's QEMU: core 0
starts core 1 (CPUWAIT/INITSVTOR1), queues more tasks than the queue holds,
waits at the barrier, and checks every result and where each task ran.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from aot.export import board_defines
from aot.firmware.project import runtime_port
from aot.resources import runtime_dir
from aot.target import load_board

AN521 = "qemu/mps2-an521"
FIXTURE = Path(__file__).parent / "fixture"
RUNTIME = runtime_dir()
AOT_ERR_BAD_ARGUMENT = 12


def test_only_a_multi_core_record_gives_the_core_defines():
    flags = board_defines(load_board(AN521))
    assert "-DAOT_BOARD_CORES=2" in flags
    assert "-DAOT_CORES_START_SSE200_CPUWAIT=1" in flags
    assert "-DAOT_CORES_SYSCTL_BASE=0x50021000u" in flags
    assert "-DAOT_CORES_IDENTITY_BASE=0x4001f000u" in flags
    assert "-DAOT_CORES_STACK_BYTES=4096" in flags
    for tag in ("qemu/mps2-an505", "qemu/mps2-an386"):
        assert not [f for f in board_defines(load_board(tag)) if "CORES" in f], tag


def _run_fixture(tmp_path) -> dict[str, int]:
    board = load_board(AN521)
    gcc = board.toolchain.tool("gcc")
    if shutil.which(gcc) is None or shutil.which(board.qemu.system) is None:
        pytest.skip(f"missing {gcc} or {board.qemu.system} (scripts/setup.sh installs them)")
    mem, tc = board.memory, board.toolchain
    subprocess.run(
        ["make", "-s", "-f", str(FIXTURE / "Makefile"), f"AOT_RUNTIME_DIR={RUNTIME}",
         f"AOT_PORT={runtime_port(board)}", f"CC={gcc}", f"OUT={tmp_path}",
         f"AOT_BUILD_DIR={tmp_path}",
         "CFLAGS=" + " ".join([*tc.cpu_flags, *tc.cflags, *board_defines(board)]),
         "LDFLAGS=" + " ".join(tc.ldflags),
         f"AOT_FLASH_ORIGIN={mem.flash.origin:#x}", f"AOT_FLASH_LENGTH={mem.flash.length:#x}",
         f"AOT_RAM_ORIGIN={mem.ram.origin:#x}", f"AOT_RAM_LENGTH={mem.ram.length:#x}",
         f"{tmp_path}/second_core.elf"],
        check=True, env={**os.environ, "MAKEFLAGS": ""})  # fmt: skip
    proc = subprocess.run(
        [board.qemu.system, "-M", board.qemu.machine, *board.qemu.args, "-kernel",
         str(tmp_path / "second_core.elf"), "-serial", "stdio", "-monitor", "none"],
        capture_output=True, text=True, timeout=60)  # fmt: skip
    facts = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", proc.stdout)}
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return facts


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
