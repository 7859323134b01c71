"""Runners: the registry, exact command lines, and process lifecycles."""

import subprocess
import sys
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from support.firmware import fw

import flash
from aot.rpc import connect
from flash import RunnerError, get_runner
from flash.hardware import (
    EsptoolConfig,
    OpenOcdConfig,
    PyOcdConfig,
    WestConfig,
    esptool_argv,
    openocd_argv,
    pyocd_argv,
    west_argv,
)
from flash.host import HostConfig, HostRunner
from flash.qemu import QemuConfig, QemuRunner, qemu_argv


def test_the_registered_runner_names_are_exactly_these():
    assert set(flash.RUNNERS) == {"qemu", "host", "openocd", "pyocd", "west", "esptool"}


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
    cfg = OpenOcdConfig(elf=Path("/b/fw.elf"), config_files=("interface/stlink.cfg",
                        "target/stm32f7x.cfg"), serial_url="/dev/ttyACM0",
                        adapter_serial="0668FF", extra_commands=("adapter speed 4000",))
    assert openocd_argv(cfg) == [
        "openocd", "-f", "interface/stlink.cfg", "-f", "target/stm32f7x.cfg",
        "-c", "adapter serial 0668FF", "-c", "adapter speed 4000",
        "-c", "program {/b/fw.elf} verify reset exit",
    ]


def test_pyocd_argv():
    assert pyocd_argv(PyOcdConfig(elf=Path("fw.elf"), target="stm32f746zgtx",
                                  serial_url="/dev/ttyACM0")) == [
        "pyocd", "flash", "--target", "stm32f746zgtx", "fw.elf"]
    assert pyocd_argv(PyOcdConfig(elf=Path("fw.elf"), target="nrf52840", serial_url="x",
                                  probe_uid="123", frequency=4000000)) == [
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
                        chip="esp32s3", serial_port="/dev/ttyUSB0")
    assert esptool_argv(cfg) == [
        "esptool.py", "--chip", "esp32s3", "--port", "/dev/ttyUSB0", "--baud", "460800",
        "write_flash", "0x0", "boot.bin", "0x10000", "app.bin"]


@pytest.mark.parametrize("name, cfg", [
    ("openocd", OpenOcdConfig(elf=Path("f.elf"), config_files=("b.cfg",), serial_url="/dev/x")),
    ("pyocd", PyOcdConfig(elf=Path("f.elf"), target="t", serial_url="/dev/x")),
    ("west", WestConfig(build_dir=Path("b"), serial_url="/dev/x")),
    ("esptool", EsptoolConfig(images=((0, Path("a.bin")),), chip="esp32", serial_port="/dev/x")),
])
def test_hardware_runners_flash_then_return_the_serial_port(name, cfg):
    runner = get_runner(name)(cfg)
    ok = subprocess.CompletedProcess([], 0, "", "")
    with mock.patch("subprocess.run", return_value=ok) as run:
        with runner as url:
            assert url == "/dev/x"
    assert run.call_args.args[0] == runner.argv()


def test_a_failing_flash_tool_is_a_clear_error():
    cfg = PyOcdConfig(elf=Path("f.elf"), target="t", serial_url="/dev/x")
    bad = subprocess.CompletedProcess([], 1, "", "No connected debug probes")
    with mock.patch("subprocess.run", return_value=bad):
        with pytest.raises(RunnerError, match="(?s)status 1.*No connected debug probes.*pyocd"):
            get_runner("pyocd")(cfg).start()


def test_a_missing_flash_tool_is_a_clear_error():
    cfg = WestConfig(build_dir=Path("b"), serial_url="/dev/x", west="no-such-west-tool")
    with pytest.raises(RunnerError, match="not installed"):
        get_runner("west")(cfg).start()


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
            1 / 0
    assert proc.poll() is not None


def test_missing_firmware_is_reported(tmp_path):
    with pytest.raises(RunnerError, match="does not exist"):
        QemuRunner(QemuConfig(elf=tmp_path / "none.elf", machine="x")).start()


@pytest.fixture(scope="module")
def host_fw(tmp_path_factory):
    return fw.build(tmp_path_factory.mktemp("fw"))


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
