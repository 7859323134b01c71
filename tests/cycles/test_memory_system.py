"""The memory system of the board records, the cache walk, placement by section, the plugin."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from aot.cycles import CycleModelError
from aot.cycles.memory import (
    FETCH,
    FLASH,
    LOAD,
    SRAM,
    STORE,
    Accesses,
    Cache,
    MemorySystem,
    Walker,
    memory_for_board,
    stalls,
)
from aot.cycles.memtrace import Placement, accesses, plugin_args, plugin_library, read_log
from aot.target import load_board, load_board_file

REAL = ["st/nucleo-l4r5zi", "st/nucleo-f746zg", "nordic/nrf52840dk", "raspberrypi/pico",
        "espressif/esp32c3-devkitm"]


@pytest.mark.parametrize("tag", REAL + ["qemu/netduinoplus2"])
def test_every_real_board_describes_its_memory_with_sources(tag):
    m = memory_for_board(load_board(tag))
    board = load_board(tag)
    assert {c.name for c in m.caches} == set(board.memory.caches)
    assert m.fetch_cycles > 0 and all(len(s) > 20 for s in m.sources)
    assert load_board(m.trace_board).qemu is not None
    if board.memory.flash.wait_states is not None:  # one home for the wait states
        assert m.fetch_cycles == board.memory.flash.wait_states


@pytest.mark.parametrize("tag", ["qemu/mps2-an385", "qemu/mps2-an386", "qemu/mps2-an500",
                                 "qemu/mps2-an505", "qemu/mps3-an547"])
def test_the_fpga_boards_never_wait(tag):
    m = memory_for_board(load_board(tag))
    assert m.zero_wait and m.trace_board == tag and not m.caches


def _edited(tmp_path, tag, old, new):
    board = load_board(tag)
    text = board.path.read_text()
    assert old in text
    path = tmp_path / "st" / "x.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace(old, new))
    return load_board_file(path)


def test_wait_states_given_twice_are_refused(tmp_path):
    board = _edited(tmp_path, "st/nucleo-l4r5zi", "width_bytes = 8,", "width_bytes = 8, "
                    "fetch_cycles = 4,")
    with pytest.raises(CycleModelError, match="fetch_cycles repeats memory.flash.wait_states"):
        memory_for_board(board)


def test_a_listed_cache_without_geometry_is_refused(tmp_path):
    board = load_board("st/nucleo-l4r5zi")
    timing = dict(board.memory.timing)
    timing["caches"] = [c for c in timing["caches"] if c["name"] != "flash_dcache"]
    bare = dataclasses.replace(board, memory=dataclasses.replace(board.memory, timing=timing))
    with pytest.raises(CycleModelError, match=r"lacks \['flash_dcache'\]"):
        memory_for_board(bare)


def test_a_board_without_timing_is_refused_naming_the_fields():
    board = load_board("qemu/microbit")
    with pytest.raises(CycleModelError, match="qemu/microbit .*has no memory timing: the cycle "
                       "estimate needs memory.timing with trace_board, flash, sram and caches"):
        memory_for_board(board)


def _memory(caches=(), fetch=5, data=5, width=8) -> MemorySystem:
    return MemorySystem("test/board", "qemu/mps2-an386", 100_000_000, "bus", width, fetch,
                        data, 0, None, None, tuple(caches))


def _acc(*events) -> Accesses:
    kind, mem, addr = zip(*events)
    return Accesses(np.array(kind, np.int8), np.array(mem, np.int8), np.array(addr, np.int64))


def test_no_cache_every_flash_read_waits():
    s = stalls(_memory(), _acc((FETCH, FLASH, 0x0), (FETCH, FLASH, 0x8), (LOAD, FLASH, 0x100),
                               (LOAD, SRAM, 0x2000_0000), (STORE, SRAM, 0x2000_0004)))
    assert s.cycles == {"flash": 15}
    assert s.accesses == {"flash_fetch": 2, "flash_load": 1, "sram_load": 1, "sram_store": 1}


def test_repeats_of_one_line_are_hits():
    s = stalls(_memory(), _acc((FETCH, FLASH, 0x0), (FETCH, FLASH, 0x4), (FETCH, FLASH, 0x0)))
    assert s.cycles == {"flash": 5}


def test_prefetch_hides_the_next_sequential_line_only():
    pre = Cache("flash_prefetch", "flash", "fetch", 8, 8, 1, "doc")
    s = stalls(_memory([pre]), _acc((FETCH, FLASH, 0x0), (FETCH, FLASH, 0x8),
                                    (FETCH, FLASH, 0x10), (FETCH, FLASH, 0x40),
                                    (FETCH, FLASH, 0x8)))
    assert s.cycles == {"flash": 15}  # 0x0, the jump to 0x40 and the one back to 0x8


def test_two_way_lru_keeps_the_two_most_recent_lines_of_a_set():
    # 64 bytes, 16-byte lines, 2 ways: 2 sets; 0x00, 0x20, 0x40 share set 0
    c = Cache("flash_icache", "flash", "fetch", 16, 64, 2, "doc")
    seq = [0x00, 0x20, 0x00, 0x40, 0x00, 0x20]
    s = stalls(_memory([c], width=16), _acc(*[(FETCH, FLASH, a) for a in seq]))
    # miss, miss, hit, miss (evicts 0x20), hit, miss
    assert s.cycles == {"flash": 4 * 5} and s.misses == {"flash_icache": 4}


def test_a_data_cache_serves_data_not_fetches():
    c = Cache("flash_dcache", "flash", "data", 32, 256, 8, "doc")
    s = stalls(_memory([c], fetch=3, data=7),
               _acc((LOAD, FLASH, 0x100), (FETCH, FLASH, 0x0), (LOAD, FLASH, 0x104),
                    (FETCH, FLASH, 0x40), (LOAD, FLASH, 0x200), (LOAD, FLASH, 0x100)))
    assert s.cycles == {"flash": 7 + 3 + 3 + 7}


def test_ram_loads_evict_flash_lines_in_a_cache_serving_all_memories():
    c = Cache("l1_dcache", "all", "data", 32, 64, 1, "doc")  # direct mapped, 2 lines
    s = stalls(_memory([c]), _acc((LOAD, FLASH, 0x100), (LOAD, SRAM, 0x2000_0100),
                                  (LOAD, FLASH, 0x100)))
    assert s.cycles == {"flash": 10}


def test_cache_state_carries_across_kernels():
    c = Cache("flash_icache", "flash", "fetch", 32, 1024, 32, "doc")
    w = Walker(_memory([c]))
    first = w.walk(_acc((FETCH, FLASH, 0x0)))
    second = w.walk(_acc((FETCH, FLASH, 0x4)))
    assert first.cycles == {"flash": 5} and second.total == 0


def _records(*rows):
    return np.array(rows, dtype=np.uint32).reshape(-1, 2)


def test_accesses_are_placed_by_section_and_split_by_row(loops_m4):
    placement = Placement.of(loops_m4, (0x2000_0000, 0x40_0000), None)
    m = _memory(width=4)
    recs = _records([0x08, 8 << 2], [0x44, 1], [0x22, 10 << 2], [0x2000_0000, 1],
                    [0x2000_0004, 2], [0x2040_0000 - 8, 2])
    chunks = accesses(recs, np.array([0, 1]), placement, m, ["k0", "k1"])
    assert [row for row, _ in chunks] == [0, 1]
    k0, k1 = chunks[0][1], chunks[1][1]
    assert k0.kind.tolist() == [FETCH, FETCH, LOAD] and k0.memory.tolist() == [FLASH] * 3
    assert k0.address.tolist() == [0x08, 0x0c, 0x44]  # two 4-byte fetch lines, a literal
    # 0x22..0x2b: three lines from 0x20; then .bss and the stack: SRAM
    assert k1.kind.tolist() == [FETCH] * 3 + [LOAD, STORE, STORE]
    assert k1.memory.tolist() == [FLASH] * 3 + [SRAM] * 3


def test_an_address_outside_every_region_names_it_and_the_kernel(loops_m4):
    placement = Placement.of(loops_m4, (0x2000_0000, 0x40_0000), None)
    recs = _records([0x08, 8 << 2], [0x4000_4000, 1])
    with pytest.raises(CycleModelError, match="accesses 0x40004000 in conv, outside every "
                       "section of the firmware and the trace board's RAM"):
        accesses(recs, np.array([0]), placement, _memory(), ["conv"])


@pytest.mark.qemu
def test_the_plugin_records_blocks_and_data_addresses_in_order(loops_m4, tmp_path):
    """The hand-written loop: reset's literal, then 100 x (3 loads, 1 store) on buffer."""
    if shutil.which("qemu-system-arm") is None or shutil.which("gcc") is None:
        pytest.skip("needs qemu-system-arm and gcc")
    from aot.cycles.program import Program
    program = Program(loops_m4)
    start, stop = program.address_of("reset"), program.address_of("done")
    log = tmp_path / "m.bin"
    subprocess.run(["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-monitor", "none",
                    "-semihosting-config", "enable=on,target=native", "-kernel", str(loops_m4),
                    *plugin_args(plugin_library(tmp_path), log, start, stop)],
                   check=True, timeout=60, capture_output=True)
    recs = read_log(log)
    assert recs[0].tolist() == [start, 8 << 2]
    loop = program.address_of("loads_loop")
    body = recs[(recs[:, 0] == loop) & (recs[:, 1] & 3 == 0)]
    assert len(body) == 100
    k = int(np.flatnonzero(recs[:, 0] == loop)[0])
    assert recs[k + 1:k + 5].tolist() == [[0x2000_0000, 1], [0x2000_0004, 1],
                                          [0x2000_0008, 1], [0x2000_000c, 2]]
    assert recs[-1].tolist()[0] == stop


