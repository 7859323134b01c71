"""Default placement, the code half: the hottest kernels run from RAM where flash waits.

On a board whose flash reads wait (:func:`aot.executor.const_placement.pays`)
and whose record lets code run from ``ram`` (``memory.code_in_ram_bytes``:
the RP2040, whose SRAM is executable, and the ESP32-C3, whose SRAM1 is
also seen on the instruction bus as IRAM; both read flash through a 16 KiB
cache), ``aot compile --board B`` puts both functions of the hottest
loop-IR kernels (the exported one and its implementation; their helpers are
always inlined) in the section ``.aot_ram_text.<kernel>`` (``AOT_RAM_CODE``
of ``aot_kernel_target.h``, :func:`code_section`).  The port's linker script
places those sections in RAM with their image in flash: the Cortex-M ports at
the start of ``.data``, copied by the start-up with the initialised data; the
esp32c3 port in IRAM, a segment the ESP-IDF boot loader loads.  A call between
flash and RAM is out of a Thumb ``BL``'s reach (+-16 MiB; the RP2040's flash
and SRAM are 256 MiB apart): GNU ld puts a long-branch veneer beside the
caller (RISC-V calls are ``auipc`` + ``jalr``, +-2 GiB).

**Which.**  Hottest per byte first: a kernel's MACs per byte of its code
(the MACs stand for the loop iterations that fetch its instructions again
and again), then smaller first; each whole or not at all, while the room
lasts.  A kernel's code bytes are those of its file's ``.text`` sections,
compiled as the model's code size is measured (``aot compile``'s code size):
without that measurement (``measure_code=False``, a missing toolchain) no
code moves.  Hand-written kernels (``-libs``) keep their code in flash.

**Room.**  The smaller of ``memory.code_in_ram_bytes`` and what the
constants' placement left of ``ram`` (after the plan, its reserve and the
constants copied).  A kernel that does not fit stays in flash; the report
names the region and the bytes missing (:meth:`CodePlacement.lines`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: The input sections of the kernels' code run from RAM (the ports' linker
#: scripts collect ``.aot_ram_text.*`` into ``.data``).
SECTION_PREFIX = ".aot_ram_text"


def code_section(kernel: str) -> str:
    """The input section of ``kernel``'s functions when they run from RAM."""
    return f"{SECTION_PREFIX}.{kernel}"


@dataclass(frozen=True)
class CodeMove:
    """One kernel's code: ``bytes`` of ``.text``, the region it runs from
    (``""``: flash) and its MACs per inference (its heat)."""

    kernel: str
    bytes: int
    region: str
    macs: int

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "bytes": self.bytes, "region": self.region or "flash",
                "macs": self.macs}


@dataclass(frozen=True)
class CodePlacement:
    """What the code half of the default placement did: ``room`` bytes of
    ``region`` were left after the plan and the constants, at most ``limit``
    (``memory.code_in_ram_bytes``); ``moves`` lists every loop-IR kernel,
    hottest per byte first."""

    region: str
    room: int
    limit: int
    moves: tuple[CodeMove, ...] = field(default=())

    @property
    def moved(self) -> list[CodeMove]:
        return [m for m in self.moves if m.region]

    @property
    def left(self) -> list[CodeMove]:
        return [m for m in self.moves if not m.region]

    @property
    def bytes(self) -> int:
        """Code bytes copied to RAM at start-up."""
        return sum(m.bytes for m in self.moved)

    def lines(self) -> list[str]:
        """The compile report's lines: the kernels whose code runs from RAM, and
        those left in flash with the region and the bytes it lacked."""
        out = []
        if self.moved:
            out.append(f"placement: the code of {_kernels(self.moved)}, {self.bytes} bytes, "
                       f"runs from {self.region} (copied from flash at boot)")
        if self.left:
            need = sum(m.bytes for m in self.left)
            free = max(self.room - self.bytes, 0)
            out.append(f"placement: the code of {_kernels(self.left)}, {need} bytes, stays in "
                       f"flash: {self.region} has {free} bytes left for code (at most "
                       f"{self.limit}, memory.code_in_ram_bytes), {need - free} bytes short")
        return out

    def to_json(self) -> dict:
        return {"region": self.region, "room_bytes": self.room, "limit_bytes": self.limit,
                "bytes": self.bytes, "moved": [m.to_json() for m in self.moved],
                "left_in_flash": [m.to_json() for m in self.left]}


#: Kernels a report line names before it counts the rest.
NAMED = 6


def _kernels(moves: list[CodeMove]) -> str:
    names = [m.kernel for m in moves]
    more = f" and {len(names) - NAMED} more" if len(names) > NAMED else ""
    return f"{len(names)} kernel{'s' if len(names) > 1 else ''} ({', '.join(names[:NAMED])}{more})"


def place_code(kernels, code_bytes: dict[str, int], *, region: str, room: int,
               limit: int) -> CodePlacement:
    """Choose the kernels whose code runs from ``region`` (module docstring):
    ``code_bytes`` is each loop-IR kernel's ``.text`` bytes by name, ``room``
    the bytes the region has left, ``limit`` the record's
    ``memory.code_in_ram_bytes``."""
    sized = [k for k in kernels if k.func is not None and code_bytes.get(k.name)]
    ranked = sorted(sized, key=lambda k: (-(k.macs or 0) / code_bytes[k.name],
                                          code_bytes[k.name], k.name))
    free = max(min(room, limit), 0)
    moves = []
    for k in ranked:
        size = code_bytes[k.name]
        fits = size <= free
        free -= size if fits else 0
        moves.append(CodeMove(k.name, size, region if fits else "", k.macs or 0))
    return CodePlacement(region, max(min(room, limit), 0), limit, tuple(moves))
