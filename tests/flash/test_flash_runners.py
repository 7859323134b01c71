"""Runners: the registry, exact command lines, and process lifecycles."""

import fcntl
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from support.firmware import fw

import flash
from aot.rpc import connect
from aot.target import list_boards, load_board
from aot.target.tags import Runner
from flash import RunnerError, get_runner, runner_for_board
from flash.hardware import (
    EsptoolConfig,
    OpenOcdConfig,
    PyOcdConfig,
    Uf2Config,
    WestConfig,
    esptool_argv,
    find_drive,
    openocd_argv,
    pyocd_argv,
    uf2_argv,
    west_argv,
)
from flash.host import HostConfig, HostRunner
from flash.qemu import QemuConfig, QemuRunner, qemu_argv
from flash.serial_port import check_serial_port


def test_the_registered_runner_names_are_exactly_these():
    assert set(flash.RUNNERS) == {"qemu", "host", "openocd", "pyocd", "west", "esptool", "uf2"}


def test_unknown_runner_names_suggest_the_closest():
    with pytest.raises(RunnerError, match="did you mean 'qemu'"):
        get_runner("qmeu")


def test_qemu_argv():
    cfg = QemuConfig(elf=Path("fw.elf"), machine="mps2-an386")
    assert qemu_argv(cfg, 4321) == [
        "qemu-system-arm", "-M", "mps2-an386", "-nographic", "-monitor", "none",
        "-icount", "shift=0,align=off,sleep=off",
        "-semihosting-config", "enable=on,target=native",
        "-serial", "tcp:127.0.0.1:4321,server=on,wait=on,nodelay=on",
        "-kernel", "fw.elf",
    ]


def test_qemu_argv_with_cpu_extra_args_and_no_icount():
    cfg = QemuConfig(elf=Path("fw.elf"), machine="virt", qemu="qemu-system-riscv32",
                     cpu="rv32", extra_args=("-bios", "none"), icount=False)
    assert qemu_argv(cfg, 1) == [
        "qemu-system-riscv32", "-M", "virt", "-cpu", "rv32", "-nographic", "-monitor", "none",
        "-semihosting-config", "enable=on,target=native",
        "-serial", "tcp:127.0.0.1:1,server=on,wait=on,nodelay=on",
        "-kernel", "fw.elf", "-bios", "none",
    ]


def test_openocd_argv():
    cfg = OpenOcdConfig(elf=Path("/b/fw.elf"), args=("-f", "interface/stlink.cfg", "-f",
                        "target/stm32f7x.cfg", "-c", "adapter speed 4000"),
                        serial_url="/dev/ttyACM0", adapter_serial="0668FF")
    assert openocd_argv(cfg) == [
        "openocd", "-f", "interface/stlink.cfg", "-f", "target/stm32f7x.cfg",
        "-c", "adapter speed 4000", "-c", "adapter serial 0668FF",
        "-c", "program {/b/fw.elf} verify reset exit",
    ]


def test_pyocd_argv():
    assert pyocd_argv(PyOcdConfig(elf=Path("fw.elf"), args=("--target", "stm32f746zgtx"),
                                  serial_url="/dev/ttyACM0")) == [
        "pyocd", "flash", "--target", "stm32f746zgtx", "fw.elf"]
    assert pyocd_argv(PyOcdConfig(elf=Path("fw.elf"), args=("--target", "nrf52840"),
                                  serial_url="x", probe_uid="123", frequency=4000000)) == [
        "pyocd", "flash", "--target", "nrf52840", "--uid", "123", "--frequency", "4000000",
        "fw.elf"]


def test_west_argv():
    assert west_argv(WestConfig(build_dir=Path("build"), serial_url="/dev/ttyACM0")) == [
        "west", "flash", "--build-dir", "build"]
    assert west_argv(WestConfig(build_dir=Path("b"), serial_url="x", runner="jlink",
                                extra_args=("--erase",))) == [
        "west", "flash", "--build-dir", "b", "--runner", "jlink", "--erase"]


