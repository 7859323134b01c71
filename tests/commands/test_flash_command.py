"""``aot flash``: the exact command per real board (--dry-run) and the errors a user can fix."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support.models import MODELS_DIR

from aot.cli import main
from aot.compile import compile_model
from aot.firmware import create_project

HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"


@pytest.fixture(scope="module")
def projects(tmp_path_factory):
    """An unbuilt project of hello per board: --dry-run needs no build."""
    root = tmp_path_factory.mktemp("flash-projects")
    made = {}
    for tag in ("st/nucleo-f746zg", "nordic/nrf52840dk", "raspberrypi/pico",
                "espressif/esp32c3-devkitm", "qemu/mps2-an386"):
        compiled = compile_model(HELLO, tag, name="hello", measure_code=False)
        folder = root / tag.replace("/", "_")
        made[tag] = create_project(compiled.write(folder / "art"), tag, folder / "proj").path
    return made


@pytest.fixture
def tools(monkeypatch):
    """Every tool on PATH except picotool; the Pico's drive mounted at /media/ann."""
    monkeypatch.setattr("flash.hardware.shutil.which",
                        lambda name: None if name == "picotool" else f"/usr/bin/{name}")
    monkeypatch.setattr("flash.hardware.mount_table",
                        lambda: "/dev/sdb1 /media/ann/RPI-RP2 vfat rw 0 0\n")


@pytest.mark.parametrize("tag, args, expected", [
    ("st/nucleo-f746zg", [],
     "openocd -f board/st_nucleo_f7.cfg -c 'program {P/build/firmware.elf} verify reset "
     "exit'"),
    ("st/nucleo-f746zg", ["--runner", "pyocd"],
     "pyocd flash --target stm32f746zgtx P/build/firmware.elf"),
    ("nordic/nrf52840dk", [],
     "openocd -f interface/jlink.cfg -c 'transport select swd' -f target/nrf52.cfg "
     "-c 'program {P/build/firmware.elf} verify reset exit'"),
    ("raspberrypi/pico", [], "cp P/build/firmware.uf2 /media/ann/RPI-RP2/"),
    ("espressif/esp32c3-devkitm", ["--port", "/dev/ttyUSB0"],
     "esptool --chip esp32c3 --port /dev/ttyUSB0 --baud 460800 write-flash 0x10000 "
     "P/build/firmware.bin"),
])
def test_dry_run_prints_the_exact_command(projects, tools, capsys, tag, args, expected):
    p = projects[tag]
    assert main(["flash", str(p), "--dry-run", *args]) == 0
    assert capsys.readouterr().out.strip() == expected.replace("P/", f"{p}/")


def test_dry_run_with_picotool_on_path(projects, monkeypatch, capsys):
    monkeypatch.setattr("flash.hardware.shutil.which", lambda name: f"/usr/bin/{name}")
    p = projects["raspberrypi/pico"]
    assert main(["flash", str(p), "--dry-run"]) == 0
    assert capsys.readouterr().out.strip() == \
        f"/usr/bin/picotool load -v -x {p}/build/firmware.uf2"


def test_dry_run_of_an_emulated_board_prints_qemu(projects, capsys):
    p = projects["qemu/mps2-an386"]
    assert main(["flash", str(p), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("qemu-system-arm -M mps2-an386 ") and \
        f"-kernel {p}/build/firmware.elf" in out


def test_west_is_refused_with_what_to_do_instead(projects, capsys):
    assert main(["flash", str(projects["nordic/nrf52840dk"]), "--dry-run",
                 "--runner", "west"]) == 2
    err = capsys.readouterr().err
    assert "Zephyr build directory" in err and "openocd, pyocd" in err


@pytest.mark.slow
def test_a_missing_serial_port_is_named_before_flashing(projects, tmp_path):
    p = projects["st/nucleo-f746zg"]
    (p / "build").mkdir(exist_ok=True)
    (p / "build" / "firmware.elf").write_bytes(b"\x7fELF")  # stands in for a build
    port = str(tmp_path / "ttyACM9")
    proc = subprocess.run([sys.executable, "-m", "aot", "flash", str(p), "--port", port],
                          capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert f"serial port {port} does not exist" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
@pytest.mark.qemu
def test_flash_shows_the_boards_own_report_and_no_warning_when_it_matches(tmp_path, capsys):
    """On the first flash the user sees how the port set the chip up (issue 37)."""
    import shutil

    from aot.cli import main
    from support.models import MODELS_DIR

    if not shutil.which("qemu-system-arm") or not shutil.which("arm-none-eabi-gcc"):
        pytest.skip("needs qemu-system-arm and arm-none-eabi-gcc")
    tag = "qemu/netduinoplus2"
    model = MODELS_DIR / "tflm_hello_world_int8.tflite"
    assert main(["compile", str(model), "--board", tag, "-o", str(tmp_path / "a")]) == 0
    assert main(["project", "create", "--board", tag, "--artifact", str(tmp_path / "a"),
                 "-o", str(tmp_path / "p")]) == 0
    assert main(["build", str(tmp_path / "p")]) == 0
    capsys.readouterr()
    assert main(["flash", str(tmp_path / "p")]) == 0
    out, err = capsys.readouterr()
    assert "  core 16 MHz (not measured), 0 flash wait states, no caches on" in out
    assert "warning:" not in err