def test_the_memory_trace_must_describe_the_exec_logs_run():
    from collections import Counter

    from aot.cycles.profile import same_run
    from aot.cycles.trace import Window
    window = Window("model", {"model": Counter({(0x10, 512, 0x20): 2, (0x20, 512, 0x10): 1,
                                                (0x20, 512, 0x90): 1})})
    recs = _records([0x10, 8], [0x2000_0000, 1], [0x20, 8], [0x10, 8], [0x20, 8],
                    [0x90, 4], [0x90, 1])
    assert len(same_run(recs, window, 0x90)) == 5  # up to the stop block
    with pytest.raises(CycleModelError, match="holds 3 blocks of the measured run, the "
                       "execution log 4"):
        same_run(recs[2:], window, 0x90)
    with pytest.raises(CycleModelError, match="and no end"):
        same_run(recs[:5], window, 0x90)


def test_the_plugin_opens_a_window_at_any_of_several_starts():
    args = plugin_args(Path("/p.so"), Path("/o.bin"), [0x300, 0x100, 0x300], 0x200)
    assert args == ("-plugin", "/p.so,out=/o.bin,start=0x100,start=0x300,stop=0x200")
    assert plugin_args(Path("/p.so"), Path("/o.bin"), 0x100, 0x200) == (
        "-plugin", "/p.so,out=/o.bin,start=0x100,stop=0x200")


def test_a_tuning_images_memory_log_splits_into_one_window_per_call(tmp_path):
    """aot.cycles.calls reads the plugin's log window by window as calls finish:
    each window ends with the stop block; a window not finished yet is not one."""
    from aot.cycles.calls import _MemoryLog

    stop = 0x900
    first = [[0x100, 8 << 2], [0x2000_0000, 1], [stop, 4 << 2]]
    second = [[0x300, 4 << 2], [0x2000_0004, 2], [stop, 4 << 2]]
    path = tmp_path / "m.bin"
    path.write_bytes(np.array(first, "<u4").tobytes())
    log = _MemoryLog(path)
    assert log.windows(0, 1, stop)[0].tolist() == first
    with pytest.raises(CycleModelError, match="holds 1 finished calls, expected 2"):
        log.windows(1, 1, stop)
    path.write_bytes(np.array(first + second + [[0x100, 8 << 2]], "<u4").tobytes())
    assert log.windows(1, 1, stop)[0].tolist() == second
    assert len(log.done) == 2   # the third call's open window waits for its stop block
