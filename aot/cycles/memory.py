"""A board's memory system, read from its record, and the stalls it adds to a trace.

The board record's ``memory.timing`` (docs/boards.md, each number with its
manual section) says per memory how long an access waits and which caches
and accelerators stand in front; the flash wait states themselves are
``memory.flash.wait_states`` (one home), or for flash without such a setting
(XIP over QSPI, nRF52) ``memory.timing.flash.fetch_cycles``.
:func:`memory_for_board` turns that into a :class:`MemorySystem` and refuses
a board whose record lacks it, naming the missing fields.

:func:`stalls` walks an ordered stream of instruction-fetch and data
accesses (:class:`Accesses`, from :mod:`aot.cycles.memtrace`) through the
caches and returns the cycles the core waits, per memory.  The rules
(docs/cycles.md, "Memory stalls"):

1. every memory access is placed in ``flash``, ``sram`` or ``tcm`` by the
   caller (by ELF section, not by raw address);
2. a fetch or data read from flash looks up, nearest first, every cache
   serving flash for its kind (``fetch``/``data``/``both``; ``all`` serves
   every memory); a hit costs nothing, a miss fills the line in every cache
   it looked up;
3. a fetch that misses the caches but is the next sequential flash line
   after the previous fetch hits the prefetch buffer (``flash_prefetch``)
   and costs nothing: the prefetch is assumed to have finished, an
   optimistic bound for straight-line code faster than the flash;
4. otherwise a flash fetch waits ``fetch_cycles`` (the wait states), a
   flash data read ``data_cycles``;
5. SRAM and TCM accesses wait their ``wait_states`` each (zero on every
   board recorded); a data cache serving them only sees their loads (it
   allocates on read), so they can evict flash lines.

Caches are set associative with LRU replacement (``ways`` = lines:
fully associative).  Consecutive accesses to one line are folded before
the walk (the second is always a hit), which keeps the walk linear over
a few million accesses.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from aot.cycles.errors import CycleModelError

#: Memory kinds of an access, as :class:`Accesses` codes them.
FLASH, SRAM, TCM = 0, 1, 2
MEMORIES = ("flash", "sram", "tcm")
#: Access kinds.
FETCH, LOAD, STORE = 0, 1, 2


@dataclass(frozen=True)
class Cache:
    """One cache or prefetch buffer in front of a memory."""

    name: str
    serves: str          # flash, sram or all
    access: str          # fetch, data or both
    line_bytes: int
    bytes: int
    ways: int
    source: str

    @property
    def prefetch(self) -> bool:
        return self.name == "flash_prefetch"

    @property
    def sets(self) -> int:
        return max(1, self.bytes // self.line_bytes // self.ways)

    def holds(self, memory: int, kind: int) -> bool:
        serves = self.serves == "all" or self.serves == MEMORIES[memory]
        if kind == FETCH:
            return serves and self.access in ("fetch", "both")
        return serves and self.access in ("data", "both")


@dataclass(frozen=True)
class MemorySystem:
    """What an access costs on one board at its clock (see the module docstring)."""

    board: str
    trace_board: str
    clock_hz: int | None
    flash_bus: str
    flash_width: int
    fetch_cycles: int
    data_cycles: int
    sram_wait_states: int
    tcm_wait_states: int | None
    tcm_region: str | None
    caches: tuple[Cache, ...]
    sources: tuple[str, ...] = field(default=(), compare=False)

    @property
    def zero_wait(self) -> bool:
        """No access ever waits (the emulated boards)."""
        return not (self.fetch_cycles or self.data_cycles or self.sram_wait_states
                    or self.tcm_wait_states)

    def describe(self) -> str:
        parts = [f"flash {self.fetch_cycles}/{self.data_cycles} cycles fetch/data "
                 f"({self.flash_bus})", f"SRAM {self.sram_wait_states} wait states"]
        if self.tcm_wait_states is not None:
            parts.append(f"TCM {self.tcm_wait_states}")
        parts += [f"{c.name} {c.bytes} B/{c.line_bytes} B lines/{c.ways}-way"
                  if not c.prefetch else f"{c.name} {c.line_bytes} B" for c in self.caches]
        return ", ".join(parts)

    def to_json(self) -> dict:
        return {"board": self.board, "trace_board": self.trace_board,
                "flash": {"fetch_cycles": self.fetch_cycles, "data_cycles": self.data_cycles,
                          "width_bytes": self.flash_width, "bus": self.flash_bus},
                "sram_wait_states": self.sram_wait_states,
                "tcm_wait_states": self.tcm_wait_states,
                "caches": [{"name": c.name, "serves": c.serves, "access": c.access,
                            "bytes": c.bytes, "line_bytes": c.line_bytes, "ways": c.ways}
                           for c in self.caches]}


def memory_for_board(board) -> MemorySystem:
    """The memory system of a board record, or a refusal naming the missing fields."""
    mem = board.memory
    timing = None if mem is None else mem.timing
    where = f"{board.tag} ({board.path})" if getattr(board, "path", None) else board.tag
    if timing is None:
        raise CycleModelError(
            f"{where} has no memory timing: the cycle estimate needs memory.timing with "
            "trace_board, flash, sram and caches (docs/boards.md), and memory.flash.wait_states "
            "or memory.timing.flash.fetch_cycles; it never assumes zero wait states")
    flash = timing["flash"]
    ws = mem.flash.wait_states
    if ws is not None and "fetch_cycles" in flash:
        raise CycleModelError(f"{where}: memory.timing.flash.fetch_cycles repeats "
                              "memory.flash.wait_states; give the flash's wait states once")
    if ws is None and "fetch_cycles" not in flash:
        raise CycleModelError(f"{where}: the flash read time is missing: give "
                              "memory.flash.wait_states or memory.timing.flash.fetch_cycles")
    reads = mem.flash_reads()
    fetch, data = reads.fetch_cycles, reads.data_cycles
    listed = set(mem.caches or ())
    caches = []
    for c in timing["caches"]:
        if c["name"] not in listed:
            raise CycleModelError(f"{where}: memory.timing.caches describes {c['name']!r}, "
                                  f"which memory.caches does not list ({sorted(listed)})")
        line = c["line_bytes"]
        size = c.get("bytes", line)
        ways = c.get("ways", 1)
        if size % (line * ways):
            raise CycleModelError(f"{where}: cache {c['name']}: {size} bytes is not a "
                                  f"multiple of {line}-byte lines x {ways} ways")
        caches.append(Cache(c["name"], c["serves"], c["access"], line, size, ways,
                            c["source"]))
    missing = listed - {c.name for c in caches}
    if missing:
        raise CycleModelError(f"{where}: memory.timing.caches lacks {sorted(missing)} that "
                              "memory.caches lists: give each one's geometry and source")
    tcm = timing.get("tcm")
    if tcm is not None and tcm.get("region") is not None:
        mem.pool(tcm["region"])  # refuses an unknown pool by name
    sources = [flash["source"], timing["sram"]["source"], *(c.source for c in caches)]
    return MemorySystem(
        board=board.tag, trace_board=timing["trace_board"], clock_hz=board.clock_hz,
        flash_bus=flash["bus"], flash_width=flash["width_bytes"], fetch_cycles=fetch,
        data_cycles=data, sram_wait_states=timing["sram"]["wait_states"],
        tcm_wait_states=None if tcm is None else tcm["wait_states"],
        tcm_region=None if tcm is None else tcm.get("region"), caches=tuple(caches),
        sources=tuple(sources))


@dataclass
class Accesses:
    """An ordered stream of accesses: parallel arrays of ``kind`` (FETCH, LOAD,
    STORE), ``memory`` (FLASH, SRAM, TCM) and ``address`` (a fetch: the first
    byte of a flash read, in the order the core asks for them)."""

    kind: np.ndarray
    memory: np.ndarray
    address: np.ndarray

    def __len__(self) -> int:
        return len(self.kind)


@dataclass
class Stalls:
    """Cycles the core waits, per memory (``flash``, ``sram``, ``tcm``), and cache misses."""

    cycles: Counter = field(default_factory=Counter)
    misses: Counter = field(default_factory=Counter)
    accesses: Counter = field(default_factory=Counter)

    @property
    def total(self) -> float:
        return float(sum(self.cycles.values()))

    def add(self, other: Stalls) -> None:
        self.cycles.update(other.cycles)
        self.misses.update(other.misses)
        self.accesses.update(other.accesses)

    def to_json(self) -> dict:
        return {"cycles": {k: int(v) for k, v in sorted(self.cycles.items())},
                "cache_misses": dict(sorted(self.misses.items())),
                "accesses": dict(sorted(self.accesses.items()))}


class _Lru:
    """One set-associative LRU cache's tags (a dict per set keeps the order)."""

    def __init__(self, cache: Cache):
        self.shift = cache.line_bytes.bit_length() - 1
        self.nsets = cache.sets
        self.ways = cache.ways
        self.sets: list[dict[int, None]] = [{} for _ in range(self.nsets)]

    def lookup(self, address: int) -> bool:
        """Whether ``address`` hits; a miss allocates its line (evicting the LRU one)."""
        line = address >> self.shift
        tags = self.sets[line % self.nsets]
        if line in tags:
            del tags[line]
            tags[line] = None
            return True
        if len(tags) >= self.ways:
            del tags[next(iter(tags))]
        tags[line] = None
        return False


