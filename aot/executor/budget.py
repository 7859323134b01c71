"""A RAM budget: the plan with the fewest instructions among those that fit.

The planner has a few free choices that trade instructions for RAM:

* **inputs and outputs in the workspace** (``io_in_workspace``): their bytes
  are reused once the layers are done with them, and the caller's own
  buffers leave the RAM count; ``P_run`` then copies a caller's buffer in
  and out (unless the caller wrote through ``P_input_<x>()``), one copy of
  every input and output byte per run;
* **in-place writes** and **overlapping outputs** (``inplace``, ``overlap``):
  an output shares bytes with an input that dies at its kernel; the two
  parameters lose ``restrict`` (docs/memory.md measures +0.0 % instructions
  on the shared models);
* the **placement algorithm** (every one is always tried, the smallest wins:
  it costs nothing at run time).

:func:`choose_plan` tries the combinations the caller left open in the order
of :data:`OPTIONS` (fewest instructions first: no aliasing, no copies) and
keeps the first whose RAM fits the budget.  The RAM counted (:func:`ram_bytes`)
is what the compiled model owns: the workspace with the kernels' shared
scratch, the caller's input and output buffers (none when they are in the
workspace) and the state (SVDF, LSTM variables).  The stack is not counted:
it is measured only in firmware (``aot verify``, :mod:`aot.firmware.stack`),
and a board reserves it apart (``memory.stack_bytes``).

With memory regions (:mod:`aot.executor.regions`) the budget counts what
the model owns in ``ram``: the workspace buffers left there, its scratch,
the caller's buffers, the state and the constants copied there; each plan
option is split with ``ram`` capped to what the budget leaves, and the other
regions hold the rest, each within its own size.

Not searched (the project has no such choice yet): a different operator
order, or kernels that use less stack for more instructions.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from aot.executor.memory import MemoryPlan, MemoryPlanError, _short, alive_bytes

_UNITS = {"": 1, "K": 1024, "KB": 1024, "KIB": 1024,
          "M": 1024 * 1024, "MB": 1024 * 1024, "MIB": 1024 * 1024}


class MemoryBudgetError(MemoryPlanError):
    """No plan fits the RAM budget, or the budget is not a size.

    ``tried`` lists ``(PlanOption, RAM bytes)`` for every option tried (empty
    for a malformed budget)."""

    def __init__(self, message: str, tried=()) -> None:
        super().__init__(message)
        self.tried = list(tried)


def parse_memory_size(text: str | int) -> int:
    """``"64K"``, ``"1M"``, ``"65536"`` (or an int) -> bytes; K and M are 1024 and 1024**2
    (``KiB``, ``KB``, ``MiB``, ``MB`` mean the same; case does not matter)."""
    if isinstance(text, bool):
        raise MemoryBudgetError(f"memory budget {text!r}: give a size in bytes")
    if isinstance(text, int):
        value = text
    else:
        m = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", str(text))
        unit = m.group(2).upper() if m else None
        if m is None or unit not in _UNITS:
            raise MemoryBudgetError(
                f"memory budget {text!r} is not a size: give bytes (65536) or a number with "
                "K or M (64K = 65536 bytes, 1M = 1048576)")
        value = int(m.group(1)) * _UNITS[unit]
    if value <= 0:
        raise MemoryBudgetError(f"memory budget {text!r}: give a positive number of bytes")
    return value


@dataclass(frozen=True)
class PlanOption:
    """One combination of the planner's choices."""

    io_in_workspace: bool
    inplace: bool
    overlap: bool

    @property
    def label(self) -> str:
        alias = ("overlaps" if self.overlap else "in place only") if self.inplace \
            else "no aliasing"
        return f"{'i/o inside' if self.io_in_workspace else 'caller i/o'}, {alias}"


#: Every combination, fewest instructions first: copies of the inputs and
#: outputs cost more than dropping ``restrict`` on an aliased pair.
OPTIONS = tuple(PlanOption(io, inplace, overlap)
                for io in (False, True)
                for inplace, overlap in ((False, False), (True, False), (True, True)))


