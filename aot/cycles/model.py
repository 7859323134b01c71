"""The cost model: cycles of executed blocks on one core.

For every (block, next address) pair of a trace window, the block's cycles
are the sum of its instructions' cycles from the core table
(:class:`aot.cycles.cores.CoreTiming`), with these rules between neighbours
inside the block (docs/cycles.md gives the sources):

1. base: ``cycles[class]``, plus ``per_word[class]`` x words for load/store
   multiples (the N of "1 + N"); conditional instructions are counted as
   executed;
2. load pipelining (``load_pipelining``): a load or store single after a load
   single whose loaded register it does not use as an address takes one
   cycle less (LDR, LDR, LDR: 2 + 1 + 1);
3. store buffer (``store_buffer``): a store single with an immediate offset
   takes 1 cycle, 2 when the next instruction is a load or store;
4. address-generation stall (``agu_stall``): a load or store whose base or
   index register the previous data-processing instruction wrote waits;
5. result latency (``load_use_stall``, ``mul_use_stall``): the next
   instruction reads the register a load or multiply writes;
6. pipeline refill: the block's last instruction, when its branch was taken
   (the next block does not start at its fall-through address), adds
   ``refill`` P by kind (direct, register, load into the PC, loop end), plus
   one when the target is a 32-bit instruction at a halfword address, plus
   the board's fetch wait states; loads and stores add the data wait states
   per word;
7. dual issue: ``m7`` pairs adjacent independent instructions (at most one
   memory access, one multiply, no divide, multiple or IT, a branch only
   second); ``16bit`` pairs two adjacent independent 16-bit data-processing
   instructions; a pair costs the larger of its two costs;
8. Helium overlap (``mve_overlap``): a vector instruction after one that used
   the other unit (load/store against arithmetic) overlaps it by that much.

Every instruction takes at least one cycle (unless its table entry is 0).
Blocks interact only where QEMU split straight-line code (a page end, its
block length limit): the rules between the two instructions at the seam are
applied as if there were no seam.  After a taken branch the pipeline starts
empty anyway.  (Dual issue and Helium overlap are not paired across a seam.)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from aot.cycles.cores import CoreTiming, MemoryTiming
from aot.cycles.errors import CycleModelError
from aot.cycles.program import Block, Insn, Program

_LOADS = {"load", "vload"}
_STORES = {"store", "vstore"}
_SINGLE = _LOADS | _STORES
_MEMORY = _SINGLE | {"ldrd", "strd", "ldm", "stm", "vldm", "vstm", "mve_load", "mve_store"}
_MULTIPLIES = {"mul", "mac", "mul_long", "fmac"}
_NO_PAIR = {"div", "ldm", "stm", "vldm", "vstm", "ldrd", "strd", "it", "system", "barrier",
            "fdiv", "branch_table"}


@dataclass
class Estimate:
    """Instructions and estimated cycles of one run (or part of one)."""

    instructions: int = 0
    cycles: float = 0.0
    by_class: Counter = field(default_factory=Counter)  # cycles per timing class

    def add(self, other: Estimate) -> None:
        self.instructions += other.instructions
        self.cycles += other.cycles
        self.by_class.update(other.by_class)


class CostModel:
    """Prices executed blocks of ``program`` on ``core`` with ``memory``'s wait states."""

    def __init__(self, program: Program, core: CoreTiming, memory: MemoryTiming | None = None):
        self.program = program
        self.core = core
        self.memory = memory or MemoryTiming()
        self._cache: dict[tuple[int, int, int], tuple[int, tuple[tuple[str, float], ...]]] = {}
        self._seams: dict[tuple[int, int, int], tuple[tuple[str, float], ...]] = {}

    def estimate(self, edges: Counter) -> Estimate:
        """Cycles of a trace window's ``(block, limit, next address) -> count`` histogram."""
        total = Estimate()
        by_class: Counter = Counter()
        for (pc, limit, nxt), count in edges.items():
            n, costs = self._edge(pc, limit, nxt)
            total.instructions += n * count
            for cls, cycles in costs:
                by_class[cls] += cycles * count
            for cls, delta in self._seam(pc, limit, nxt):
                by_class[cls] += delta * count
        total.by_class = by_class
        total.cycles = sum(by_class.values())
        return total

    def _edge(self, pc: int, limit: int, nxt: int):
        key = (pc, limit, nxt)
        hit = self._cache.get(key)
        if hit is None:
            block = self.program.block(pc, limit, nxt)
            taken = nxt != block.end
            if taken and not block.insns[-1].ends_block:
                raise CycleModelError(
                    f"the trace left the block at 0x{pc:08x} for 0x{nxt:08x} although its last "
                    f"instruction ({block.insns[-1].text}) does not branch: the block rule of "
                    "aot.cycles.program does not match this QEMU")
            wide_target = taken and nxt % 4 == 2 and self.program.is_wide(nxt)
            costs = self.block_costs(block, taken, wide_target)
            hit = self._cache[key] = (len(block.insns), tuple(costs))
        return hit

    def _seam(self, pc: int, limit: int, nxt: int) -> tuple[tuple[str, float], ...]:
        """Corrections where QEMU split straight-line code between ``pc``'s block and the next."""
        key = (pc, limit, nxt)
        hit = self._seams.get(key)
        if hit is None:
            a = self.program.block(pc, limit, nxt)
            hit = ()
            if nxt == a.end and not a.insns[-1].ends_block:
                b = self.program.block(nxt).insns  # its own end does not matter here
                before = a.insns[-2] if len(a.insns) > 1 else None
                last, first = a.insns[-1], b[0]
                after = b[1] if len(b) > 1 else None
                hit = ((last.cls, self._insn(last, before, first) - self._insn(last, before, None)),
                       (first.cls, self._insn(first, last, after) - self._insn(first, None, after)))
            self._seams[key] = hit
        return hit

    def block_costs(self, block: Block, taken: bool,
                    wide_unaligned_target: bool = False) -> list[tuple[str, float]]:
        """(class, cycles) of each instruction of ``block`` executed once."""
        core, insns = self.core, block.insns
        costs = [self._insn(i, insns[k - 1] if k else None,
                            insns[k + 1] if k + 1 < len(insns) else None)
                 for k, i in enumerate(insns)]
        if core.dual_issue != "none":
            costs = self._dual_issue(insns, costs)
        if core.mve_overlap:
            costs = self._mve_overlap(insns, costs)
        last = insns[-1]
        if taken:
            p = core.refill[_refill_kind(last)] + self.memory.fetch_wait_states
            if wide_unaligned_target:
                p += core.refill["unaligned_wide_target"]
            costs[-1] += p
        return [(i.cls, c) for i, c in zip(insns, costs)]

    def _insn(self, i: Insn, prev: Insn | None, nxt: Insn | None) -> float:
        core = self.core
        try:
            base = c = core.cycles[i.cls]
        except KeyError:
            raise CycleModelError(f"{core.name} has no timing for {i.text!r} (class {i.cls}) "
                                  f"at 0x{i.address:08x}: is the firmware built for this core "
                                  f"({core.isa})?") from None
        c += core.per_word.get(i.cls, 0) * i.words
        if i.cls in _STORES and core.store_buffer and not i.register_offset:
            c = 1 + (1 if nxt is not None and nxt.cls in _MEMORY else 0)
        if prev is not None:
            loaded = prev.writes - prev.address_regs
            if (core.load_pipelining and i.cls in _SINGLE and prev.cls in _LOADS
                    and not loaded & i.address_regs):
                c -= 1
            if (core.agu_stall and i.cls in _MEMORY and prev.cls not in _MEMORY
                    and prev.writes & i.address_regs):
                c += core.agu_stall
            if core.load_use_stall and prev.cls in _LOADS | {"ldrd", "ldm"} and loaded & i.reads:
                c += core.load_use_stall
            if core.mul_use_stall and prev.cls in _MULTIPLIES and prev.writes & i.reads:
                c += core.mul_use_stall
        if i.cls in _MEMORY and self.memory.data_wait_states:
            c += self.memory.data_wait_states * (i.words if i.cls in ("ldm", "stm", "vldm", "vstm")
                                                 else 2 if i.cls in ("ldrd", "strd") else 1)
        return max(c, min(base, 1))  # a table's 0 (a folded IT) stays 0

    def _dual_issue(self, insns, costs: list[float]) -> list[float]:
        out = list(costs)
        k = 0
        while k + 1 < len(insns):
            a, b = insns[k], insns[k + 1]
            if self._pairs(a, b):
                out[k], out[k + 1] = max(costs[k], costs[k + 1]), 0
                k += 2
            else:
                k += 1
        return out

    def _pairs(self, a: Insn, b: Insn) -> bool:
        if a.writes & b.reads or a.writes & b.writes or a.ends_block:
            return False
        if self.core.dual_issue == "16bit":
            return a.size == b.size == 2 and a.cls == b.cls == "alu"
        if a.cls in _NO_PAIR or b.cls in _NO_PAIR or a.cls.startswith(("mve", "branch")):
            return False
        if a.cls in _MEMORY and b.cls in _MEMORY:
            return False
        return not (a.cls in _MULTIPLIES and b.cls in _MULTIPLIES)

    def _mve_overlap(self, insns, costs: list[float]) -> list[float]:
        out = list(costs)
        for k in range(1, len(insns)):
            a, b = insns[k - 1].cls, insns[k].cls
            memory_a, memory_b = a in ("mve_load", "mve_store"), b in ("mve_load", "mve_store")
            if a.startswith("mve") and b.startswith("mve") and memory_a != memory_b:
                out[k] = max(out[k] - self.core.mve_overlap, 1)
        return out


def _refill_kind(last: Insn) -> str:
    if last.cls == "branch_loop":
        return "loop"
    if last.cls == "branch_table" or (last.writes_pc and last.cls in ("load", "ldm")):
        return "load"
    if last.cls in ("branch", "branch_call"):
        return "direct"
    return "register"
