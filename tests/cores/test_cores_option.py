"""``--cores N`` refines the board: refused above the board's cores, on a
single-core board and without a board, with the numbers, and more than two cores as
not supported yet (the hand-over goes to core 1 only); ``--cores 1`` and ``--cores 2``
pass."""

from __future__ import annotations

import pytest
from support.models import MODELS_DIR

from aot.cli import main
from aot.target import TargetError, check_cores, load_board

HELLO = str(MODELS_DIR / "tflm_hello_world_int8.tflite")


@pytest.mark.parametrize(
    "tag, cores, message",
    [
        ("qemu/mps2-an521", 3, "--cores 3: qemu/mps2-an521 has 2 cores; give 1 to 2"),
        ("qemu/mps2-an521", 0, "--cores 0: give 1 to 2, the cores qemu/mps2-an521 has"),
        ("qemu/mps2-an386", 2, "--cores 2: qemu/mps2-an386 has 1 core; boards with several "
                               "cores: qemu/mps2-an521, raspberrypi/pico"),
        (None, 2, "--cores 2: the number of cores is a board fact; give --board"),
    ],
)
def test_refusals_name_the_numbers(tag, cores, message):
    board = load_board(tag) if tag else None
    with pytest.raises(TargetError) as err:
        check_cores(board, cores)
    assert str(err.value).startswith(message)


def test_one_core_passes_on_every_board_and_two_on_those_with_two():
    for tag in ("qemu/mps2-an521", "qemu/mps2-an386"):
        check_cores(load_board(tag), 1)
    for tag in ("qemu/mps2-an521", "raspberrypi/pico"):
        check_cores(load_board(tag), 2)


@pytest.mark.parametrize("command", [["compile", "-o", "OUT"], ["verify"]])
def test_the_cli_refuses_before_building(command, tmp_path, capsys):
    argv = [command[0], HELLO, "--board", "qemu/mps2-an521", "--cores", "2", "--codegen",
            "llvm", *[str(tmp_path / "a") if a == "OUT" else a for a in command[1:]]]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "not supported yet: 2 cores with the llvm codegen" in err
    assert not (tmp_path / "a").exists()


def test_the_cli_compiles_with_one_core(tmp_path):
    out = tmp_path / "a"
    assert main(["compile", HELLO, "--board", "qemu/mps2-an521", "--cores", "1",
                 "-o", str(out)]) == 0
    assert (out / "metadata.json").is_file()


def test_a_composite_without_a_board_points_at_the_boards_with_cores(capsys, tmp_path):
    assert main(["compile", HELLO, "-o", str(tmp_path / "a"), "--target",
                 "composite -targets={c -mcpu=cortex-m33},{c -mcpu=cortex-m33}"]) == 2
    err = capsys.readouterr().err
    assert "are cores of a board: give --board TAG (boards with several cores: " \
        "qemu/mps2-an521, raspberrypi/pico)" in err
