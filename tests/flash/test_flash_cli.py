"""``aot flash``: the file each runner gets and the port it uses, from the CLI's own choices.

Every board record x every registered runner goes through ``aot flash
PROJECT --dry-run --runner R`` on an unbuilt project of that board: the
command printed is compared argument by argument with the one the tool
needs (so a UF2 handed to openocd, or an ELF to esptool, fails here), and a
runner the record does not list is refused.  Without ``--port`` the serial
runners find the board's port by the USB id its record gives, as esptool
does; pyserial's port list and the flashing tool are patched, so no
hardware is needed.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from unittest import mock

import pytest
from serial.tools.list_ports_common import ListPortInfo
from support.models import MODELS_DIR

import flash
from aot.cli import main
from aot.compile import compile_model
from aot.errors import AotWarning
from aot.firmware import create_project
from aot.firmware.images import built_images
from aot.firmware.project import load_project
from aot.target import list_boards, load_board
from flash import FlashImage, RunnerError, runner_for_board

HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"
BOARDS = [b.tag for b in list_boards()]


def _qemu(system: str, machine: str) -> list[str]:
    return [system, "-M", machine, "-nographic", "-monitor", "none",
            "-icount", "shift=0,align=off,sleep=off",
            "-semihosting-config", "enable=on,target=native",
            "-serial", "tcp:127.0.0.1:4321,server=on,wait=on,nodelay=on",
            "-kernel", "P/build/firmware.elf"]


# What `aot flash --dry-run` runs for each runner a board record lists; P is the project.
# Adding a board or a runner to a record must add its line here.
EXPECTED_ARGV = {
    ("st/nucleo-f746zg", "openocd"): [
        "openocd", "-f", "board/st_nucleo_f7.cfg",
        "-c", "program {P/build/firmware.elf} verify reset exit"],
    ("st/nucleo-f746zg", "pyocd"): [
        "pyocd", "flash", "--target", "stm32f746zgtx", "P/build/firmware.elf"],
    ("st/nucleo-l4r5zi", "openocd"): [
        "openocd", "-f", "board/st_nucleo_l4.cfg",
        "-c", "program {P/build/firmware.elf} verify reset exit"],
    ("st/nucleo-l4r5zi", "pyocd"): [
        "pyocd", "flash", "--target", "stm32l4r5zitx", "P/build/firmware.elf"],
    ("nordic/nrf52840dk", "openocd"): [
        "openocd", "-f", "interface/jlink.cfg", "-c", "transport select swd",
        "-f", "target/nrf52.cfg", "-c", "program {P/build/firmware.elf} verify reset exit"],
    ("nordic/nrf52840dk", "pyocd"): [
        "pyocd", "flash", "--target", "nrf52840", "P/build/firmware.elf"],
    # The Pico's build makes firmware.uf2 for its boot ROM, and the SWD tools get the ELF.
    ("raspberrypi/pico", "uf2"): ["cp", "P/build/firmware.uf2", "/media/ann/RPI-RP2/"],
    ("raspberrypi/pico", "openocd"): [
        "openocd", "-f", "interface/cmsis-dap.cfg", "-f", "target/rp2040.cfg",
        "-c", "adapter speed 5000", "-c", "program {P/build/firmware.elf} verify reset exit"],
    ("raspberrypi/pico", "pyocd"): [
        "pyocd", "flash", "--target", "rp2040", "P/build/firmware.elf"],
    # No --port: esptool's own form, in which it searches the serial ports itself.
    ("espressif/esp32c3-devkitm", "esptool"): [
        "esptool", "--chip", "esp32c3", "--baud", "460800",
        "write-flash", "0x10000", "P/build/firmware.bin"],
    ("host/native", "host"): ["P/build/firmware.elf"],
    ("qemu/microbit", "qemu"): _qemu("qemu-system-arm", "microbit"),
    ("qemu/mps2-an385", "qemu"): _qemu("qemu-system-arm", "mps2-an385"),
    ("qemu/mps2-an386", "qemu"): _qemu("qemu-system-arm", "mps2-an386"),
    ("qemu/mps2-an500", "qemu"): _qemu("qemu-system-arm", "mps2-an500"),
    ("qemu/mps2-an505", "qemu"): _qemu("qemu-system-arm", "mps2-an505"),
    ("qemu/mps2-an521", "qemu"): _qemu("qemu-system-arm", "mps2-an521"),
    ("qemu/mps3-an547", "qemu"): _qemu("qemu-system-arm", "mps3-an547"),
    ("qemu/netduinoplus2", "qemu"): _qemu("qemu-system-arm", "netduinoplus2"),
    ("qemu/sifive-e", "qemu"): _qemu("qemu-system-riscv32", "sifive_e"),
}


@pytest.fixture(scope="module")
def projects(tmp_path_factory):
    """An unbuilt project of hello per board record (about 50 ms each)."""
    root = tmp_path_factory.mktemp("flash-cli")
    made = {}
    for tag in BOARDS:
        compiled = compile_model(HELLO, tag, name="hello", measure_code=False)
        folder = root / tag.replace("/", "_")
        made[tag] = create_project(compiled.write(folder / "art"), tag, folder / "proj").path
    return made


@pytest.fixture
def no_hardware(monkeypatch):
    """Every tool on PATH but picotool, the Pico's drive mounted, a fixed QEMU
    port, and a pyserial that fails the test if anything lists serial ports."""
    monkeypatch.setattr("flash.hardware.shutil.which",
                        lambda name: None if name == "picotool" else f"/usr/bin/{name}")
    monkeypatch.setattr("flash.hardware.mount_table",
                        lambda: "/dev/sdb1 /media/ann/RPI-RP2 vfat rw 0 0\n")
    monkeypatch.setattr("flash.qemu.free_port", lambda host="127.0.0.1": 4321)
    monkeypatch.setattr("flash.serial_port.list_ports.comports",
                        mock.Mock(side_effect=AssertionError("a dry run looked for hardware")))


def test_the_table_covers_every_runner_every_record_lists():
    assert set(EXPECTED_ARGV) == {(b.tag, r.name) for b in list_boards() for r in b.runners}


@pytest.mark.parametrize("runner", sorted(flash.RUNNERS))
@pytest.mark.parametrize("tag", BOARDS)
def test_dry_run_gives_each_runner_the_file_it_takes(projects, no_hardware, capsys, tag,
                                                     runner):
    p = projects[tag]
    status = main(["flash", str(p), "--dry-run", "--runner", runner])
    out, err = capsys.readouterr()
    if (tag, runner) in EXPECTED_ARGV:
        assert status == 0, err
        want = [arg.replace("P/", f"{p}/") for arg in EXPECTED_ARGV[tag, runner]]
        assert shlex.split(out) == want
    else:
        assert status == 2 and out == ""
        listed = ", ".join(r.name for r in load_board(tag).runners)
        assert f"{tag} has no runner '{runner}' in its record; its runners: {listed}" in err


def test_the_build_offers_the_elf_and_the_records_image(projects):
    pico = load_project(projects["raspberrypi/pico"])
    assert [(i.format, i.path.name, i.offset) for i in built_images(pico)] == [
        ("elf", "firmware.elf", None), ("uf2", "firmware.uf2", None)]
    esp = load_project(projects["espressif/esp32c3-devkitm"])
    assert [(i.format, i.path.name, i.offset) for i in built_images(esp)] == [
        ("elf", "firmware.elf", None), ("esp", "firmware.bin", 0x10000)]
    nucleo = load_project(projects["st/nucleo-f746zg"])
    assert [i.format for i in built_images(nucleo)] == ["elf"]


def test_a_runner_without_an_image_it_takes_says_what_the_build_made(tmp_path):
    elf_only = (FlashImage("elf", tmp_path / "firmware.elf"),)
    with pytest.raises(RunnerError, match=r"runner esptool writes esp images, and the build of "
                                          r"espressif/esp32c3-devkitm makes firmware.elf \(elf\)"):
        runner_for_board("esptool", load_board("espressif/esp32c3-devkitm"), elf_only)


def test_west_is_refused_with_what_to_do_instead(projects, capsys):
    assert main(["flash", str(projects["nordic/nrf52840dk"]), "--dry-run",
                 "--runner", "west"]) == 2
    err = capsys.readouterr().err
    assert "its runners: openocd, pyocd. Runner west flashes a Zephyr build directory" in err


# --- finding the serial port without --port ---------------------------------------------

def _port(device: str, usb: str | None, serial: str = "", description: str = "") -> ListPortInfo:
    info = ListPortInfo(device, skip_link_detection=True)
    if usb:
        info.vid, info.pid = (int(half, 16) for half in usb.split(":"))
    info.serial_number = serial or None
    info.description = description or "n/a"
    return info


@pytest.fixture
def pty():
    """A terminal device that exists and opens, standing in for a board's port."""
    primary, secondary = os.openpty()
    yield os.ttyname(secondary)
    os.close(primary)
    os.close(secondary)


