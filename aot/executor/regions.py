"""Several memory regions: the workspace's buffers split over a board's RAMs,
the hottest in the fastest.

A board record ranks its data memories (``memory.ram`` and ``memory.pools``,
``speed = 1`` the fastest; docs/boards.md).  Given the regions a model may use
(:func:`parse_regions`: ``"ram:4K,psram"``, each with the bytes it may take),
:func:`split_regions` re-places a finished :class:`MemoryPlan`:

1. **Heat.**  :func:`buffer_heat` estimates the bytes each buffer moves per
   inference: the writing kernel stores it once, and each reading kernel
   loads it ``max(1, MACs / elements)`` times per element (a convolution
   reads each input element once per MAC that uses it: about
   ``kh * kw * out_channels / groups`` times), so
   ``heat = size * (1 + sum over readers of max(1, macs / elements))``.
   Buffers are taken hottest per byte first (``heat / size``: the reuse
   factor), then larger first.
2. **Assignment.**  Each buffer goes to the fastest region (by ``speed``,
   unranked regions last in the order given) where every placement
   algorithm of the planner, run on that region's buffers so far plus this
   one, still fits the region's capacity.  Buffers alive at the same step
   only conflict inside one region.  Graph inputs and outputs stay in the
   main workspace (``ram``), where the header's ``P_input_<x>()`` point: they
   are assigned first, having no choice.
3. **Placement.**  Each region is placed on its own (the smallest of every
   algorithm, both directions with overlap pairs, as :func:`plan_memory`),
   an overlap pair split over two regions simply shares nothing, and
   :func:`aot.executor.memory.check_plan` checks every region.

The main workspace is the buffers in ``ram``: the ``P_workspace`` array (or
the caller's, ``P_run_with_workspace``).  Every other region is a static array
``P_region_<name>`` in the section ``.aot_region.<name>``, which the artifact's
linker script ``codegen/P_regions.ld`` puts in that memory (NOLOAD).

A region marked ``+const`` (``"ram:40K+const"``) also takes the hottest
kernels' constants in what its workspace buffers leave (:func:`place_constants`),
copied from flash at start-up: in ``ram`` as ``.data`` (every C start-up copies
it), in a pool through the linker script's load address and the start-up
code's ``.aot_copy_table`` (:func:`constant_section`, :func:`linker_script`).

A region marked ``+stack`` holds the firmware's stack (the Cortex-M ports'
start-up reads its top from the linker script); the plan takes that region's
size less the stack.

Limits: the assignment is greedy (it may leave a region emptier than an
exact packing would).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from aot.executor.budget import MemoryBudgetError, parse_memory_size
from aot.executor.memory import (ALGORITHMS, Buffer, MemoryPlan, MemoryPlanError, _short,
                                 check_plan)

MAIN = "ram"
FLAGS = ("const", "stack")   # the flags of a region in --memory-regions ("ram+const")
MARK_BYTES = 8       # the word a pool's copied constants start with, aligned (the C's check)


class MemoryRegionError(MemoryPlanError):
    """The regions asked for do not match the board, or the buffers do not fit them."""


@dataclass(frozen=True)
class PlanRegion:
    """A board region the plan may use: ``capacity`` bytes of it, its speed rank;
    ``const``: kernel constants may be copied there at start-up
    (:func:`place_constants`); ``stack``: the firmware's stack lives there."""

    name: str
    origin: int
    capacity: int
    speed: int | None
    const: bool = False
    stack: bool = False


