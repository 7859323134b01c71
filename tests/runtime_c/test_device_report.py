"""The board reports itself: the device report (INFO) against the board record.

The record says what the port configures (``clock_hz``, ``[clocks]``,
``memory.flash.wait_states``, ``memory.caches``; under QEMU ``[qemu] device``);
``aot.firmware.device.device_warnings`` names every fact where the device's
report differs, with both values.  The report's wire format is tested in
tests/rpc/test_rpc_device.py, each port's values in test_port_registers.py,
and every QEMU board's report against its record in test_runtime_boards.py.
"""

from __future__ import annotations

import pytest

from aot.firmware.device import device_warnings
from aot.rpc import DeviceReport
from aot.target import list_boards, load_board

HARDWARE = [b.tag for b in list_boards() if b.platform == "hardware"]


def test_a_report_as_the_record_says_gives_no_warning():
    board = load_board("st/nucleo-f746zg")
    report = DeviceReport(216_000_000, None, 7, ("l1_dcache", "l1_icache"))
    assert device_warnings(board, report) == []
    # Firmware older than the device report: nothing to compare.
    assert device_warnings(board, None) == []


def test_each_mismatch_is_a_warning_naming_both_values():
    board = load_board("st/nucleo-f746zg")
    # An uncached F746 left on HSI (the findings of issue 37, as a user would see them).
    report = DeviceReport(16_000_000, 15_900_000, 0, ())
    warnings = device_warnings(board, report)
    assert len(warnings) == 4
    assert "runs its core at 16 MHz; the record st/nucleo-f746zg" in warnings[0]
    assert warnings[0].endswith("says 216 MHz")
    assert "measured its core clock at 15.9 MHz" in warnings[1]
    assert "reads back 0 flash wait states" in warnings[2] and warnings[2].endswith("says 7")
    assert "caches [] on" in warnings[3] and "['l1_icache', 'l1_dcache']" in warnings[3]
    assert "nucleo-f746zg.toml" in warnings[0]  # where to look


def test_a_measured_clock_within_two_percent_passes_and_an_unknown_one_warns():
    board = load_board("espressif/esp32c3-devkitm")
    assert device_warnings(board, DeviceReport(160_000_000, 157_000_000, None, ("xip",))) == []
    (slow,) = device_warnings(board, DeviceReport(160_000_000, 80_100_000, None, ("xip",)))
    assert "measured its core clock at 80.1 MHz" in slow and "160 MHz" in slow
    (unknown,) = device_warnings(load_board("raspberrypi/pico"),
                                 DeviceReport(None, None, None, ("xip",)))
    assert "an unknown clock (its clock set-up gave up)" in unknown


def test_under_qemu_the_record_says_what_the_emulator_shows():
    board = load_board("qemu/netduinoplus2")
    assert device_warnings(board, DeviceReport(16_000_000, None, 0, ())) == []
    # The silicon's 168 MHz is what the record's clock_hz still says.
    assert board.clock_hz == 168_000_000 and board.memory.flash.wait_states == 5


@pytest.mark.parametrize("tag", HARDWARE)
def test_every_real_board_record_describes_the_clocks_its_port_sets_up(tag):
    board = load_board(tag)
    assert board.clocks is not None and board.clocks.derivation
    assert board.clock_hz and board.memory.caches, "the device report checks both"
    assert f"{board.clock_hz / 1e6:g} MHz" in board.clocks.derivation


def test_the_report_in_one_line_as_aot_flash_prints_it():
    assert DeviceReport(216_000_000, None, 7, ("l1_icache", "l1_dcache")).summary() == (
        "core 216 MHz (not measured), 7 flash wait states, caches l1_icache, l1_dcache")
    assert DeviceReport(None, 63_937_561, None, ()).summary() == (
        "core clock unknown (measured 63.9376 MHz), no flash wait states to set, no caches on")
