"""Kernels run from RAM: linked where the start-up copies them, and bit-exact (slow).

No RP2040 is emulated here, so the mechanism runs on qemu/netduinoplus2, whose flash
(0x08000000) and SRAM (0x20000000) are out of a Thumb BL's reach too, with a record given
``memory.code_in_ram_bytes`` in this test only (docs/memory.md "Code in RAM"); the Pico's
image is checked as built: the kernels in SRAM, loaded in flash, called through veneers.
"""

from __future__ import annotations

import dataclasses

import pytest
from support import linked
from support.models import MODELS_DIR

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