def parse_regions(spec, board, *, cortex_m_startup: bool = False) -> list[PlanRegion]:
    """``"ram:4K,psram"`` (or a list of ``"name[:bytes][+const][+stack]"``) -> regions
    of ``board``.

    Each name is a data memory of the board record (``ram`` or a pool, not
    ``flash``); the size (bytes or K/M, default the whole region less the
    stack where it lives) is what the plan may take there; ``+const`` lets the
    hottest kernel constants be copied into what the workspace leaves of it
    (:func:`place_constants`); ``+stack`` puts the firmware's stack
    (``memory.stack_bytes``) in it instead of at the top of ``ram``
    (:func:`linker_script`).  Refused with the board's regions and sizes: an
    unknown region, a size above the region's, a region named twice, an
    unknown flag, two stacks, a board without a memory map, a pool flag
    its port's start-up cannot honour: both need ``cortex_m_startup``, whether
    the board's runtime port uses aot's Cortex-M start-up and linker script
    (:func:`aot.export.cortex_m_startup`), which copy the sections listed in
    ``.aot_copy_table`` and take the stack's top from a later script."""
    items = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else list(spec)
    mem = getattr(board, "memory", None)
    if mem is None:
        where = board.tag if board is not None else "a bare target"
        raise MemoryRegionError(f"memory regions {spec!r}: {where} has no memory map; "
                                "compile for a board whose record lists its memories")
    data = [r for r in mem.regions() if r is not mem.flash]
    known = ", ".join(f"{r.name} ({_capacity(mem, r)} bytes at 0x{r.origin:08x}"
                      + (f", speed {r.speed})" if r.speed else ", unranked)") for r in data)
    regions: list[PlanRegion] = []
    for item in items:
        m = re.fullmatch(r"([a-z][a-z0-9_]*)(?::([^+]+))?((?:\+[a-z]+)*)", item or "")
        if m is None:
            raise MemoryRegionError(f"memory region {item!r}: expected NAME[:BYTES][+const]"
                                    f"[+stack] (e.g. ram:48K or dtcm:64K+const); {board.tag} "
                                    f"has {known}")
        name, size, flags = m.group(1), m.group(2), m.group(3).split("+")[1:]
        for flag in flags:
            if flag not in FLAGS:
                raise MemoryRegionError(f"memory region {item!r}: unknown flag '+{flag}'; "
                                        f"the flags are {', '.join('+' + f for f in FLAGS)}")
            if flags.count(flag) > 1:
                raise MemoryRegionError(f"memory region {item!r}: '+{flag}' is given twice")
        region = next((r for r in data if r.name == name), None)
        if region is None:
            raise MemoryRegionError(f"{board.tag} has no data memory {name!r}: it has {known}")
        if any(r.name == name for r in regions):
            raise MemoryRegionError(f"memory region {name!r} is given twice")
        stack = "stack" in flags and region is not mem.ram  # ram: where the port puts it
        if "stack" in flags and any(r.stack for r in regions):
            raise MemoryRegionError(f"memory region {item!r}: the stack is already in "
                                    f"{next(r.name for r in regions if r.stack)}; give +stack once")
        if stack and not cortex_m_startup:
            raise MemoryRegionError(
                f"not supported yet: the stack in {name} (+stack) on {board.tag}: the linker "
                f"script of its port {board.port!r} does not let a model move it; drop +stack")
        full = _capacity(mem, region) - (mem.stack_bytes if stack else 0)
        if full <= 0:
            raise MemoryRegionError(f"memory region {item!r}: {name} has {region.length} bytes, "
                                    f"not more than the {mem.stack_bytes}-byte stack")
        try:
            capacity = full if size is None else parse_memory_size(size)
        except MemoryBudgetError as err:
            raise MemoryRegionError(f"memory region {item!r}: {err}") from None
        if capacity > full:
            raise MemoryRegionError(
                f"memory region {item!r} asks for {capacity} bytes but {name} on {board.tag} "
                f"has {full}" + (f" ({region.length} less the {mem.stack_bytes}-byte stack)"
                                 if region is mem.ram or stack else ""))
        if "const" in flags and region is not mem.ram and not cortex_m_startup:
            raise MemoryRegionError(
                f"not supported yet: constants copied to {name} (+const) on {board.tag}: the "
                f"start-up code of its port {board.port!r} does not walk .aot_copy_table; "
                "use ram+const, or drop +const")
        regions.append(PlanRegion(name, region.origin, capacity, region.speed,
                                  const="const" in flags, stack="stack" in flags))
    if not regions:
        raise MemoryRegionError(f"no memory region given; {board.tag} has {known}")
    return regions


def check_reach(regions: list[PlanRegion], board, cores: int) -> None:
    """Refuse a region that one of the first ``cores`` cores of ``board`` cannot reach:
    a kernel split across cores reads and writes its buffers from each of them
    (``cores.shared`` in the board record, docs/boards.md).  On one core nothing is
    shared and every region the record has is fine."""
    if cores == 1:
        return
    for core in range(cores):
        reach = board.cores.reach(core)
        if reach is None:
            continue
        for region in regions:
            if region.name not in reach:
                raise MemoryRegionError(
                    f"memory region {region.name!r} is not reached by core {core} of "
                    f"{board.tag}, which reaches {', '.join(reach)}; with --cores {cores} "
                    "place the workspace in those")


