"""A composite ``--target`` whose devices are cores of one board: parsed, each member
refining the board's target like ``--target``, counted like ``--cores N`` and held to
what compilation honours (no more than the board's cores, members of one board)."""

from __future__ import annotations

import pytest
from support.models import MODELS_DIR

from aot.compile import compile_model, resolve_target
from aot.errors import AotError
from aot.target import Target, TargetError, board_devices, load_board

HELLO = str(MODELS_DIR / "tflm_hello_world_int8.tflite")
AN521 = "qemu/mps2-an521"


def test_members_refine_the_board_and_count_its_cores():
    board = load_board(AN521)
    target, got, n = board_devices(Target("composite -targets={c -libs=cmsis-nn},"
                                          "{c -libs=cmsis-nn}"), board)
    assert got is board and n == 2
    assert target == board.target.refined_by("c -libs=cmsis-nn")
    # The board may come from the members' tags instead of --board.
    _, got, n = board_devices(Target(f"composite -targets={{c -tag={AN521}}}"))
    assert got.tag == AN521 and n == 1


def test_one_device_compiles_for_core_0():
    one = compile_model(HELLO, f"composite -targets={{c -tag={AN521}}}", measure_code=False)
    assert one.board.tag == AN521 and one.target == load_board(AN521).target


@pytest.mark.parametrize("board, target, message", [
    (AN521, "composite -targets={c},{c},{c}",
     "the composite target names 3 devices but qemu/mps2-an521 has 2 cores"),
    (AN521, "composite -targets={c -mattr=+dsp},{c}",
     "not supported yet: composite members that differ (c -keys=cpu -mattr=+dsp and "
     "c -keys=cpu): the cores of qemu/mps2-an521 run one target"),
    (AN521, "composite -targets={c -mcpu=cortex-m55},{c}",
     "--target sets -mcpu=cortex-m55 but the board qemu/mps2-an521"),
    (AN521, "composite -targets={c -tag=qemu/mps2-an386}",
     "the composite target's members name qemu/mps2-an386 but --board is qemu/mps2-an521"),
    (None, "composite -targets={c -tag=qemu/mps2-an521},{c -tag=qemu/mps2-an386}",
     "not supported yet: a composite target over several boards (qemu/mps2-an386, "
     "qemu/mps2-an521)"),
    (None, "composite -targets={c},{c}",
     "the composite target's devices ('c -keys=cpu', 'c -keys=cpu') are cores of a board: "
     "give --board TAG (boards with several cores: qemu/mps2-an521, raspberrypi/pico)"),
    ("qemu/mps2-an386", "composite -targets={c},{c}",
     "the composite target names 2 devices but qemu/mps2-an386 has 1 core"),
])
def test_refusals_name_the_devices_and_numbers(board, target, message):
    with pytest.raises(AotError) as err:
        if board is None:
            resolve_target(target)
        else:
            resolve_target(board, refine=target)
    assert str(err.value).startswith(message), str(err.value)


def test_a_composite_host_is_refused():
    with pytest.raises(TargetError, match="not supported yet: a composite target with -host"):
        board_devices(Target("composite -targets={c} -host={c -mtriple=x86_64-linux-gnu}"),
                      load_board(AN521))
