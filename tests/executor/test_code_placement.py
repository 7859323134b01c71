"""The code half of the default placement: the hottest kernels' code runs from RAM
where flash waits and the record lets code run from RAM (memory.code_in_ram_bytes)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from aot.compile import compile_model
from aot.executor.code_placement import code_section, place_code
from aot.target import load_board
from support.models import MODELS_DIR

HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"
PICO = "raspberrypi/pico"


def _kernel(name, macs, func=True):
    return SimpleNamespace(name=name, macs=macs, func=object() if func else None)


def test_the_hottest_code_per_byte_goes_first_and_the_rest_says_what_is_missing():
    kernels = [_kernel("cold", 10), _kernel("hot", 1000), _kernel("big", 4000),
               _kernel("libs", 10**6, func=False)]
    sizes = {"cold": 100, "hot": 100, "big": 400, "libs": 50}
    code = place_code(kernels, sizes, region="ram", room=600, limit=520)
    assert [(m.kernel, m.region) for m in code.moves] == [
        ("hot", "ram"), ("big", "ram"), ("cold", "")]  # 10, 10 and 0.1 MACs a byte
    assert code.bytes == 500 and code.room == 520
    moved, left = code.lines()
    assert moved == ("placement: the code of 2 kernels (hot, big), 500 bytes, runs from ram "
                     "(copied from flash at boot)")
    assert left == ("placement: the code of 1 kernel (cold), 100 bytes, stays in flash: ram "
                    "has 20 bytes left for code (at most 520, memory.code_in_ram_bytes), "
                    "80 bytes short")
    assert code.to_json()["left_in_flash"] == [
        {"kernel": "cold", "bytes": 100, "region": "flash", "macs": 10}]


def test_the_record_field_is_read_where_the_port_places_the_code():
    for tag in (PICO, "espressif/esp32c3-devkitm"):
        assert load_board(tag).memory.code_in_ram_bytes == 64 * 1024
    for tag in ("qemu/mps2-an386", "qemu/netduinoplus2", "st/nucleo-f746zg"):
        assert load_board(tag).memory.code_in_ram_bytes == 0


def test_code_is_not_placed_without_its_measured_size():
    c = compile_model(HELLO, PICO, measure_code=False)
    assert c.placement is not None and c.placement.code is None
    assert not any(k.code_section for k in c.kernels)
    assert c.metadata()["placement"]["code"] is None


@pytest.mark.slow  # compiles the kernels with the board's cross compiler
def test_the_picos_hot_kernels_are_printed_into_their_ram_sections():
    c = compile_model(HELLO, PICO, name="m")
    code = c.placement.code
    moved = {k.name for k in c.kernels if k.code_section}
    assert moved and moved == {m.kernel for m in code.moved} and not code.left
    for i, k in enumerate(c.kernels):
        text = c.files[f"codegen/m_kernels_{i}.c"]
        attribute = f'AOT_RAM_CODE("{code_section(k.name)}")'
        assert (attribute in text) == (k.name in moved), k.name
    assert c.sizes.ram_code == code.bytes > 0
    assert {k["name"] for k in c.metadata()["kernels"] if k.get("code_section")} == moved
    assert c.metadata()["sizes"]["ram_code"] == code.bytes
    meta = c.metadata()["placement"]["code"]
    assert meta["region"] == "ram" and meta["limit_bytes"] == 64 * 1024
    assert [m["kernel"] for m in meta["moved"]] == [m.kernel for m in code.moved]
    assert any(line.startswith("placement: the code of ") for line in c.placement.lines())


@pytest.mark.slow
def test_code_that_does_not_fit_stays_in_flash_and_the_report_says_by_how_much():
    board = load_board(PICO)
    small = dataclasses.replace(board, memory=dataclasses.replace(board.memory,
                                                                  code_in_ram_bytes=8))
    c = compile_model(HELLO, small, name="m")
    code = c.placement.code
    assert not code.moved and code.left and not any(k.code_section for k in c.kernels)
    (line,) = [x for x in c.placement.lines() if "stays in flash" in x and "code" in x]
    need = sum(m.bytes for m in code.left)
    assert line.endswith(f"ram has 8 bytes left for code (at most 8, "
                         f"memory.code_in_ram_bytes), {need - 8} bytes short")
