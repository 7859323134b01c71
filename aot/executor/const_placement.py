"""Default placement: the constants read most per byte copied from waiting flash to RAM.

On a board whose flash data reads wait (wait states, or external flash behind
an XIP cache), ``aot compile --board B`` copies the hottest kernels' constants
into the RAM the memory plan leaves, as ``--memory-regions ram+const`` would
(:func:`aot.executor.regions.place_constants`: a ``.data`` section every C
start-up copies from flash).  Nothing changes on a board whose flash costs
what SRAM does (the emulated mps2 boards) or whose record has no memory timing.

**Price.**  The board record's memory system, summarised by
:meth:`aot.target.tags.Memory.flash_reads`: a data read of flash that misses
waits ``data_cycles`` and brings ``data_line_bytes``, so each byte read from
flash costs ``data_cycles / data_line_bytes`` cycles, each byte read from SRAM
``sram_wait_states / 4`` (one word a load).  A kernel reads each byte of its
constants ``reads`` times per inference: once when they fit the data cache in
front of the flash (the re-reads hit), else
:func:`aot.executor.regions.constant_reuse` times (the re-reads miss again).
Its estimated gain in RAM is ``bytes * reads * (flash - sram cost per byte)``
cycles per inference; kernels go hottest per byte first (gain / bytes), each
whole or not at all, while the room lasts.  The copy at start-up is not counted:
it is paid once, not per inference.

**Room.**  ``ram`` less the stack (``memory.model_ram_bytes``), less what the
model owns there (workspace with scratch, state, caller buffers), less a reserve
for the rest of the firmware: :data:`RESERVE_BYTES` for the runtime and the
application plus one copy of the model's inputs and outputs (the application
keeps its own; the RPC firmware's descriptor has one), and at most what
``--memory-budget`` leaves.  A kernel that does not fit stays in flash; the
report names the region and the bytes missing (:meth:`ConstantPlacement.lines`).

The same estimate prices an explicit ``+const`` region; ``--memory-regions``
replaces the default, ``--no-placement`` turns it off.

**Code.**  Where the record also lets code run from ``ram``
(``memory.code_in_ram_bytes``), the hottest kernels' code takes what the
constants leave once the code is measured (:mod:`aot.executor.code_placement`);
its result is :attr:`ConstantPlacement.code`, reported with the constants'.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aot.executor.code_placement import CodePlacement
from aot.executor.memory import MemoryPlan
from aot.executor.regions import (MAIN, PlanRegion, constant_footprint, constant_reuse,
                                  copyable, place_constants)

#: Bytes of ``ram`` (beyond the stack the record reserves and a copy of the inputs
#: and outputs) the default placement leaves free for the runtime's and the
#: application's own data.
RESERVE_BYTES = 16 * 1024

#: Bytes an SRAM load reads (its wait states are per access).
WORD_BYTES = 4


@dataclass(frozen=True)
class Move:
    """One kernel's constants: ``bytes`` (as placed, each array aligned), the
    region they were copied to (``""``: left in flash) and the estimated
    cycles per inference RAM saves on them."""

    kernel: str
    bytes: int
    region: str
    cycles_saved: float

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "bytes": self.bytes, "region": self.region or "flash",
                "cycles_saved": round(self.cycles_saved)}


@dataclass(frozen=True)
class ConstantPlacement:
    """What the default placement did: priced with ``board``'s memory, it had
    ``room`` bytes of ``region`` after the plan and the ``reserve`` bytes left to
    the rest of the firmware; ``moves`` lists every kernel whose constants would
    pay in RAM, hottest per byte first."""

    board: str
    region: str
    room: int
    reserve: int
    moves: tuple[Move, ...] = field(default=())
    #: the kernels' code run from RAM (None: the record allows none, or the code
    #: was not measured)
    code: CodePlacement | None = None

    @property
    def homes(self) -> dict[str, str]:
        """``{kernel: region}`` of the kernels whose constants were copied."""
        return {m.kernel: m.region for m in self.moves if m.region}

    @property
    def moved(self) -> list[Move]:
        return [m for m in self.moves if m.region]

    @property
    def left(self) -> list[Move]:
        return [m for m in self.moves if not m.region]

    @property
    def cycles_saved(self) -> float:
        return sum(m.cycles_saved for m in self.moved)

    @property
    def free(self) -> int:
        """Bytes of ``region`` left after the plan, the reserve and the constants."""
        return max(self.room - sum(m.bytes for m in self.moved), 0)

    def lines(self) -> list[str]:
        """The compile report's lines: what moved and the estimated gain, and
        when something did not fit, the region and the bytes it lacked."""
        moved, left = self.moved, self.left
        out = []
        if moved:
            out.append(f"placement ({self.board}'s flash waits): the constants of "
                       f"{_kernels(moved)}, {sum(m.bytes for m in moved)} bytes, copied to "
                       f"{self.region} at start-up, about {round(self.cycles_saved):,} cycles "
                       "per inference saved")
        if left:
            need = sum(m.bytes for m in left)
            free = self.free
            out.append(f"placement: the constants of {_kernels(left)}, {need} bytes, about "
                       f"{round(sum(m.cycles_saved for m in left)):,} cycles per inference, "
                       f"stay in flash: {self.region} has {free} bytes left after the plan "
                       f"and the {self.reserve}-byte reserve, {need - free} bytes short")
        return out + (self.code.lines() if self.code is not None else [])

    def to_json(self) -> dict:
        return {"board": self.board, "region": self.region, "room_bytes": self.room,
                "reserve_bytes": self.reserve, "cycles_saved": round(self.cycles_saved),
                "moved": [m.to_json() for m in self.moved],
                "left_in_flash": [m.to_json() for m in self.left],
                "code": self.code.to_json() if self.code is not None else None}


#: Kernels a report line names before it counts the rest.
NAMED = 6


def _kernels(moves: list[Move]) -> str:
    names = [m.kernel for m in moves]
    more = f" and {len(names) - NAMED} more" if len(names) > NAMED else ""
    return f"{len(names)} kernel{'s' if len(names) > 1 else ''} ({', '.join(names[:NAMED])}{more})"


def reads_per_byte(kernel, data_cache_bytes: int) -> float:
    """Times per inference each byte of ``kernel``'s constants is read from flash:
    once when they fit the data cache in front of it, else
    :func:`aot.executor.regions.constant_reuse`."""
    if constant_footprint(kernel) <= data_cache_bytes:
        return 1.0
    return constant_reuse(kernel)


def saving_per_byte(reads) -> float:
    """Cycles a byte read once from RAM instead of flash saves (``reads``:
    :meth:`aot.target.tags.Memory.flash_reads`; module docstring)."""
    return reads.data_cycles / reads.data_line_bytes - reads.sram_wait_states / WORD_BYTES


def pays(board) -> bool:
    """Whether ``board``'s record says a flash data read costs more than an SRAM one."""
    reads = board.memory.flash_reads() if board.memory is not None else None
    return reads is not None and saving_per_byte(reads) > 0