def test_esptool_argv():
    cfg = EsptoolConfig(images=((0x0, Path("boot.bin")), (0x10000, Path("app.bin"))),
                        chip="esp32s3", serial_url="/dev/ttyUSB0", args=("--baud", "921600"))
    assert esptool_argv(cfg) == [
        "esptool", "--chip", "esp32s3", "--port", "/dev/ttyUSB0", "--baud", "921600",
        "write-flash", "0x0", "boot.bin", "0x10000", "app.bin"]


def test_uf2_argv_prefers_picotool_else_copies_to_the_drive():
    cfg = Uf2Config(image=Path("b/fw.uf2"), serial_url="/dev/ttyACM0",
                    drive=Path("/media/me/RPI-RP2"))
    assert uf2_argv(cfg) == ["cp", "b/fw.uf2", "/media/me/RPI-RP2/"]
    cfg = Uf2Config(image=Path("b/fw.uf2"), serial_url="/dev/ttyACM0",
                    drive=Path("/media/me/RPI-RP2"), picotool="/usr/bin/picotool")
    assert uf2_argv(cfg) == ["/usr/bin/picotool", "load", "-v", "-x", "b/fw.uf2"]


def test_the_rp2_drive_is_found_in_the_mount_table():
    mounts = ("/dev/sda1 / ext4 rw 0 0\n"
              "/dev/sdb1 /media/ann/RPI-RP2 vfat rw,nosuid 0 0\n")
    assert find_drive("RPI-RP2", mounts) == Path("/media/ann/RPI-RP2")
    assert find_drive("RPI-RP2", "/dev/sda1 / ext4 rw 0 0\n") is None


REAL_BOARDS = [b for b in list_boards() if b.platform == "hardware"]


def test_real_boards_prefer_the_tool_their_family_flashes_with():
    first = {b.tag: b.runner.name for b in REAL_BOARDS}
    assert first == {"st/nucleo-f746zg": "openocd", "st/nucleo-l4r5zi": "openocd",
                     "nordic/nrf52840dk": "openocd", "raspberrypi/pico": "uf2",
                     "espressif/esp32c3-devkitm": "esptool"}


def test_west_needs_a_zephyr_build_and_says_so():
    board = load_board("nordic/nrf52840dk")
    board = replace(board, runners=(*board.runners, Runner("west")))  # a record listing west
    with pytest.raises(RunnerError, match="Zephyr build directory.*runners of "
                                          "nordic/nrf52840dk: openocd, pyocd$"):
        runner_for_board("west", board, Path("fw.elf"), "/dev/x")


def test_uf2_without_picotool_or_drive_says_how_to_get_one(tmp_path):
    cfg = Uf2Config(image=tmp_path / "fw.uf2", serial_url="loop://",
                    drive=tmp_path / "RPI-RP2")
    with pytest.raises(RunnerError, match="hold BOOTSEL.*apt-get install picotool"):
        get_runner("uf2")(cfg).start()


def test_uf2_copy_writes_the_file_onto_the_drive(tmp_path):
    image = tmp_path / "fw.uf2"
    image.write_bytes(b"UF2\n" + bytes(508))
    drive = tmp_path / "RPI-RP2"
    drive.mkdir()
    with get_runner("uf2")(Uf2Config(image=image, serial_url="loop://", drive=drive)) as url:
        assert url == "loop://"
    assert (drive / "fw.uf2").read_bytes() == image.read_bytes()


@pytest.mark.parametrize("name, cfg", [
    ("openocd", OpenOcdConfig(elf=Path("f.elf"), args=("-f", "b.cfg"), serial_url="loop://")),
    ("pyocd", PyOcdConfig(elf=Path("f.elf"), args=("--target", "t"), serial_url="loop://")),
    ("west", WestConfig(build_dir=Path("b"), serial_url="loop://")),
    ("esptool", EsptoolConfig(images=((0, Path("a.bin")),), chip="esp32",
                              serial_url="loop://")),
])
def test_hardware_runners_flash_then_return_the_serial_port(name, cfg):
    runner = get_runner(name)(cfg)
    ok = subprocess.CompletedProcess([], 0, "", "")
    with mock.patch("subprocess.run", return_value=ok) as run:
        with runner as url:
            assert url == "loop://"
    assert run.call_args.args[0] == runner.argv()


