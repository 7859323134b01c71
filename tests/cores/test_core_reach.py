"""Which memories each core reaches (the record's ``cores.shared``) and the memory
plan's check that a workspace split across cores sits where all of them reach."""

from __future__ import annotations

from dataclasses import replace

import pytest

from aot.executor.regions import MemoryRegionError, check_reach, parse_regions
from aot.target import TargetError, load_board


def test_both_an521_cores_reach_every_data_memory():
    board = load_board("qemu/mps2-an521")
    assert board.cores.reach(0) == board.cores.reach(1) == ("ram", "sse_sram", "ssram3")
    with pytest.raises(TargetError, match="core 2: the board has cores 0 to 1"):
        board.cores.reach(2)
    check_reach(parse_regions("ram,sse_sram,ssram3", board), board, 2)


def test_a_one_core_board_reaches_all_its_memories():
    board = load_board("qemu/mps2-an386")
    assert board.cores.reach(0) is None
    check_reach(parse_regions("ram", board), board, 1)


def test_a_region_a_core_cannot_reach_is_refused_by_name():
    board = load_board("qemu/mps2-an521")
    narrow = replace(board, cores=replace(board.cores, shared=("ram",)))
    regions = parse_regions("ram,sse_sram", narrow)
    check_reach(regions, narrow, 1)   # core 0 alone shares nothing
    with pytest.raises(MemoryRegionError) as err:
        check_reach(regions, narrow, 2)
    assert str(err.value) == ("memory region 'sse_sram' is not reached by core 0 of "
                              "qemu/mps2-an521, which reaches ram; with --cores 2 place the "
                              "workspace in those")
