"""`aot boards` and `aot boards show` as a user runs them."""

import json
import subprocess
import sys

import pytest

from aot.cli import main
from aot.target import Target

BOARDS = [
    "espressif/esp32c3-devkitm",
    "host/native",
    "nordic/nrf52840dk",
    "qemu/microbit",
    "qemu/mps2-an385",
    "qemu/mps2-an386",
    "qemu/mps2-an500",
    "qemu/mps2-an505",
    "qemu/mps3-an547",
    "qemu/netduinoplus2",
    "qemu/sifive-e",
    "raspberrypi/pico",
    "st/nucleo-f746zg",
    "st/nucleo-l4r5zi",
]


def test_json_lists_exactly_the_boards(capsys):
    assert main(["boards", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["tag"] for r in records] == BOARDS
    emulated = {r["tag"] for r in records if r["emulated"]}
    assert emulated == {t for t in BOARDS if t.startswith("qemu/")}


def test_table(capsys):
    assert main(["boards"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["TAG", "CPU", "FLASH", "RAM", "RUNNER", "PLATFORM"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert list(rows) == BOARDS
    assert rows["qemu/mps2-an386"].split() == [
        "qemu/mps2-an386",
        "Cortex-M4F",
        "4",
        "MiB",
        "4",
        "MiB",
        "qemu",
        "qemu",
    ]
    assert "512 KiB" in rows["qemu/mps3-an547"]
    assert rows["raspberrypi/pico"].split()[-2:] == ["openocd", "hardware"]


def test_show(capsys):
    assert main(["boards", "show", "qemu/an547"]) == 0
    out = capsys.readouterr().out
    assert "tag          qemu/mps3-an547 (versioned: qemu/mps3-an547:v1)" in out
    assert "-mcpu=cortex-m55" in out and "qemu-system-arm -M mps3-an547" in out
    assert "31.25 instructions/tick" in out


def test_show_json(capsys):
    assert main(["boards", "show", "st/nucleo-l4r5zi", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["tag"] == "st/nucleo-l4r5zi"
    assert record["console"]["usb"] == "0483:374b"
    assert record["target_json"]["mcpu"] == "cortex-m4"
    assert record["qemu"] is None
    # --json before the action works too
    assert main(["boards", "--json", "show", "qemu/sifive-e"]) == 0
    assert json.loads(capsys.readouterr().out)["port"] == "sifive_e"


def test_unknown_tag_exits_2_with_a_suggestion():
    proc = subprocess.run(
        [sys.executable, "-m", "aot", "boards", "show", "qemu/mps2-an368"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "did you mean 'qemu/mps2-an386'?" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize("tag", BOARDS)
def test_show_every_board(tag, capsys):
    assert main(["boards", "show", tag]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"tag          {tag} ")
    assert main(["boards", "show", tag, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert Target(record["target"]) == Target(record["target_json"]) == Target(tag)