def test_a_failing_flash_tool_is_a_clear_error():
    cfg = PyOcdConfig(elf=Path("f.elf"), args=("--target", "t"), serial_url="loop://")
    bad = subprocess.CompletedProcess([], 1, "", "No connected debug probes")
    with mock.patch("subprocess.run", return_value=bad):
        with pytest.raises(RunnerError, match="(?s)status 1.*No connected debug probes.*pyocd"):
            get_runner("pyocd")(cfg).start()


@pytest.mark.parametrize("name, cfg, install", [
    ("west", WestConfig(build_dir=Path("b"), serial_url="loop://", west="no-such-west"),
     "pip install west"),
    ("pyocd", PyOcdConfig(elf=Path("f.elf"), args=(), serial_url="loop://",
                          pyocd="no-such-pyocd"), "pip install pyocd"),
    ("openocd", OpenOcdConfig(elf=Path("f.elf"), args=(), serial_url="loop://",
                              openocd="no-such-openocd"), "apt-get install openocd"),
    ("esptool", EsptoolConfig(images=(), chip="esp32c3", serial_url="loop://",
                              esptool="no-such-esptool"), "pip install 'esptool>=5'"),
])
def test_a_missing_flash_tool_names_what_to_install(name, cfg, install):
    with pytest.raises(RunnerError, match=f"not installed.*{re.escape(install)}"):
        get_runner(name)(cfg).start()


def test_a_missing_serial_port_is_refused_before_flashing(tmp_path):
    cfg = PyOcdConfig(elf=Path("f.elf"), args=(), serial_url=str(tmp_path / "ttyACM7"))
    with mock.patch("subprocess.run") as run:
        with pytest.raises(RunnerError, match=r"serial port .*ttyACM7 does not exist.*--port"):
            get_runner("pyocd")(cfg).start()
    run.assert_not_called()


def test_a_denied_serial_port_names_the_group_to_join():
    # Root opens any device, so the refusal is simulated where the port opens it.
    with mock.patch("flash.serial_port.os.open", side_effect=PermissionError(13, "denied")), \
            mock.patch("flash.serial_port.os.path.exists", return_value=True), \
            mock.patch("flash.serial_port._group_of", return_value="dialout"):
        with pytest.raises(RunnerError, match=r"permission denied on serial port /dev/ttyACM0: "
                                              r"add yourself to the dialout group \(sudo usermod"):
            check_serial_port("/dev/ttyACM0")


def test_a_serial_port_held_by_another_program_is_named():
    primary, secondary = os.openpty()
    try:
        path = os.ttyname(secondary)
        check_serial_port(path)  # free: no complaint
        holder = os.open(path, os.O_RDWR | os.O_NOCTTY)
        fcntl.flock(holder, fcntl.LOCK_EX)  # what pyserial's exclusive mode and monitors do
        try:
            with pytest.raises(RunnerError, match=f"serial port {path} is busy.*fuser -v"):
                check_serial_port(path)
        finally:
            os.close(holder)
    finally:
        os.close(primary)
        os.close(secondary)


def test_a_serial_port_locked_by_a_monitor_names_its_process(tmp_path):
    (tmp_path / "LCK..ttyACM0").write_text(f"{os.getpid():10d}\n")
    with mock.patch("flash.serial_port.os.path.exists", return_value=True):
        with pytest.raises(RunnerError, match=f"busy: process {os.getpid()} holds it"):
            check_serial_port("/dev/ttyACM0", lock_dirs=(str(tmp_path),))


def test_urls_are_not_checked_as_devices():
    check_serial_port("socket://127.0.0.1:1")
    check_serial_port("loop://")


def test_qemu_that_dies_at_start_is_reported(tmp_path):
    fake = tmp_path / "fake-qemu"
    fake.write_text(f"#!{sys.executable}\nimport sys\nsys.stderr.write('no such machine')\n"
                    "sys.exit(1)\n")
    fake.chmod(0o755)
    elf = tmp_path / "fw.elf"
    elf.write_bytes(b"")
    with pytest.raises(RunnerError, match="(?s)status 1.*no such machine"):
        with QemuRunner(QemuConfig(elf=elf, machine="x", qemu=str(fake))):
            pass


