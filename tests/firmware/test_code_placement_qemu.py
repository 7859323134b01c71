"""Kernels run from RAM: linked where the start-up copies them, and bit-exact (slow).

No RP2040 is emulated here, so the mechanism runs on qemu/netduinoplus2 (Cortex-M4), whose
flash (0x08000000) and SRAM (0x20000000) are out of a Thumb BL's reach too, with a record given
``memory.code_in_ram_bytes`` in this test only (docs/memory.md "Code in RAM"), and on
qemu/microbit (Cortex-M0, Armv6-M as the Pico's M0+: the veneers are the Thumb-only kind), priced
as the Pico; the Pico's
image is checked as built: the kernels in SRAM, loaded in flash, called through veneers; and
the ESP32-C3's: the kernels in IRAM, a segment of the app image, with .data after their bytes.
"""

from __future__ import annotations

import dataclasses
import struct

import pytest
from elftools.elf.elffile import ELFFile
from support import linked
from support.models import MODELS_DIR

import aot.executor.const_placement as const_placement
from aot.compile import compile_model
from aot.firmware.verify import random_inputs
from aot.target import load_board

KWS = MODELS_DIR / "mlperf_kws_dscnn.tflite"


def _check_linked(compiled, where) -> set[str]:
    """Every moved kernel between ``_sdata`` and ``_edata`` (copied from ``_sidata``
    in flash at start-up) and called from flash through a veneer; the others in
    flash.  Returns the moved kernels."""
    ram, flash = compiled.board.memory.ram, compiled.board.memory.flash
    moved = {m.kernel for m in compiled.placement.code.moved}
    assert moved
    assert flash.origin <= where["_sidata"] < flash.end
    for k in compiled.kernels:
        if k.name not in where:  # inlined into nothing else: every kernel is called
            raise AssertionError(f"{k.name} is not in the ELF")
        if k.name in moved:
            assert where["_sdata"] <= where[k.name] < where["_edata"] <= ram.end, k.name
            assert flash.origin <= where[f"__{k.name}_veneer"] < flash.end, k.name
        else:
            assert flash.origin <= where[k.name] < flash.end, k.name
    return moved


@pytest.mark.slow
def test_kernels_run_from_ram_bit_exact_under_qemu(object_cache, tmp_path):
    board = load_board("qemu/netduinoplus2")
    board = dataclasses.replace(board, memory=dataclasses.replace(board.memory,
                                                                  code_in_ram_bytes=0x1000))
    compiled = compile_model(KWS, board, name="m", cache_dir=object_cache)
    assert compiled.placement.code.left  # 4 KiB: some kernels in RAM, the others in flash
    project, build = linked.build(compiled, tmp_path, object_cache)
    _check_linked(compiled, linked.symbols(compiled, build.elf))
    linked.assert_exact(compiled, project, build, random_inputs(compiled.graph, 2, seed=7))


@pytest.mark.slow
def test_armv6m_veneers_run_bit_exact_under_qemu(object_cache, tmp_path, monkeypatch):
    # The micro:bit's 16 KiB of RAM hold hello world's code once the reserve is small.
    monkeypatch.setattr(const_placement, "RESERVE_BYTES", 2048)
    board = load_board("qemu/microbit")
    board = dataclasses.replace(board, memory=dataclasses.replace(board.memory,
                                                                  code_in_ram_bytes=0x800))
    compiled = compile_model(MODELS_DIR / "tflm_hello_world_int8.tflite", board, name="m",
                             placement=load_board("raspberrypi/pico"),
                             cache_dir=object_cache)
    project, build = linked.build(compiled, tmp_path, object_cache)
    _check_linked(compiled, linked.symbols(compiled, build.elf))
    linked.assert_exact(compiled, project, build, random_inputs(compiled.graph, 3, seed=1))


@pytest.mark.slow
def test_the_picos_kernels_link_into_sram_with_their_load_image_in_flash(object_cache,
                                                                         tmp_path):
    compiled = compile_model(KWS, "raspberrypi/pico", name="m", cache_dir=object_cache)
    _, build = linked.build(compiled, tmp_path, object_cache)
    where = linked.symbols(compiled, build.elf)
    moved = _check_linked(compiled, where)
    assert len(moved) == len([k for k in compiled.kernels if k.func is not None])
    # The kernels' calls into the C library and libgcc, which stay in flash.
    assert any(n.endswith("_veneer") and where[n] >= compiled.board.memory.ram.origin
               for n in where)


@pytest.mark.slow
def test_the_esp32c3s_kernels_link_into_iram_loaded_by_the_boot_loader(object_cache,
                                                                      tmp_path):
    compiled = compile_model(KWS, "espressif/esp32c3-devkitm", name="m",
                             cache_dir=object_cache)
    _, build = linked.build(compiled, tmp_path, object_cache)
    where = linked.symbols(compiled, build.elf)
    ram = compiled.board.memory.ram
    iram = ram.origin + 0x0070_0000  # SRAM1 on the instruction bus
    code = compiled.placement.code
    assert code.moved and not code.left
    with open(build.elf, "rb") as f:
        section = ELFFile(f).get_section_by_name(".iram_text")
        start, size = section["sh_addr"], section["sh_size"]
    assert start == iram and size >= code.bytes * 0.9  # the linker relaxes some calls
    for m in code.moved:
        assert iram <= where[m.kernel] < iram + size, m.kernel
    # The data bus's view of SRAM1 starts after the code's bytes: no overlap.
    assert where["_sdata"] - ram.origin >= size
    # The ESP app image (esptool's elf2image) holds an IRAM segment for the boot loader.
    image = build.elf.with_suffix(".bin").read_bytes()
    assert image[0] == 0xE9
    segments, offset = [], 24
    for _ in range(image[1]):
        address, size = struct.unpack_from("<II", image, offset)
        segments.append(address)
        offset += 8 + size
    assert iram in segments
