"""Build and run the multi-core fixture programs of tests/cores/fixture on qemu/mps2-an521."""

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
FIXTURE = Path(__file__).parents[1] / "cores" / "fixture"
RUNTIME = runtime_dir()


def build_fixture(name: str, out: Path, tag: str = AN521) -> Path:
    """``fixture/NAME.c`` built from the record of ``tag`` alone (port, flags, memory
    map, board defines) into ``out``; skips when the cross compiler (or, for an
    emulated board, QEMU) is missing."""
    board = load_board(tag)
    gcc = board.toolchain.tool("gcc")
    qemu = board.qemu.system if board.qemu is not None else None
    if shutil.which(gcc) is None or (qemu is not None and shutil.which(qemu) is None):
        pytest.skip(f"missing {gcc} or {qemu} (scripts/setup.sh installs them)")
    mem, tc = board.memory, board.toolchain
    subprocess.run(
        ["make", "-s", "-f", str(FIXTURE / "Makefile"), f"AOT_RUNTIME_DIR={RUNTIME}",
         f"AOT_PORT={runtime_port(board)}", f"CC={gcc}", f"OUT={out}",
         f"AOT_BUILD_DIR={out}",
         "CFLAGS=" + " ".join([*tc.cpu_flags, *tc.cflags, *board_defines(board)]),
         "LDFLAGS=" + " ".join(tc.ldflags),
         f"AOT_FLASH_ORIGIN={mem.flash.origin:#x}", f"AOT_FLASH_LENGTH={mem.flash.length:#x}",
         f"AOT_RAM_ORIGIN={mem.ram.origin:#x}", f"AOT_RAM_LENGTH={mem.ram.length:#x}",
         f"{out}/{name}.elf"],
        check=True, env={**os.environ, "MAKEFLAGS": ""})  # fmt: skip
    return out / f"{name}.elf"


def run_fixture(elf: Path, extra_args: tuple[str, ...] = ()) -> dict[str, int]:
    """Run ``elf`` under the record's QEMU (it ends itself); its ``key=value`` facts."""
    board = load_board(AN521)
    proc = subprocess.run(
        [board.qemu.system, "-M", board.qemu.machine, *board.qemu.args, *extra_args,
         "-kernel", str(elf), "-serial", "stdio", "-monitor", "none"],
        capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", proc.stdout)}
