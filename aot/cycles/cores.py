"""Per-core instruction timings (``cores/*.toml``).

Each core is one data file: cycles per timing class (:data:`aot.cycles.isa.CLASSES`),
the ``N`` of "1 + N" load/store multiples, the pipeline refill ``P`` after a
taken branch, and the pipeline rules the cost model (:mod:`aot.cycles.model`)
applies.  A file says where its numbers come from and whether they are an
``approximate`` model.  :func:`core_for_board` finds the core of a board
record by its ``cpu`` string and refuses a board without one.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from aot.cycles.errors import CycleModelError
from aot.cycles.isa import CLASSES

_REFILLS = ("direct", "register", "load", "loop", "unaligned_wide_target")
_RULES = ("load_pipelining", "store_buffer", "agu_stall", "load_use_stall", "mul_use_stall",
          "dual_issue", "mve_overlap")
_DUAL_ISSUE = ("none", "16bit", "m7")


@dataclass(frozen=True)
class CoreTiming:
    """One core's timing table (see ``aot/cycles/cores/cortex-m4.toml`` for the fields)."""

    name: str
    cpus: tuple[str, ...]
    isa: str
    approximate: bool
    note: str
    cycles: dict[str, int]
    per_word: dict[str, float]
    refill: dict[str, int]
    load_pipelining: bool
    store_buffer: bool
    agu_stall: int
    load_use_stall: int
    mul_use_stall: int
    dual_issue: str
    mve_overlap: int


@dataclass(frozen=True)
class MemoryTiming:
    """Uniform wait states the cost model adds without looking at addresses.

    ``fetch_wait_states`` are paid on every pipeline refill (a taken branch
    fetches from the code memory); ``data_wait_states`` on every word a load
    or store moves.  ``aot profile`` leaves both at zero and prices the
    board's memory from the addresses instead (:mod:`aot.cycles.memory`);
    these are for hand-made experiments (bench/validate_cycles.py).
    """

    fetch_wait_states: int = 0
    data_wait_states: int = 0
    note: str = "zero wait states in the core table's pricing"


def _load_core(name: str, text: str) -> CoreTiming:
    data = tomllib.loads(text)
    try:
        cycles = dict(data["cycles"])
        unknown = set(cycles) - set(CLASSES)
        if unknown:
            raise CycleModelError(f"core table {name}: unknown classes {sorted(unknown)}; "
                                  f"known: {', '.join(CLASSES)}")
        refill = {k: int(data["refill"][k]) for k in _REFILLS}
        rules = {k: data["rules"][k] for k in _RULES}
        if rules["dual_issue"] not in _DUAL_ISSUE:
            raise CycleModelError(f"core table {name}: dual_issue must be one of "
                                  f"{', '.join(_DUAL_ISSUE)}")
        return CoreTiming(name=data["name"], cpus=tuple(data["cpus"]), isa=data["isa"],
                          approximate=bool(data["approximate"]), note=data["note"],
                          cycles=cycles, per_word=dict(data.get("per_word", {})),
                          refill=refill, **rules)
    except KeyError as err:
        raise CycleModelError(f"core table {name} lacks {err.args[0]!r}") from None


@cache
def cores() -> dict[str, CoreTiming]:
    """Every core with a timing table, by name (``cortex-m4``)."""
    found = {}
    for entry in sorted(resources.files("aot.cycles").joinpath("cores").iterdir(),
                        key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            core = _load_core(entry.name, entry.read_text())
            if core.name in found or core.name != entry.name.removesuffix(".toml"):
                raise CycleModelError(f"core table {entry.name} is named {core.name!r}")
            found[core.name] = core
    return found


def get_core(name: str) -> CoreTiming:
    try:
        return cores()[name]
    except KeyError:
        raise CycleModelError(f"no cycle model for core {name!r}; cores with one: "
                              f"{', '.join(cores())}") from None


def core_for_board(board) -> CoreTiming:
    """The timing table of ``board``'s CPU, or a clear refusal."""
    for core in cores().values():
        if board.cpu in core.cpus:
            return core
    known = ", ".join(c for core in cores().values() for c in core.cpus)
    raise CycleModelError(f"{board.tag} has no cycle model: its CPU {board.cpu!r} has no "
                          f"timing table (CPUs with one: {known}); aot run still gives its "
                          "exact instruction count")