def _flash(tag: str, runner: str, ports: list[ListPortInfo], tmp_path):
    """Start ``runner`` for ``tag`` without a port; return (flash argv, URL, notes)."""
    board = load_board(tag)
    images = (FlashImage("elf", tmp_path / "firmware.elf"),
              FlashImage("esp", tmp_path / "firmware.bin", 0x10000))
    done = subprocess.CompletedProcess([], 0, "", "")
    with mock.patch("flash.serial_port.list_ports.comports", return_value=ports), \
            mock.patch("subprocess.run", return_value=done) as run, \
            pytest.warns(AotWarning) as notes:
        with runner_for_board(runner, board, images) as url:
            pass
    return run.call_args.args[0], url, [str(n.message) for n in notes]


def test_esptool_takes_the_one_port_with_the_boards_usb_id_and_says_so(pty, tmp_path):
    ports = [_port("/dev/ttyS0", None), _port(pty, "10c4:ea60", "0001", "CP2102N USB to UART"),
             _port("/dev/ttyACM0", "0483:374b", "066E")]
    argv, url, notes = _flash("espressif/esp32c3-devkitm", "esptool", ports, tmp_path)
    assert url == pty
    assert argv[1:] == ["--chip", "esp32c3", "--port", pty, "--baud", "460800",
                        "write-flash", "0x10000", str(tmp_path / "firmware.bin")]
    assert notes == [f"runner esptool: using serial port {pty} (USB 10c4:ea60, CP2102N USB to "
                     "UART, serial 0001), the one with the board's USB id; --port picks another"]


