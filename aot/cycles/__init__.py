"""Cycle estimates for Cortex-M cores from an execution trace of the real firmware.

The recipe (docs/cycles.md)::

    program = Program(elf)                      # ELF code (pyelftools) decoded by capstone
    parser  = TraceParser(starts, stop, marks)  # QEMU -d exec,nochain lines -> block histograms
    model   = CostModel(program, core_for_board(board))
    model.estimate(window.edges())              # -> instructions, cycles
    Walker(memory_for_board(board)).walk(accesses)  # memory stalls (aot.cycles.memtrace)

:func:`aot.cycles.profile.profile_model` does all of it for a model on an
emulated board: one traced run of the whole model, split per kernel
(``aot profile``).
"""

from aot.cycles.cores import (
                              CoreTiming,
                              MemoryTiming,
                              core_for_board,
                              cores,
                              get_core,
)
from aot.cycles.errors import CycleModelError
from aot.cycles.memory import MemorySystem, Walker, memory_for_board
from aot.cycles.model import CostModel, Estimate
from aot.cycles.program import Block, Insn, Program
from aot.cycles.trace import TraceParser, TraceReader, Window

__all__ = [
    "Block", "CoreTiming", "CostModel", "CycleModelError", "Estimate", "Insn", "MemorySystem",
    "MemoryTiming", "Program", "TraceParser", "TraceReader", "Walker", "Window",
    "core_for_board", "cores", "get_core", "memory_for_board",
]
