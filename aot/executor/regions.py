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

Limits: the assignment is greedy (it may leave a region emptier than an
exact packing would); constants stay in flash and the stack where the port's
linker script puts it (the top of ``ram``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from aot.executor.memory import (ALGORITHMS, Buffer, MemoryPlan, MemoryPlanError, _short,
                                 check_plan)

MAIN = "ram"


class MemoryRegionError(MemoryPlanError):
    """The regions asked for do not match the board, or the buffers do not fit them."""


@dataclass(frozen=True)
class PlanRegion:
    """A board region the plan may use: ``capacity`` bytes of it, its speed rank."""

    name: str
    origin: int
    capacity: int
    speed: int | None


def parse_regions(spec, board) -> list[PlanRegion]:
    """``"ram:4K,psram"`` (or a list of ``"name[:bytes]"``) -> regions of ``board``.

    Each name is a data memory of the board record (``ram`` or a pool, not
    ``flash``); the size (bytes or K/M, default the whole region, for ``ram``
    what the stack leaves) is what the plan may take there.  Refused with the
    board's regions and sizes: an unknown region, a size above the region's,
    a region named twice, a board without a memory map."""
    from aot.executor.budget import MemoryBudgetError, parse_memory_size
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
        m = re.fullmatch(r"([a-z][a-z0-9_]*)(?::(.+))?", item or "")
        if m is None:
            raise MemoryRegionError(f"memory region {item!r}: expected NAME or NAME:BYTES "
                                    f"(e.g. ram:48K); {board.tag} has {known}")
        name, size = m.group(1), m.group(2)
        region = next((r for r in data if r.name == name), None)
        if region is None:
            raise MemoryRegionError(f"{board.tag} has no data memory {name!r}: it has {known}")
        if any(r.name == name for r in regions):
            raise MemoryRegionError(f"memory region {name!r} is given twice")
        full = _capacity(mem, region)
        try:
            capacity = full if size is None else parse_memory_size(size)
        except MemoryBudgetError as err:
            raise MemoryRegionError(f"memory region {item!r}: {err}") from None
        if capacity > full:
            raise MemoryRegionError(
                f"memory region {item!r} asks for {capacity} bytes but {name} on {board.tag} "
                f"has {full}" + (f" ({region.length} less the {mem.stack_bytes}-byte stack)"
                                 if region is mem.ram else ""))
        regions.append(PlanRegion(name, region.origin, capacity, region.speed))
    if not regions:
        raise MemoryRegionError(f"no memory region given; {board.tag} has {known}")
    return regions


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


def linker_script(name: str, plan: MemoryPlan, board) -> str:
    """``codegen/<name>_regions.ld``: the board's regions the plan uses as GNU ld
    ``MEMORY``, and one NOLOAD output section per region array.  Link it after
    the port's script (``-T link.ld -T codegen/<name>_regions.ld``)."""
    lines = [f"/* Generated by aot: the memory regions of {name}'s workspace buffers "
             "outside ram (docs/memory.md).", " * Link after the port's script: "
             f"-T link.ld -T codegen/{name}_regions.ld */", "MEMORY", "{"]
    for region in plan.regions:
        r = board.memory.pool(region)
        lines.append(f"    AOT_{region.upper()} (rw) : ORIGIN = 0x{r.origin:08x}, "
                     f"LENGTH = 0x{r.length:08x}")
    lines += ["}", "SECTIONS", "{"]
    for region in plan.regions:
        lines.append(f"    .aot_region.{region} (NOLOAD) : ALIGN({max(plan.alignment, 4)}) "
                     f"{{ KEEP(*(.aot_region.{region})) }} > AOT_{region.upper()}")
    lines.append("}")
    return "\n".join(lines) + "\n"