def test_openocd_finds_the_rpc_port_by_any_id_the_record_gives(pty, tmp_path):
    ports = [_port(pty, "0483:3752", "0670FF")]  # an ST-LINK/V2-1 without its USB drive
    argv, url, notes = _flash("st/nucleo-f746zg", "openocd", ports, tmp_path)
    assert url == pty and argv[0] == "openocd"
    assert notes[0].startswith(f"runner openocd: using serial port {pty} (USB 0483:3752")


def test_several_candidate_ports_are_named_and_nothing_is_flashed(tmp_path):
    ports = [_port("/dev/ttyUSB1", "10c4:ea60", "B"), _port("/dev/ttyUSB0", "10c4:ea60", "A")]
    runner = runner_for_board("esptool", load_board("espressif/esp32c3-devkitm"),
                              (FlashImage("esp", tmp_path / "fw.bin", 0x10000),))
    with mock.patch("flash.serial_port.list_ports.comports", return_value=ports), \
            mock.patch("subprocess.run") as run:
        with pytest.raises(RunnerError, match=r"2 serial ports have the board's USB id "
                                              r"\(10c4:ea60\): /dev/ttyUSB0 \(USB 10c4:ea60, "
                                              r"serial A\); /dev/ttyUSB1 \(USB 10c4:ea60, "
                                              r"serial B\); pick one with --port"):
            runner.start()
    run.assert_not_called()


def test_no_port_with_the_boards_id_names_what_is_present(tmp_path):
    runner = runner_for_board("pyocd", load_board("nordic/nrf52840dk"),
                              tmp_path / "firmware.elf")
    ports = [_port("/dev/ttyACM0", "0483:374b", "X")]
    with mock.patch("flash.serial_port.list_ports.comports", return_value=ports), \
            mock.patch("subprocess.run") as run:
        with pytest.raises(RunnerError, match=r"no serial port has the board's USB id "
                                              r"\(1366:1015 or 1366:1051\).*serial ports "
                                              r"present: /dev/ttyACM0 \(USB 0483:374b, serial "
                                              r"X\); or pass the port with --port"):
            runner.start()
    run.assert_not_called()


def test_a_given_port_is_used_without_looking(pty, tmp_path):
    runner = runner_for_board("esptool", load_board("espressif/esp32c3-devkitm"),
                              (FlashImage("esp", tmp_path / "fw.bin", 0x10000),), pty)
    done = subprocess.CompletedProcess([], 0, "", "")
    with mock.patch("flash.serial_port.list_ports.comports") as comports, \
            mock.patch("subprocess.run", return_value=done):
        with runner as url:
            assert url == pty
    comports.assert_not_called()


def test_runner_none_finds_the_port_as_the_runners_do(projects, monkeypatch, capsys):
    p = projects["st/nucleo-f746zg"]
    (p / "build").mkdir(exist_ok=True)
    (p / "build" / "firmware.elf").write_bytes(b"\x7fELF")  # stands in for a build
    monkeypatch.setattr("flash.serial_port.list_ports.comports",
                        lambda: [_port("/dev/ttyUSB0", "10c4:ea60")])
    assert main(["flash", str(p), "--runner", "none"]) == 2
    err = capsys.readouterr().err
    assert ("no serial port has the board's USB id (0483:374b or 0483:3752): is the board "
            "plugged in (with a data cable)? serial ports present: /dev/ttyUSB0 (USB "
            "10c4:ea60); or pass the port with --port") in err