class Walker:
    """Carries cache state across the accesses of consecutive kernels of one run."""

    def __init__(self, memory: MemorySystem):
        self.memory = memory
        self.caches = [(c, _Lru(c)) for c in memory.caches if not c.prefetch]
        self.prefetch = next((c for c in memory.caches if c.prefetch), None)
        self.last_fetch_line: int | None = None
        grains = [memory.flash_width] + [c.line_bytes for c in memory.caches]
        self.grain = min(grains)

    def walk(self, acc: Accesses) -> Stalls:
        """The stalls of ``acc``, continuing from the previous call's cache state."""
        m = self.memory
        out = Stalls()
        if not len(acc):
            return out
        kind, memory = acc.kind.astype(np.int64), acc.memory.astype(np.int64)
        for mem in (FLASH, SRAM, TCM):
            for k, name in ((FETCH, "fetch"), (LOAD, "load"), (STORE, "store")):
                n = int(np.count_nonzero((memory == mem) & (kind == k)))
                if n:
                    out.accesses[f"{MEMORIES[mem]}_{name}"] += n
        ram_waits = {SRAM: m.sram_wait_states, TCM: m.tcm_wait_states or 0}
        for mem, waits in ram_waits.items():
            if waits:
                out.cycles[MEMORIES[mem]] += waits * int(np.count_nonzero(memory == mem))
        # what remains to walk: flash accesses, and loads a cache in front of RAM sees
        ram_cached = any(c.serves in ("sram", "all") for c, _ in self.caches)
        keep = (memory == FLASH) | ((kind == LOAD) & ram_cached)
        kind, memory = kind[keep], memory[keep]
        line = acc.address.astype(np.int64)[keep] >> (self.grain.bit_length() - 1)
        if len(line) > 1:  # fold repeats of one line by the same kind of access
            same = (line[1:] == line[:-1]) & (kind[1:] == kind[:-1]) & (memory[1:] == memory[:-1])
            first = np.concatenate(([True], ~same))
            kind, memory, line = kind[first], memory[first], line[first]
        prefetch_shift = None
        if self.prefetch is not None:
            prefetch_shift = self.prefetch.line_bytes.bit_length() - 1
        grain_shift = self.grain.bit_length() - 1
        caches = self.caches
        fetch_cycles, data_cycles = m.fetch_cycles, m.data_cycles
        flash_stall = 0
        misses = out.misses
        last = self.last_fetch_line
        for k, mem, ln in zip(kind.tolist(), memory.tolist(), line.tolist()):
            address = ln << grain_shift
            hit = False
            for cache, lru in caches:
                if cache.holds(mem, k):
                    if lru.lookup(address):
                        hit = True
                        break
                    misses[cache.name] += 1
            if mem != FLASH or k == STORE:
                continue
            if k == FETCH:
                pline = None if prefetch_shift is None else address >> prefetch_shift
                if not hit:
                    if pline is not None and last is not None and pline == last + 1:
                        hit = True
                    else:
                        flash_stall += fetch_cycles
                        if pline is not None:
                            misses["flash_prefetch"] += 1
                last = pline if pline is not None else last
            elif not hit:
                flash_stall += data_cycles
        self.last_fetch_line = last
        if flash_stall:
            out.cycles["flash"] += flash_stall
        return out


def stalls(memory: MemorySystem, acc: Accesses) -> Stalls:
    """The stalls of one stream from cold caches (see :class:`Walker`)."""
    return Walker(memory).walk(acc)
