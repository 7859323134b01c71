"""``--board B --target T``: the board's target refined by T (Target.refined_by)."""

from __future__ import annotations

import pytest

from aot.compile import CompileError, resolve_target
from aot.target import Target, TargetError, load_board

BOARD = "qemu/mps2-an386"


def test_a_refinement_adds_attributes_and_keeps_the_board():
    target, board = resolve_target(BOARD, refine="c -mcpu=cortex-m4 -mattr=+dsp")
    assert board.tag == BOARD
    assert target.tag == BOARD
    assert target.attrs["mattr"] == ("+dsp",)
    base = load_board(BOARD).target
    assert {k: v for k, v in target.to_dict().items() if k != "mattr"} == base.to_dict()


def test_a_refinement_that_restates_the_board_is_the_board():
    target, _ = resolve_target(BOARD, refine="c -mcpu=cortex-m4 -mfloat-abi=hard")
    assert target == load_board(BOARD).target


def test_new_keys_go_first():
    target = load_board(BOARD).target.refined_by("c -keys=mykey")
    assert target.keys[0] == "mykey" and "arm_cpu" in target.keys


def test_the_refined_target_round_trips_through_its_string():
    target, _ = resolve_target(BOARD, refine="c -mattr=+dsp")
    assert Target(str(target)) == target


@pytest.mark.parametrize("refine, message", [
    ("c -mcpu=cortex-m7", "-mcpu=cortex-m7 but the board qemu/mps2-an386"),
    ("llvm", "keeps its kind (use --codegen"),
    ("c -tag=st/nucleo-f746zg", "cannot set -host or -tag"),
])
def test_contradictions_are_refused_naming_both_sides(refine, message):
    with pytest.raises(TargetError, match=message.replace("(", r"\(")):
        resolve_target(BOARD, refine=refine)


def test_a_refinement_needs_a_board():
    with pytest.raises(CompileError, match="refines a board's target"):
        resolve_target("c -mcpu=cortex-m4", refine="c -mattr=+dsp")
