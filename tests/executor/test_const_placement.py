"""The default placement: hot constants copied from waiting flash to the RAM the plan leaves."""

from __future__ import annotations

import pytest

from aot.compile import compile_group, compile_model
from aot.executor.const_placement import RESERVE_BYTES, pays, saving_per_byte
from aot.target import load_board
from aot.target.tags import FlashReads
from support.models import MODELS_DIR

HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"
WAITING = "qemu/netduinoplus2"  # emulated, and its record prices the STM32F405's flash


@pytest.mark.parametrize("board, per_byte", [
    ("st/nucleo-l4r5zi", 5 / 32),      # 5 wait states, 32-byte ART data-cache lines
    ("st/nucleo-f746zg", 7 / 32),      # 7 wait states, 32-byte L1 D-cache lines
    ("nordic/nrf52840dk", 2 / 4),      # 2 cycles a data read, 4-byte flash words, no cache
    ("raspberrypi/pico", 56 / 8),      # a 56-cycle QSPI read of an 8-byte XIP line
    ("espressif/esp32c3-devkitm", 148 / 32),
    ("qemu/netduinoplus2", 5 / 16),
    ("qemu/mps2-an386", 0.0),          # zero-wait SSRAM: nothing pays
])
def test_the_board_record_prices_a_byte_read_from_flash(board, per_byte):
    record = load_board(board)
    assert saving_per_byte(record.memory.flash_reads()) == pytest.approx(per_byte)
    assert pays(record) == (per_byte > 0)


def test_flash_reads_summarise_the_records_memory_timing():
    pico = load_board("raspberrypi/pico").memory.flash_reads()
    assert pico == FlashReads(fetch_cycles=56, data_cycles=56, data_line_bytes=8,
                              data_cache_bytes=16384, sram_wait_states=0)
    l4 = load_board("st/nucleo-l4r5zi").memory.flash_reads()  # flash_dcache, not the prefetch
    assert (l4.data_cycles, l4.data_line_bytes, l4.data_cache_bytes) == (5, 32, 256)
    nrf = load_board("nordic/nrf52840dk").memory.flash_reads()  # its cache holds fetches only
    assert (nrf.fetch_cycles, nrf.data_cycles, nrf.data_line_bytes, nrf.data_cache_bytes) == \
        (3, 2, 4, 0)
    assert load_board("qemu/microbit").memory.flash_reads() is None


def test_boards_without_memory_timing_never_place():
    assert not pays(load_board("host/native"))
    assert not pays(load_board("qemu/microbit"))  # no memory.timing


def test_a_zero_wait_board_keeps_its_artifact_byte_identical():
    kept = compile_model(HELLO, "qemu/mps2-an386", measure_code=False)
    off = compile_model(HELLO, "qemu/mps2-an386", measure_code=False, placement=False)
    assert kept.placement is None and not kept.plan.region_constants
    assert kept.files == off.files and kept.metadata() == off.metadata()


def test_waiting_flash_copies_the_paying_constants_to_ram():
    c = compile_model(HELLO, WAITING, measure_code=False)
    moved = [k for k in c.kernels if k.constant_section]
    assert moved and c.placement.homes == {k.name: "ram" for k in moved}
    assert all(k.constant_section == ".data.aot_const.model" for k in moved)
    assert c.plan.region_constants["ram"] == sum(m.bytes for m in c.placement.moved)
    assert c.sizes.ram_constants == c.plan.region_constants["ram"]
    assert c.placement.cycles_saved > 0 and not c.placement.left
    assert c.placement.reserve == RESERVE_BYTES + 2  # one int8 input and one int8 output
    meta = c.metadata()["placement"]
    assert meta["board"] == WAITING and meta["region"] == "ram"
    assert {m["kernel"] for m in meta["moved"]} == {k.name for k in moved}
    (line,) = c.placement.lines()
    assert line.startswith(f"placement ({WAITING}'s flash waits): the constants of "
                           f"{len(moved)} kernels (")
    assert f"{meta['cycles_saved']:,} cycles per inference saved" in line


def test_placement_off_and_explicit_regions_keep_the_default_out():
    off = compile_model(HELLO, WAITING, measure_code=False, placement=False)
    assert off.placement is None and not any(k.constant_section for k in off.kernels)
    given = compile_model(HELLO, WAITING, measure_code=False, memory_regions="ram")
    assert given.placement is None and not given.plan.region_constants


def test_the_llvm_codegen_keeps_its_constants_in_its_objects():
    c = compile_model(HELLO, WAITING, codegen="llvm", measure_code=False)
    assert c.placement is None and not c.plan.region_constants


def test_what_does_not_fit_names_the_region_and_the_bytes_short():
    """A 100-byte budget: the plan takes its share, the constants that fit the rest
    move, the others stay in flash with the bytes they lacked."""
    c = compile_model(HELLO, WAITING, measure_code=False, memory_budget=100)
    assert c.sizes.ram <= 100 and c.placement.left
    free = c.placement.room - sum(m.bytes for m in c.placement.moved)
    need = sum(m.bytes for m in c.placement.left)
    assert c.placement.lines()[-1].endswith(
        f"stay in flash: ram has {free} bytes left after the plan and the "
        f"{c.placement.reserve}-byte reserve, {need - free} bytes short")


def test_a_model_group_places_nothing():
    group = compile_group([HELLO, HELLO], WAITING, names=["a", "b"], measure_code=False)
    assert all(m.placement is None and not m.plan.region_constants for m in group.models)


def test_placement_for_another_board_prices_with_its_memory():
    """aot profile's case: compiled for the emulated board of a real board's core,
    placed as for the real board."""
    c = compile_model(HELLO, "qemu/mps2-an386", measure_code=False,
                      placement=load_board("st/nucleo-l4r5zi"))
    assert c.placement.board == "st/nucleo-l4r5zi" and c.placement.moved
