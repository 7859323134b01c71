"""The per-core timing tables and the board lookups."""

from __future__ import annotations

import pytest

from aot.cycles import CycleModelError, core_for_board, cores
from aot.cycles.isa import CLASSES, classify
from aot.target import load_board


def test_the_registered_cores():
    assert set(cores()) == {"cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m7",
                            "cortex-m33", "cortex-m55"}


def test_only_the_m0plus_m3_and_m4_tables_are_from_trm_tables():
    assert {n for n, c in cores().items() if not c.approximate} == {
        "cortex-m0plus", "cortex-m3", "cortex-m4"}


@pytest.mark.parametrize("name", sorted(cores()))
def test_every_table_prices_only_known_classes_and_every_branch(name):
    core = cores()[name]
    assert set(core.cycles) <= set(CLASSES)
    assert {"alu", "load", "store", "ldm", "stm", "branch", "branch_call",
            "branch_reg"} <= set(core.cycles)


def test_a_v8m_v7em_core_prices_every_class_but_helium():
    m4 = cores()["cortex-m4"]
    assert set(CLASSES) - set(m4.cycles) == {
        "branch_loop", "loop_start", "mve", "mve_mac", "mve_load", "mve_store"}
    assert set(CLASSES) <= set(cores()["cortex-m55"].cycles)


@pytest.mark.parametrize("tag, core", [("qemu/mps2-an386", "cortex-m4"),
                                       ("qemu/mps2-an385", "cortex-m3"),
                                       ("qemu/mps2-an500", "cortex-m7"),
                                       ("qemu/mps3-an547", "cortex-m55"),
                                       ("raspberrypi/pico", "cortex-m0plus"),
                                       ("st/nucleo-l4r5zi", "cortex-m4")])
def test_boards_find_their_core(tag, core):
    assert core_for_board(load_board(tag)).name == core


@pytest.mark.parametrize("tag", ["qemu/sifive-e", "host/native"])
def test_a_board_without_a_cycle_model_is_refused(tag):
    with pytest.raises(CycleModelError, match=f"{tag} has no cycle model: its CPU"):
        core_for_board(load_board(tag))


@pytest.mark.parametrize("name, op_str, cls", [
    ("smlad", "r5, r1, r2, r5", "mac"), ("smulbb", "r0, r1, r2", "mul"),
    ("smlal", "r0, r1, r2, r3", "mul_long"), ("ldrsb", "r0, [r1]", "load"),
    ("pop", "{r4, pc}", "ldm"), ("vldr", "s0, [r0]", "vload"), ("vfma", "s0, s1, s2", "fmac"),
    ("vldrb", "q0, [r0]", "mve_load"), ("vmladava", "r0, q0, q1", "mve_mac"),
    ("vadd", "q0, q1, q2", "mve"), ("vadd", "s0, s1, s2", "falu"),
    ("vmov", "r0, r1, d0", "vmov2"), ("le", "lr, #-8", "branch_loop"), ("tbb", "[pc, r0]",
                                                                         "branch_table")])
def test_classes(name, op_str, cls):
    assert classify(name, op_str) == cls
