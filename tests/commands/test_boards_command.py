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
    "qemu/mps2-an521",
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


def _columns(lines: list[str]) -> list[dict[str, str]]:
    """The rows of a left-aligned table, cut at the header's column starts."""
    heads = lines[0].split()
    starts = [lines[0].index(h) for h in heads]
    ends = starts[1:] + [None]
    return [{h: line[a:b].strip() for h, a, b in zip(heads, starts, ends)} for line in lines[1:]]


def test_table(capsys):
    assert main(["boards"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["TAG", "CORE", "FPU/DSP/MVE", "RAM", "FLASH", "RUNNER",
                                "TRANSPORT", "VERIFIED"]
    rows = {r["TAG"]: r for r in _columns(lines)}
    assert list(rows) == BOARDS
    assert rows["qemu/mps2-an386"] == {
        "TAG": "qemu/mps2-an386", "CORE": "Cortex-M4F", "FPU/DSP/MVE": "fpv4-sp-d16+dsp",
        "RAM": "4 MiB", "FLASH": "4 MiB", "RUNNER": "qemu", "TRANSPORT": "tcp-loopback",
        "VERIFIED": "qemu"}
    assert rows["qemu/mps3-an547"]["FPU/DSP/MVE"].endswith("+dsp+mve")
    assert rows["qemu/mps3-an547"]["RAM"] == "512 KiB"
    assert rows["raspberrypi/pico"]["FPU/DSP/MVE"] == "-"
    assert rows["st/nucleo-f746zg"]["TRANSPORT"] == "serial@115200"
    # Every real board says it was only built, never run on hardware.
    real = {t for t, r in rows.items() if r["TRANSPORT"].startswith("serial")}
    assert {rows[t]["VERIFIED"] for t in real} == {"build"}
    assert rows["host/native"]["VERIFIED"] == "hardware"


def test_show(capsys):
    assert main(["boards", "show", "qemu/an547"]) == 0
    out = capsys.readouterr().out
    assert "tag          qemu/mps3-an547 (versioned: qemu/mps3-an547:v1)" in out
    assert "-mcpu=cortex-m55" in out and "qemu-system-arm -M mps3-an547" in out
    assert "31.25 instructions/tick" in out


def test_show_says_how_the_port_clocks_the_chip(capsys):
    assert main(["boards", "show", "st/nucleo-f746zg"]) == 0
    out = capsys.readouterr().out
    assert "0x08000000..0x08100000  1 MiB  7 wait states" in out
    assert "caches       l1_icache, l1_dcache" in out
    assert "clocks       hse_bypass 8 MHz: HSE 8 MHz (ST-LINK MCO) / PLLM 4" in out
    assert "measured by tim5_lse" in out


def test_show_gives_the_memory_timing_and_the_optimisation_flags(capsys):
    # the cycle estimate prices this memory system (docs/cycles.md), and the
    # kernels are sized and built with these flags: both belong on the page
    assert main(["boards", "show", "st/nucleo-l4r5zi"]) == 0
    out = capsys.readouterr().out
    assert "timing       traced on qemu/mps2-an386" in out
    assert "timing       sram           0 wait states, S-bus through the bus matrix" in out
    assert "timing       flash_icache   1 KiB, 32-byte lines, fetch from flash" in out
    assert "-mfpu=fpv4-sp-d16 -O2" in out


def test_show_json(capsys):
    assert main(["boards", "show", "st/nucleo-l4r5zi", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["tag"] == "st/nucleo-l4r5zi"
    assert record["console"]["usb"] == ["0483:374b", "0483:3752"]
    assert record["target_json"]["mcpu"] == "cortex-m4"
    assert record["clocks"]["source"] == "hsi16" and record["memory"]["flash"]["wait_states"] == 5
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