FAKE_QEMU = """#!{python}
import re, socket, sys, time
port = int(re.search(r"tcp:127.0.0.1:(\\d+),", " ".join(sys.argv)).group(1))
server = socket.socket()
server.bind(("127.0.0.1", port))
server.listen(1)
time.sleep(60)
"""


def test_qemu_runner_waits_for_the_serial_port_and_always_stops_qemu(tmp_path):
    """A stand-in QEMU that only listens: the runner's lifecycle without QEMU."""
    fake = tmp_path / "fake-qemu"
    fake.write_text(FAKE_QEMU.format(python=sys.executable))
    fake.chmod(0o755)
    elf = tmp_path / "fw.elf"
    elf.write_bytes(b"")
    runner = QemuRunner(QemuConfig(elf=elf, machine="mps2-an386", qemu=str(fake)))
    with pytest.raises(ZeroDivisionError):
        with runner as url:
            assert url == f"socket://127.0.0.1:{runner.port}"
            proc = runner._child.proc
            assert proc.poll() is None
            raise ZeroDivisionError
    assert proc.poll() is not None


def test_qemu_never_mistakes_another_listener_for_its_serial_port(tmp_path, monkeypatch):
    """free_port() gives a port that was free a moment ago; if another process (another
    QEMU of a farm) takes it first, our QEMU fails to bind: the runner must neither
    hand out the other process's port nor give up, but start again on a new one."""
    import socket

    import flash.qemu

    other = socket.socket()
    other.bind(("127.0.0.1", 0))
    other.listen(1)
    taken = other.getsockname()[1]
    ports = iter([taken, flash.qemu.free_port()])
    monkeypatch.setattr(flash.qemu, "free_port", lambda host="127.0.0.1": next(ports))
    fake = tmp_path / "fake-qemu"
    fake.write_text(FAKE_QEMU.format(python=sys.executable))
    fake.chmod(0o755)
    elf = tmp_path / "fw.elf"
    elf.write_bytes(b"")
    try:
        with QemuRunner(QemuConfig(elf=elf, machine="mps2-an386", qemu=str(fake))) as url:
            assert url != f"socket://127.0.0.1:{taken}"
    finally:
        other.close()


def test_is_listening_asks_which_process_listens():
    import os
    import socket

    from flash.qemu import is_listening

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    port = s.getsockname()[1]
    try:
        assert is_listening(port) and is_listening(port, os.getpid())
        assert not is_listening(port, os.getppid())
    finally:
        s.close()


def test_missing_firmware_is_reported(tmp_path):
    with pytest.raises(RunnerError, match="does not exist"):
        QemuRunner(QemuConfig(elf=tmp_path / "none.elf", machine="x")).start()


@pytest.fixture(scope="module")
def host_fw(tmp_path_factory):
    return fw.build(tmp_path_factory.mktemp("fw"))


@pytest.mark.slow
def test_host_runner_serves_rpc_on_a_socket_and_cleans_up(host_fw):
    runner = HostRunner(HostConfig(executable=host_fw))
    with runner as url:
        assert url.startswith("socket://127.0.0.1:")
        proc = runner._child.proc
        with connect(url) as client:
            x = np.arange(64, dtype=np.int8).reshape(1, 64)
            client.write_tensor("input", x)
            client.run(1)
            np.testing.assert_array_equal(client.read_tensor("output"), fw.reference(x)[1])
    assert proc.poll() is not None


def test_runner_process_is_gone_after_an_exception(host_fw):
    runner = HostRunner(HostConfig(executable=host_fw))
    with pytest.raises(KeyError):
        with runner:
            proc = runner._child.proc
            raise KeyError("boom")
    assert proc.poll() is not None


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.skipif(not fw.have("qemu-system-arm", "arm-none-eabi-gcc"), reason="no QEMU/arm gcc")
def test_qemu_runner_boots_mps2_an386_and_cleans_up(tmp_path):
    elf = fw.build_board(tmp_path, "qemu/mps2-an386")
    runner = QemuRunner(QemuConfig(elf=elf, machine="mps2-an386"))
    with runner as url:
        proc = runner._child.proc
        with connect(url, timeout=5) as client:
            assert client.info().board_tag == "qemu/mps2-an386"
    assert proc.poll() is not None