def open_options(io_in_workspace: bool | None, inplace: bool | None,
                 overlap: bool | None) -> list[PlanOption]:
    """The combinations of :data:`OPTIONS` that agree with what the caller fixed
    (None: left to the budget).  ``inplace=False`` also rules out overlaps."""
    return [o for o in OPTIONS
            if (io_in_workspace is None or o.io_in_workspace == io_in_workspace)
            and (inplace is None or o.inplace == inplace)
            and (overlap is None or o.overlap == (overlap and o.inplace))
            and not (o.overlap and not o.inplace)]


def ram_bytes(plan: MemoryPlan, scratch_bytes: int = 0) -> int:
    """RAM the compiled model owns under ``plan``: workspace (the plan, then the
    aligned shared scratch), the caller's input/output buffers and the state."""
    a = plan.alignment
    workspace = plan.workspace_bytes
    if scratch_bytes:
        workspace = -(-workspace // a) * a + scratch_bytes
    return workspace + plan.io_bytes + plan.state_bytes


@dataclass
class BudgetChoice:
    """What :func:`choose_plan` picked: the option, its plan and RAM, and every
    option tried with its RAM (in the order tried)."""

    budget: int
    option: PlanOption
    plan: MemoryPlan
    ram: int
    tried: list[tuple[PlanOption, int]]
    copy_bytes: int        # bytes P_run copies in and out per run (i/o inside)
    aliased_pairs: int     # kernel argument pairs that lose ``restrict``
    given: int | None = None  # the budget asked for (more than ``budget`` when a board capped it)

    def cost(self) -> str:
        """The instruction cost of the choice, as far as it is known."""
        parts = []
        if self.option.io_in_workspace and self.copy_bytes:
            parts.append(f"P_run copies {self.copy_bytes} bytes of inputs and outputs per run "
                         "unless they are written and read through P_input_/P_output_")
        if self.aliased_pairs:
            parts.append(f"{self.aliased_pairs} aliased kernel argument pairs lose restrict "
                         "(+0.0 % instructions measured on the shared models)")
        return "; ".join(parts) or "none (no copies, no aliasing)"

    def summary(self) -> str:
        others = ", ".join(f"{o.label} {r}" for o, r in self.tried)
        capped = (f" (the board leaves {self.budget} of the {self.given} asked)"
                  if self.given is not None and self.given != self.budget else "")
        return (f"memory budget {self.budget} bytes{capped}: chose {self.option.label} "
                f"({self.plan.algorithm}), RAM {self.ram} bytes (workspace "
                f"{self.plan.workspace_bytes}, caller i/o {self.plan.io_bytes}, state "
                f"{self.plan.state_bytes}){_outside(self.plan)}; instruction cost: "
                f"{self.cost()}; tried: {others}")

    def to_json(self) -> dict:
        return {"budget_bytes": self.budget,
                "asked_bytes": self.given if self.given is not None else self.budget,
                "ram_bytes": self.ram,
                "io_in_workspace": self.option.io_in_workspace,
                "inplace": self.option.inplace, "overlap": self.option.overlap,
                "algorithm": self.plan.algorithm, "copy_bytes": self.copy_bytes,
                "aliased_pairs": self.aliased_pairs,
                **({"other_regions": dict(self.plan.regions)} if self.plan.regions else {}),
                "tried": [{"option": o.label, "ram_bytes": r} for o, r in self.tried]}


def _outside(plan: MemoryPlan) -> str:
    """The workspace bytes a split plan keeps in regions other than ram, which a
    budget does not count (each is bounded by its own size)."""
    if not plan.regions:
        return ""
    return "; outside the budget: " + ", ".join(f"{r} {n} bytes"
                                                for r, n in plan.regions.items())


def peak_tensors(plan: MemoryPlan, n: int = 4) -> str:
    """The step holding the most workspace bytes and its largest live buffers:
    ``step 3 fused_3_conv2d holds 16000 bytes: 'a' (8000 bytes, steps 2-3), ...``."""
    alive = alive_bytes(plan)
    inner = [b for b in plan.buffers if not b.external]
    if not alive:
        return "no workspace buffers"
    step = max(range(len(alive)), key=lambda s: (alive[s], -s))
    live = sorted((b for b in inner if b.start <= step <= b.end), key=lambda b: -b.size)
    names = ", ".join(f"{_short(b.name, 60)!r} ({b.size} bytes, written at step {b.start} "
                      f"{plan.steps[b.start]})" for b in live[:n])
    more = f" and {len(live) - n} more" if len(live) > n else ""
    caller = [b for b in plan.buffers if b.external]
    io = (f"; caller buffers {', '.join(f'{b.name!r} ({b.size} bytes)' for b in caller[:n])}"
          if caller else "")
    held = plan.workspace_bytes + sum(plan.regions.values())  # every region's bytes
    shared = (f", sharing bytes where a kernel's output overlaps its dying input, in "
              f"{held}" if alive[step] > held else "")
    return (f"at step {step} ({plan.steps[step]}) {alive[step]} bytes are live{shared}: "
            f"{names}{more}{io}")


def choose_plan(plan_for: Callable[[PlanOption], MemoryPlan], options: list[PlanOption],
                budget: int, *, scratch_bytes: int = 0, io_copy_bytes: int = 0,
                aliased_pairs=None, where: str = "the model",
                board_bytes: int | None = None) -> BudgetChoice:
    """The first of ``options`` whose plan (``plan_for(option)``) fits ``budget``
    bytes of RAM (:func:`ram_bytes`), or :class:`MemoryBudgetError` naming the
    smallest RAM reached, the budget, and the tensors live at that plan's peak.

    ``io_copy_bytes`` are the bytes of the graph's inputs and outputs (what
    ``P_run`` copies with them in the workspace); ``aliased_pairs(plan)``
    counts the kernel argument pairs the plan aliases (default: the plan's
    in-place and overlap aliases).  ``board_bytes`` (the RAM the board leaves
    a model) caps the budget when it is smaller."""
    if not options:
        raise MemoryBudgetError("no memory plan option is left open for the budget")
    given = budget
    if board_bytes is not None and board_bytes < budget:
        budget = board_bytes
    count = aliased_pairs or (lambda p: sum(1 for *_, how in p.aliases
                                            if how in ("in place", "overlap")))
    tried: list[tuple[PlanOption, int]] = []
    smallest: tuple[int, PlanOption, MemoryPlan] | None = None
    for option in options:
        plan = plan_for(option)
        ram = ram_bytes(plan, scratch_bytes)
        tried.append((option, ram))
        if smallest is None or ram < smallest[0]:
            smallest = (ram, option, plan)
        if ram <= budget:
            copies = io_copy_bytes if option.io_in_workspace else 0
            return BudgetChoice(budget, option, plan, ram, tried, copies, count(plan), given)
    ram, option, plan = smallest
    each = ", ".join(f"{o.label} {r}" for o, r in tried)
    scratch = f", kernel scratch {scratch_bytes}" if scratch_bytes else ""
    capped = f" (the board's RAM less its stack; {given} asked)" if budget != given else ""
    raise MemoryBudgetError(
        f"{where} does not fit the memory budget of {budget} bytes{capped}: the smallest plan "
        f"reachable needs {ram} bytes ({option.label}, {plan.algorithm}: workspace "
        f"{plan.workspace_bytes}{scratch}, caller i/o {plan.io_bytes}, state "
        f"{plan.state_bytes}{_outside(plan)}; {ram - budget} bytes over). The peak: "
        f"{peak_tensors(plan)}. "
        f"Plans tried: {each}. Raise the budget to at least {ram} bytes, or use a smaller "
        "model.", tried)