def place_default(plan: MemoryPlan, kernels, board, *, ram_used: int, io_copy_bytes: int,
                  ram_budget: int | None = None, priced=None) -> ConstantPlacement | None:
    """Copy the constants that pay most into what ``board``'s ``ram`` leaves
    (module docstring); records the bytes in ``plan.region_constants``.
    ``ram_used`` is what the model owns in ``ram``, ``io_copy_bytes`` its inputs'
    and outputs' bytes (reserved for the application's copy).

    ``priced`` is the board whose memory prices the reads and whose RAM also
    bounds the room (default ``board``): ``aot profile`` compiles for the
    emulated board of a real board's core and places as for the real one.
    None when the priced board's flash does not wait (nothing is placed)."""
    priced = priced or board
    if not pays(priced) or board.memory is None:
        return None
    reads = priced.memory.flash_reads()
    per_byte = saving_per_byte(reads)
    gain = {k.name: constant_footprint(k) * reads_per_byte(k, reads.data_cache_bytes)
            * per_byte for k in copyable(kernels)}
    paying = [k for k in kernels if gain.get(k.name, 0) > 0]
    reserve = RESERVE_BYTES + io_copy_bytes
    room = min(board.memory.model_ram_bytes, priced.memory.model_ram_bytes) - reserve
    if ram_budget is not None:
        room = min(room, ram_budget)
    ram = board.memory.ram
    region = PlanRegion(MAIN, ram.origin, max(room, 0), ram.speed, const=True)

    def heat(k) -> float:  # cycles saved per byte moved
        return gain[k.name] / max(constant_footprint(k), 1)
    homes = place_constants(plan, paying, [region], ram_used=ram_used, heat=heat)
    ranked = sorted(paying, key=lambda k: (-heat(k), constant_footprint(k), k.name))
    moves = tuple(Move(k.name, constant_footprint(k), homes.get(k.name, ""), gain[k.name])
                  for k in ranked)
    return ConstantPlacement(priced.tag, MAIN, max(room - ram_used, 0), reserve, moves)
