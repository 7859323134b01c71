"""QEMU's exec log into windows of (block, next address) counts, and the same on real QEMU."""

from __future__ import annotations

import shutil
from collections import Counter

import pytest

from aot.cycles import CostModel, CycleModelError, Program, TraceParser, get_core
from aot.cycles.session import trace_elf


def _line(pc: int, cflags: int = 0xFF020200) -> bytes:
    return f"Trace 0: 0x7f0000001000 [00800408/{pc:08x}/00000110/{cflags:08x}] f\n".encode()


def test_windows_open_at_a_start_and_close_at_the_stop():
    parser = TraceParser({0x100: "run"}, stop=0x900, markers={0x200: "k0", 0x300: "k1"})
    for pc in (0x50, 0x100, 0x200, 0x200, 0x210, 0x300, 0x900, 0x60, 0x200):
        parser.feed(_line(pc))
    (window,) = parser.windows
    assert window.name == "run"
    assert window.segments == {
        "run": Counter({(0x100, 512, 0x200): 1}),
        "k0": Counter({(0x200, 512, 0x200): 1, (0x200, 512, 0x210): 1,
                       (0x210, 512, 0x300): 1}),
        "k1": Counter({(0x300, 512, 0x900): 1}),
    }


def test_a_block_qemu_did_not_start_is_dropped():
    parser = TraceParser({0x100: "run"}, stop=0x900)
    for line in (_line(0x100), _line(0x140), b"Stopped execution of TB chain before 0x7f [0140]\n",
                 _line(0x140), _line(0x900)):
        parser.feed(line)
    assert parser.windows[0].edges() == Counter({(0x100, 512, 0x140): 1,
                                                 (0x140, 512, 0x900): 1})


def test_the_block_length_limit_comes_from_cflags():
    parser = TraceParser({0x100: "run"}, stop=0x900)
    for line in (_line(0x100, 0xFF020203), _line(0x900)):
        parser.feed(line)
    assert parser.windows[0].edges() == Counter({(0x100, 3, 0x900): 1})


def test_a_garbled_line_is_an_error():
    with pytest.raises(CycleModelError, match="unexpected QEMU exec log line"):
        TraceParser({}, stop=0).feed(b"Trace 0: 0x1 [zzzzzzzz/zzzzzzzz/zzzzzzzz/zzzzzzzz] f\n")


def test_a_missing_qemu_is_a_clear_error(loops_m4):
    with pytest.raises(CycleModelError, match="qemu-nonexistent is not installed"):
        trace_elf(loops_m4, "mps2-an386", TraceParser({}, stop=0), qemu="qemu-nonexistent")


@pytest.mark.slow
@pytest.mark.qemu
def test_the_traced_loops_cost_exactly_what_the_trm_gives(loops_m4):
    """The whole chain on QEMU: trace, blocks from the ELF, M4 table.

    loads_loop: 99 x 11 + 9 = 1098 (test_model.py), BX LR 1 + 2, then NOP and
    BL 1 + 1 + 2 in the caller; stack_and_divide: 6 + 1 + 12 + 9 = 28, then
    NOP and BL 4.  Instructions: 800 + 1 + 2 and 4 + 2.
    """
    if shutil.which("qemu-system-arm") is None:
        pytest.skip("needs qemu-system-arm")
    program = Program(loops_m4)
    parser = TraceParser({program.address_of("loads_loop"): "loops"},
                         stop=program.address_of("done"),
                         markers={program.address_of("stack_and_divide"): "stack"})
    trace_elf(loops_m4, "mps2-an386", parser)
    (window,) = parser.windows
    model = CostModel(program, get_core("cortex-m4"))
    loops = model.estimate(window.segments["loops"])
    stack = model.estimate(window.segments["stack"])
    assert (loops.instructions, loops.cycles) == (803, 1098 + 3 + 4)
    assert (stack.instructions, stack.cycles) == (6, 28 + 4)