def _capacity(mem, region) -> int:
    return mem.model_ram_bytes if region is mem.ram else region.length


def buffer_heat(plan: MemoryPlan, kernels) -> dict[int, float]:
    """``id(buffer)`` -> estimated bytes it moves per inference (module docstring)."""
    reuse: dict[str, float] = {}
    for k in kernels:
        for p in k.params:
            if p.role == "input":
                elems = max(p.nbytes // np.dtype(p.dtype).itemsize, 1)
                reuse[p.tensor] = reuse.get(p.tensor, 0.0) + max(1.0, (k.macs or 0) / elems)
    heat = {}
    for b in plan.buffers:
        factor = 1.0 + sum(reuse.get(t.name, 0.0) for t in b.tensors)
        heat[id(b)] = b.size * factor
    return heat


def constant_reuse(kernel) -> float:
    """Times each byte of ``kernel``'s constants is read per inference, estimated
    as ``max(1, MACs / elements of its largest constant)`` (a convolution
    reads its weights once per output pixel, a dense layer once)."""
    if not kernel.constants:
        return 0.0
    largest = max(c.data.size for c in kernel.constants)
    return max(1.0, (kernel.macs or 0) / max(largest, 1))


def constant_footprint(kernel) -> int:
    """Bytes ``kernel``'s constant arrays take in a section (each aligned)."""
    a = kernel.constant_alignment
    return sum(-(-c.data.nbytes // a) * a for c in kernel.constants)


def copyable(kernels) -> list:
    """The kernels whose constants can be copied to RAM at start-up: the loop-IR
    kernels with constants (SVDF and LSTM too: one call of their header's
    helper); external kernels keep theirs in flash."""
    return [k for k in kernels if k.func is not None and k.constants
            and getattr(k, "codegen", "aot") == "aot"]


def place_constants(plan: MemoryPlan, kernels, regions: list[PlanRegion], *,
                    ram_used: int, heat=constant_reuse) -> dict[str, str]:
    """Choose the kernels whose constants are copied at start-up into a region
    marked ``+const``: ``{kernel name: region}``; records the bytes per region
    in ``plan.region_constants``.

    Candidates are the :func:`copyable` kernels among ``kernels``, hottest per
    byte first (``heat(kernel)``, by default :func:`constant_reuse`), then
    smaller first; each goes whole into the
    fastest ``+const`` region whose capacity still has room after the
    workspace buffers placed there (``ram``: ``ram_used``, the workspace with
    its scratch, the state and the caller's buffers) and the constants chosen
    so far (in a pool, plus the 8-byte mark the entry function checks); a
    kernel that fits nowhere stays in flash."""
    targets = sorted((r for r in regions if r.const),
                     key=lambda r: (r.speed is None, r.speed or 0))
    used = {r.name: (ram_used if r.name == MAIN else plan.regions.get(r.name, 0))
            for r in targets}
    chosen: dict[str, str] = {}
    totals: dict[str, int] = {}
    for k in sorted(copyable(kernels), key=lambda k: (-heat(k), constant_footprint(k),
                                                      k.name)):
        for r in targets:
            # A pool's copied constants also hold the mark word the entry checks.
            size = constant_footprint(k) + (MARK_BYTES if r.name != MAIN
                                            and r.name not in totals else 0)
            if used[r.name] + size <= r.capacity:
                used[r.name] += size
                totals[r.name] = totals.get(r.name, 0) + size
                chosen[k.name] = r.name
                break
    plan.region_constants = totals
    return chosen


def constant_section(name: str, region: str) -> str:
    """The input section of ``name``'s constants copied into ``region``: in
    ``ram`` a ``.data`` section (every C start-up copies ``.data`` from flash),
    elsewhere ``.aot_const.<name>.<region>``, which the artifact's linker
    script loads in flash and the start-up code's copy table brings there."""
    return f".data.aot_const.{name}" if region == MAIN else f".aot_const.{name}.{region}"


def _pack(buffers: list[Buffer], alignment: int) -> tuple[int, str]:
    """Place ``buffers`` with every algorithm (both directions when they hold an
    overlap pair); leave the smallest placement in their offsets."""
    if not buffers:
        return 0, "empty"
    members = {id(b) for b in buffers}
    pairs = any(id(x) in members for b in buffers for x, *_ in b.over.values())
    best = None
    for name, place in ALGORITHMS.items():
        for top_down in ((False, True) if pairs else (False,)):
            size = place(buffers, alignment, top_down)
            if best is None or size < best[0]:
                best = (size, f"{name} (top down)" if top_down else name,
                        [b.offset for b in buffers])
    for b, off in zip(buffers, best[2]):
        b.offset = off
    return best[0], best[1]


def split_regions(plan: MemoryPlan, graph, regions: list[PlanRegion],
                  heat: dict[int, float]) -> MemoryPlan:
    """Assign and place ``plan``'s workspace buffers (of ``graph``) over
    ``regions`` (module docstring); the plan is changed in place, checked, and
    returned."""
    order = sorted(regions, key=lambda r: (r.speed is None, r.speed or 0))
    inner = [b for b in plan.buffers if not b.external]
    io = {id(t) for t in (*graph.inputs, *graph.outputs)}
    caller = {id(b) for b in inner if any(id(t) in io for t in b.tensors)}
    placed: dict[str, list[Buffer]] = {r.name: [] for r in order}
    main = next((r for r in order if r.name == MAIN), None)
    if caller and main is None:
        names = ", ".join(repr(b.name) for b in inner if id(b) in caller)
        raise MemoryRegionError(f"the inputs and outputs ({names}) are in the workspace, which "
                                "is in ram: add ram to the regions, or compile with "
                                "--no-io-in-workspace")
    # The inputs and outputs have no choice: they take ram first, then the rest by heat.
    ranked = sorted(inner, key=lambda b: (id(b) not in caller,
                                          -(heat[id(b)] / max(b.size, 1)), -b.size, b.start))
    for b in ranked:
        choices = [main] if id(b) in caller else order
        for r in choices:
            trial = placed[r.name] + [b]
            if _pack(trial, plan.alignment)[0] <= r.capacity:
                placed[r.name].append(b)
                b.region = "" if r.name == MAIN else r.name
                break
        else:
            used = ", ".join(f"{r.name} {_pack(placed[r.name], plan.alignment)[0]} of "
                             f"{r.capacity}" for r in choices)
            raise MemoryRegionError(
                f"buffer {_short(b.name, 60)!r} ({b.size} bytes, steps {b.start}-{b.end}) fits "
                f"no memory region: bytes placed so far: {used}. Give the regions more bytes "
                "or add one")
    sizes = {}
    for r in order:
        size, algorithm = _pack(placed[r.name], plan.alignment)
        if r.name == MAIN:
            plan.workspace_bytes, plan.algorithm = size, algorithm
            plan.candidates = {algorithm: size}
        elif placed[r.name]:
            sizes[r.name] = size
    if main is None:
        plan.workspace_bytes, plan.candidates = 0, {"empty": 0}
    plan.regions = sizes
    plan.region_speeds = {r.name: r.speed for r in order}
    kept = [a for a in plan.aliases if a[2] != "overlap"]
    for y in inner:
        for x, _, (out, src) in y.over.values():
            if (x.region == y.region and x.offset < y.offset + y.size
                    and y.offset < x.offset + x.size):
                kept.append((out, src, "overlap"))
    plan.aliases = kept
    check_plan(plan)
    return plan


def needs_linker_script(plan: MemoryPlan) -> bool:
    """Whether the plan uses a memory the port's linker script does not place:
    workspace buffers, copied constants or the stack in a region other than ``ram``."""
    return (bool(plan.regions) or any(r != MAIN for r in plan.region_constants)
            or plan.stack_region not in ("", MAIN))


def split_for_budget(plan: MemoryPlan, graph, regions: list[PlanRegion],
                     heat: dict[int, float], ram_budget: int | None,
                     scratch_bytes: int = 0) -> MemoryPlan:
    """:func:`split_regions` under a RAM budget: ``ram`` holds at most what the
    budget leaves after the caller's buffers, the state and the kernels'
    scratch, so the other regions take the rest.  When no split fits that
    (the buffers that must stay in ram exceed it), the plan is split with
    ``ram``'s own size: its RAM then exceeds the budget, which the budget's
    search records as not fitting."""
    if ram_budget is None:
        return split_regions(plan, graph, regions, heat)
    a = plan.alignment
    room = ram_budget - plan.io_bytes - plan.state_bytes - (scratch_bytes + a if scratch_bytes
                                                            else 0)
    capped = [replace(r, capacity=max(min(r.capacity, room), 0)) if r.name == MAIN else r
              for r in regions]
    offsets = [(b, b.offset) for b in plan.buffers]
    try:
        return split_regions(plan, graph, capped, heat)
    except MemoryRegionError:
        for b, offset in offsets:
            b.offset, b.region = offset, ""
        return split_regions(plan, graph, regions, heat)


def linker_script(name: str, plan: MemoryPlan, board) -> str:
    """``codegen/<name>_regions.ld``: the board's regions the plan uses as GNU ld
    ``MEMORY``; per region the constants copied there (loaded in the port's
    ``FLASH``, with the symbols ``__aot_<name>_const_<r>_start``, ``_end`` and
    ``_load`` the start-up copy table reads), the NOLOAD array of its
    workspace buffers and, with ``+stack``, the stack (``_estack`` and
    ``__aot_stack_limit``, which override the port script's).  Link it after
    the port's script (``-T link.ld -T codegen/<name>_regions.ld``)."""
    return _script(name, [(name, plan)], list(plan.regions), board)


def group_linker_script(group: str, plans: dict[str, MemoryPlan], board) -> str:
    """``codegen/<group>_regions.ld`` of a model group (the models' own scripts
    would each declare the same memories): every model's copied constants, the
    group's shared array per region (``<group>_region_<r>``, in
    ``.aot_region.<r>``) and the stack; as :func:`linker_script`."""
    regions = list(dict.fromkeys(r for p in plans.values() for r in p.regions))
    return _script(group, list(plans.items()), regions, board)


def _script(name: str, plans: list[tuple[str, MemoryPlan]], arrays: list[str], board) -> str:
    consts = [(m, r) for m, p in plans for r in p.region_constants if r != MAIN]
    stack = next(((p.stack_region, p.stack_bytes) for _, p in plans
                  if p.stack_region not in ("", MAIN)), None)
    alignment = max(max((p.alignment for _, p in plans), default=4), 4)
    used = list(dict.fromkeys([*(r for _, r in consts), *arrays, *([stack[0]] if stack else [])]))
    lines = [f"/* Generated by aot: the memory regions of {name} outside ram: its workspace "
             "buffers, the", " * constants copied there at start-up and the stack "
             "(docs/memory.md).", " * Link after the port's script: -T link.ld -T "
             f"codegen/{name}_regions.ld */", "MEMORY", "{"]
    for region in used:
        r = board.memory.pool(region)
        lines.append(f"    AOT_{region.upper()} (rw) : ORIGIN = 0x{r.origin:08x}, "
                     f"LENGTH = 0x{r.length:08x}")
    lines += ["}", "SECTIONS", "{"]
    for region in used:
        for model, _ in (c for c in consts if c[1] == region):
            sym = f"__aot_{model}_const_{region}"
            section = constant_section(model, region)
            lines += [f"    {section} : ALIGN(8)", "    {", f"        {sym}_start = .;",
                      f"        KEEP(*({section}))", "        . = ALIGN(4);",
                      f"        {sym}_end = .;", f"    }} > AOT_{region.upper()} AT > FLASH",
                      f"    {sym}_load = LOADADDR({section});"]
        if region in arrays:
            lines.append(f"    .aot_region.{region} (NOLOAD) : ALIGN({alignment}) "
                         f"{{ KEEP(*(.aot_region.{region})) }} > AOT_{region.upper()}")
        if stack and region == stack[0]:
            # The port's script set these for the top of its RAM; the later
            # assignment wins: the vector table's initial SP is _estack.
            lines += ["    .aot_stack (NOLOAD) : ALIGN(8)", "    {",
                      "        __aot_stack_limit = .;",
                      f"        . = . + 0x{stack[1]:x};", "        . = ALIGN(8);",
                      "        _estack = .;", f"    }} > AOT_{region.upper()}"]
    lines.append("}")
    return "\n".join(lines) + "\n"
