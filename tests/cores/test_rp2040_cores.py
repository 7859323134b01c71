"""The RP2040's second core (raspberrypi/pico, build-only: not verified on hardware).

The port's launch (runtime_c/ports/rp2040/cores.c) follows the boot ROM's
protocol of RP2040 datasheet 2.8.2: six words through the SIO FIFO, 0, 0, 1,
vector table, stack pointer, entry, each echoed by core 1, starting over on a
wrong echo.  It runs here on the host against a model of core 1's side; the
cross-built image is checked for what core 1 needs (its vector table, stack,
entry, the launch code reading and writing the FIFO).
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile
from support.core_fixture import FIXTURE, RUNTIME, build_fixture

from aot.export import board_defines
from aot.target import load_board

PICO = "raspberrypi/pico"
SIO = 0xD000_0000


@pytest.fixture(scope="module")
def launcher(tmp_path_factory) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    out = tmp_path_factory.mktemp("rp2040") / "launch"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O1",
                    "-DAOT_MMIO_RECORD", "-DAOT_CORES_WAIT=50", f"-I{RUNTIME / 'include'}",
                    *board_defines(load_board(PICO)),
                    str(RUNTIME / "ports" / "rp2040" / "cores.c"),
                    str(FIXTURE / "rp2040_launch_host.c"), "-o", str(out)], check=True)
    return out


def launch(exe: Path, *mode: str) -> tuple[int, int, list[int]]:
    text = subprocess.run([str(exe), *mode], capture_output=True, text=True,
                          check=True).stdout
    m = re.fullmatch(r"ret=(\d+) syncs=(\d+) words=([\d,]*)\n", text)
    assert m, text
    return int(m[1]), int(m[2]), [int(w) for w in m[3].split(",") if w]


def test_the_launch_sends_the_boot_roms_six_words(launcher):
    ret, syncs, words = launch(launcher, "ok")
    assert ret == 2
    assert words[:3] == [0, 0, 1] and len(words) == 6
    vectors, stack, entry = words[3:]
    assert vectors % 256 == 0 and stack % 8 == 0 and entry != 0
    assert syncs == 8   # an event before each 0, and after each of the six words


def test_a_wrong_echo_starts_over(launcher):
    ret, _, words = launch(launcher, "garble", "4")   # the vector table's echo is wrong
    assert ret == 2
    assert words[:4] == words[4:8] and words[4:7] == [0, 0, 1] and len(words) == 10


def test_stale_words_are_drained_first(launcher):
    ret, _, words = launch(launcher, "stale", "3")
    assert ret == 2 and len(words) == 6


def test_a_silent_core_1_leaves_core_0_alone(launcher):
    ret, _, words = launch(launcher, "dead")
    assert ret == 1 and words == [0]


def _symbols(elf) -> dict[str, tuple[int, int]]:
    table = elf.get_section_by_name(".symtab")
    return {s.name: (s["st_value"], s["st_size"]) for s in table.iter_symbols() if s.name}


def _read(elf, address: int, size: int) -> bytes:
    for seg in elf.iter_segments():
        if seg["p_type"] == "PT_LOAD" and seg["p_vaddr"] <= address < \
                seg["p_vaddr"] + seg["p_filesz"]:
            start = address - seg["p_vaddr"]
            return seg.data()[start:start + size]
    raise AssertionError(f"{address:#x} is in no loaded segment")


@pytest.mark.slow
def test_the_pico_image_carries_core_1s_launch(tmp_path):
    elf_path = build_fixture("second_core", tmp_path, PICO)
    with open(elf_path, "rb") as f:
        elf = ELFFile(f)
        sym = _symbols(elf)
        for name in ("aot_port_start_cores", "aot_core_worker", "aot_core_submit",
                     "aot_cores_start", "core1_vectors", "core1_stack", "core1_main",
                     "core1_fault", "aot_vectors"):
            assert name in sym, name
        # Core 1's vector table: 256-byte aligned, in flash, its stack pointer the top of
        # core 1's own stack, its reset vector core1_main, its HardFault core1_fault
        # (Thumb addresses), apart from core 0's table at 0x10000100 behind boot2.
        table, _ = sym["core1_vectors"]
        assert table % 256 == 0 and 0x1000_0000 <= table < 0x1020_0000
        sp, reset, _nmi, hard = struct.unpack("<4I", _read(elf, table, 16))
        stack, size = sym["core1_stack"]
        assert sp == stack + size == stack + load_board(PICO).cores.stack_bytes
        assert reset == sym["core1_main"][0] | 1 and hard == sym["core1_fault"][0] | 1
        assert sym["aot_vectors"][0] == 0x1000_0100
        # The launch code: SEV (0xbf40) and the SIO FIFO's registers in its literals.
        start, size = sym["aot_port_start_cores"]
        code = _read(elf, start & ~1, size + 64)   # + its literal pool
        assert b"\x40\xbf" in code[:size]
        words = {struct.unpack_from("<I", code, k)[0] for k in range(0, len(code) - 3, 2)}
        assert {SIO + 0x50, SIO + 0x54, SIO + 0x58} <= words
