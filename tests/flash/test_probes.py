"""Several real boards on one machine: each flashed through its own debug probe."""

import os
from pathlib import Path

import pytest

from aot.target import load_board
from flash import FlashImage, RunnerError, runner_for_board
from flash.serial_port import probe_serial

ELF = Path("build") / "fw.elf"  # a path the runners only print into argv


def test_openocd_and_pyocd_pick_the_probe_by_serial_number():
    board = load_board("st/nucleo-l4r5zi")
    openocd = runner_for_board("openocd", board, ELF, "/dev/ttyACM1", probe="0670FF48")
    assert openocd.argv() == ["openocd", "-f", "board/st_nucleo_l4.cfg",
                              "-c", "adapter serial 0670FF48",
                              "-c", f"program {{{ELF}}} verify reset exit"]
    pyocd = runner_for_board("pyocd", board, ELF, "/dev/ttyACM1", probe="0670FF48")
    assert pyocd.argv() == ["pyocd", "flash", "--target", "stm32l4r5zitx", "--uid", "0670FF48",
                            str(ELF)]
    assert runner_for_board("openocd", board, ELF, "/dev/ttyACM1").argv() == [
        "openocd", "-f", "board/st_nucleo_l4.cfg",
        "-c", f"program {{{ELF}}} verify reset exit"]


def test_runners_that_cannot_pick_a_probe_refuse_one():
    with pytest.raises(RunnerError, match="the serial port, which picks the board"):
        runner_for_board("esptool", load_board("espressif/esp32c3-devkitm"),
                         (FlashImage("esp", Path("fw.bin"), 0x10000),), "/dev/ttyUSB0",
                         probe="X1")
    with pytest.raises(RunnerError, match="cannot choose one of several attached boards"):
        runner_for_board("uf2", load_board("raspberrypi/pico"),
                         (FlashImage("uf2", Path("fw.uf2")),), "/dev/ttyACM0", probe="X1")


def _usb_tty(sys_root: Path, tty: str, serial: str) -> None:
    """sysfs as Linux lays out a USB CDC-ACM port: class/tty/NAME/device links
    to the USB interface, whose parent (the USB device) has idVendor and serial."""
    device = sys_root / "devices" / "pci0000:00" / "usb1" / "1-3"
    interface = device / "1-3:1.2"
    (interface / "tty" / tty).mkdir(parents=True)
    (device / "idVendor").write_text("0483\n")
    (device / "serial").write_text(f"{serial}\n")
    (sys_root / "class" / "tty" / tty).mkdir(parents=True)
    os.symlink(interface, sys_root / "class" / "tty" / tty / "device")


def test_the_probe_serial_number_comes_from_the_ports_usb_device(tmp_path):
    _usb_tty(tmp_path / "sys", "ttyACM0", "0670FF485550755187121723")
    assert probe_serial("/dev/ttyACM0", tmp_path / "sys") == "0670FF485550755187121723"
    assert probe_serial("/dev/ttyACM9", tmp_path / "sys") is None          # no such tty
    assert probe_serial("socket://127.0.0.1:4000", tmp_path / "sys") is None  # not a device
    (tmp_path / "sys" / "class" / "tty" / "ttyS0").mkdir()
    os.symlink(tmp_path / "sys" / "devices" / "platform",
               tmp_path / "sys" / "class" / "tty" / "ttyS0" / "device")
    (tmp_path / "sys" / "devices" / "platform").mkdir()
    assert probe_serial("/dev/ttyS0", tmp_path / "sys") is None            # not on USB
