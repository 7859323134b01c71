"""Each board's toolchain flags and memory map link a tiny program where the record says."""

import shutil
import subprocess

import pytest

from aot.target import list_boards

CROSS = [b for b in list_boards() if b.memory is not None]

SCRIPT = """{memory}
SECTIONS
{{
  .text : {{ KEEP(*(.text*)) *(.rodata*) }} > FLASH
  .bss (NOLOAD) : {{ *(.bss*) *(COMMON) }} > RAM
}}
"""


@pytest.mark.parametrize("board", CROSS, ids=lambda b: b.tag)
@pytest.mark.one_fast
def test_flags_compile_and_memory_map_links(board, tmp_path):
    gcc = board.toolchain.tool("gcc")
    if shutil.which(gcc) is None:
        pytest.skip(f"{gcc} is not installed (scripts/setup.sh installs it)")
    (tmp_path / "main.c").write_text(
        "static volatile int counter[4];\nvoid _start(void) { for (;;) counter[0]++; }\n"
    )
    (tmp_path / "link.ld").write_text(SCRIPT.format(memory=board.memory.linker_memory()))
    cmd = [
        gcc,
        *board.toolchain.cpu_flags,
        "-O2",
        "-nostdlib",
        "-nostartfiles",
        "-T",
        "link.ld",
        "main.c",
        "-o",
        "fw.elf",
    ]
    subprocess.run(cmd, cwd=tmp_path, check=True, capture_output=True, text=True)
    nm = subprocess.run(
        [board.toolchain.tool("nm"), "fw.elf"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    symbols = {line.split()[-1]: int(line.split()[0], 16) for line in nm.splitlines()}
    assert board.memory.flash.origin <= symbols["_start"] < board.memory.flash.end
    assert board.memory.ram.origin <= symbols["counter"] < board.memory.ram.end
