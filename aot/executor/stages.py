"""Which stage runs the leading layers: none, a stream stage or a patch stage.

A stage lowers the peak RAM of a CNN's first layers for some extra work
(:mod:`aot.executor.streams`: bands of rows, :mod:`aot.executor.patches`:
tiles with recomputed halos).  This module holds the choice, read top to
bottom in :func:`choose_planned`:

``patches`` left open, no memory budget (the default)
    the leading layers become the stream stage with the lowest estimated peak
    within :data:`PATCH_ALLOWANCE` more work (MACs on out-of-image rows, bytes
    copied or filled), if it lowers the estimate and the estimate is below the
    workspace of the plan without it: both plans are made and the one with less
    RAM kept (the plan without the stage on a tie; the stage's when only it fits
    the board).  Not where stages are not supported (``stream_by_default``
    False: memory regions, ``-libs``, a tuned kernel library).
``"auto"``
    the plan without a stage and the one with the patch stage and grid that
    lower the estimated peak most within :data:`PATCH_ALLOWANCE` more MACs; the
    one with less RAM is kept (without the stage on a tie).
a memory budget, ``patches`` left open
    the plan without a stage; if no plan meets the budget, the stages that lower
    the estimated peak, least extra work first (at most :data:`BUDGET_STAGES`),
    the first that fits wins, else the error of the plan without a stage.
anything else
    the one plan ``patches`` asks for.

The estimates do not see every overlap a real plan finds, so plans are compared
by their planned RAM (``make(choice).sizes``), not by the estimates.  The
compiler (:func:`aot.compile.choose_plan`) hands :func:`choose_planned` the
function that plans one choice; :func:`analyze` turns the choice into the
stage analysis the plan is made with, and :func:`stage_code` gives that stage's
buffers and entry code.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from aot.errors import AotError
from aot.executor import codegen as entry
from aot.executor.budget import MemoryBudgetError
from aot.executor.memory import MemoryPlanError, Sizes, plan_memory
from aot.executor.patches import (GRIDS, PatchError, alive_by_node, analyze_stage,
                                  choose_stage, estimate_peak, patch_graph, stage_lengths)
from aot.executor.streams import StreamStage, analyze_stream, choose_stream, stream_candidates
from aot.ir import Graph, Tensor
from aot.ir.types import TensorType

PATCH_ALLOWANCE = 0.05  # a stage chosen by the compiler: at most this much more work
BUDGET_STAGES = 4       # stages a memory budget tries at most (each a whole plan)


@dataclass(frozen=True)
class StreamChoice:
    """A stream stage chosen before planning (the default plan's, or a budget's): the
    first ``nodes`` nodes in bands of ``band`` rows.  ``default``: chosen by the
    compiler, not asked for, so dropped where stages are not supported (memory
    regions, -libs) instead of refused."""

    nodes: int
    band: int
    default: bool = False
    estimate: int = 0  # the estimated peak with the stage (bytes)


@dataclass(frozen=True)
class PatchChoice:
    """A patch stage chosen before planning (``"auto"``'s, or a budget's): the first
    ``nodes`` nodes cut by ``grid`` (rows, columns)."""

    nodes: int
    grid: tuple[int, int]


def parse_patches(patches):
    """``"off"``, ``"auto"``, a grid ``(rows, columns)``, ``("stream", band rows or
    None)``, or a :class:`StreamChoice` / :class:`PatchChoice`, from ``None``, those
    words, ``"RxC"``, ``"stream"``, ``"stream:T"``, a pair or any of its own results
    (given back as they are); anything else is a :class:`PatchError` saying what is
    allowed."""
    if patches is None or patches == "off":
        return "off"
    if patches == "auto" or isinstance(patches, (StreamChoice, PatchChoice)):
        return patches
    if isinstance(patches, tuple) and patches[:1] == ("stream",) and len(patches) == 2 and (
            patches[1] is None or isinstance(patches[1], int) and patches[1] >= 1):
        return patches
    if isinstance(patches, str) and patches.strip().startswith("stream"):
        m = re.fullmatch(r"stream(?::(\d+))?", patches.strip())
        if m is None or (m[1] is not None and int(m[1]) < 1):
            raise PatchError(f"patches 'stream' takes bands of T >= 1 rows as 'stream:T', "
                             f"got {patches!r}")
        return ("stream", int(m[1]) if m[1] else None)
    grid = patches
    if isinstance(patches, str):
        m = re.fullmatch(r"(\d+)x(\d+)", patches.strip())
        grid = (int(m[1]), int(m[2])) if m else None
    if not (isinstance(grid, (tuple, list)) and len(grid) == 2
            and all(isinstance(v, int) and v >= 1 for v in grid)):
        raise PatchError(f"patches must be 'off', 'auto', a grid 'RxC' such as '3x3', "
                         f"'stream' or 'stream:T', got {patches!r}")
    return tuple(grid)


def analyze(graph: Graph, choice, io_in_workspace: bool):
    """The patch or stream stage of ``graph`` that ``choice`` (:func:`parse_patches`'s
    form) asks for, or None (``"off"``; a default stream this graph does not have)."""
    if isinstance(choice, StreamChoice):
        try:
            return analyze_stream(graph, choice.nodes, choice.band,
                                  io_in_workspace=io_in_workspace)
        except PatchError:
            if choice.default:  # this graph's groups differ from the estimate's
                return None
            raise
    if isinstance(choice, PatchChoice):
        return analyze_stage(graph, choice.nodes, choice.grid, io_in_workspace=io_in_workspace)
    if choice == "off":
        return None
    if choice == "auto":
        return choose_stage(graph, allowance=PATCH_ALLOWANCE, io_in_workspace=io_in_workspace,
                            generated_only=True).stage
    if choice[0] == "stream":
        return _asked_stream(graph, choice[1], io_in_workspace)
    best = min((est for _, _, est in supported_stages(graph, [choice], io_in_workspace)),
               key=lambda est: est.bytes_after, default=None)
    if best is None:
        raise PatchError(f"patches {choice[0]}x{choice[1]}: the graph {graph.name!r} has "
                         "no patch stage whose code is supported (its first layers must be "
                         "convolutions, max pools or residual adds on NHWC images of batch "
                         "1); give --patches off")
    return best.stage


def _asked_stream(graph: Graph, band: int | None, io_in_workspace: bool) -> StreamStage:
    best = choose_stream(graph, band=band, io_in_workspace=io_in_workspace)
    if best is None:
        rows = f" in bands of {band} rows" if band else ""
        spec = f"stream:{band}" if band else "stream"
        raise PatchError(f"patches {spec}: the graph {graph.name!r} has no stream "
                         f"stage{rows} (its first layers must be convolutions, max "
                         "pools or residual adds on NHWC images of batch 1, and the "
                         "band must divide the stage output's height); give "
                         "--patches off")
    return best.stage


def supported_stages(graph: Graph, grids, io_in_workspace: bool):
    """``(stage length, grid, estimate)`` of every leading stage of ``graph`` cut
    by one of ``grids`` whose patch code is supported (:func:`patch_graph`)."""
    for n in stage_lengths(graph):
        for grid in grids:
            try:
                stage = analyze_stage(graph, n, grid, io_in_workspace=io_in_workspace)
                patch_graph(stage)
            except PatchError:
                continue
            yield n, grid, estimate_peak(graph, stage, io_in_workspace=io_in_workspace)


def default_stream(graph: Graph, io_in_workspace: bool) -> StreamChoice | None:
    """The stream stage the default plan tries, or None: the one with the lowest
    estimated peak within :data:`PATCH_ALLOWANCE` more work, if it lowers the peak."""
    est = choose_stream(graph, allowance=PATCH_ALLOWANCE, io_in_workspace=io_in_workspace)
    if est.stage is None or est.bytes_after >= est.bytes_before:
        return None
    return StreamChoice(len(est.stage.nodes), est.stage.band, default=True,
                        estimate=est.bytes_after)


def budget_stages(graph: Graph, io_in_workspace: bool) -> list[StreamChoice | PatchChoice]:
    """The stages a budget tries, least extra work first, those that lower the estimated
    peak: per stage length the stream stage with the lowest estimated peak, and the
    patch stages whose code is supported."""
    alive = alive_by_node(graph, io_in_workspace)
    streams: dict[int, object] = {}
    for stage in stream_candidates(graph, io_in_workspace=io_in_workspace):
        est = estimate_peak(graph, stage, alive=alive)
        n = len(stage.nodes)
        if est.bytes_after < est.bytes_before and (
                n not in streams or (est.bytes_after, est.extra_work) <
                (streams[n].bytes_after, streams[n].extra_work)):
            streams[n] = est
    found = [(est.extra_work, 0, StreamChoice(n, est.stage.band)) for n, est in
             streams.items()]
    found += [(est.extra_work, 1, PatchChoice(n, grid))
              for n, grid, est in supported_stages(graph, GRIDS, io_in_workspace)
              if est.bytes_after < est.bytes_before]
    found.sort(key=lambda f: (f[0], f[1]))
    return [spec for *_, spec in found[:BUDGET_STAGES]]


@dataclass(frozen=True)
class StageRequest:
    """What decides the choice among stages: the ``patches`` asked for (None: left to
    the compiler; else :func:`parse_patches`' form), whether a memory budget is given,
    whether memory regions are (a budget with regions is met without stages) and
    whether the default plan may stream its leading layers."""

    patches: object = None
    budget: bool = False
    regions: bool = False
    stream_by_default: bool = True
    io_in_workspace: bool = True


class _Planned(Protocol):
    @property
    def sizes(self) -> Sizes: ...


P = TypeVar("P", bound=_Planned)


def choose_planned(make: Callable[[object], P], request: StageRequest,
                   optimized: Callable[[], Graph], lap: Callable[[str], None]) -> P:
    """The plan kept among those ``make`` (a stage choice -> a plan, raising
    :class:`MemoryPlanError` when it does not fit the board, :class:`MemoryBudgetError`
    when it misses the budget) makes for ``request`` (module docstring).
    ``optimized()`` is the optimized graph the estimates are made on; ``lap("planning")``
    follows each estimate."""
    if request.patches is None and not request.budget:
        return _by_default(make, request, optimized, lap)
    if request.patches == "auto":
        return _auto(make, request, optimized, lap)
    if not request.budget or request.patches is not None or request.regions:
        return make(request.patches)
    return _within_budget(make, request, optimized, lap)


def _by_default(make, request: StageRequest, optimized, lap):
    stream = None
    if request.stream_by_default:
        try:
            stream = default_stream(optimized(), request.io_in_workspace)
        except AotError:
            pass  # the plan reports the model's own error
    lap("planning")  # the stream stage's estimate: a graph loaded and optimized
    if stream is None:
        return make("off")
    try:
        whole = make("off")
    except MemoryPlanError as err:  # too big for the board: the stage may fit
        try:
            return make(stream)
        except MemoryPlanError:
            raise err from None
    if stream.estimate >= whole.sizes.workspace:
        return whole  # the plan's overlaps already beat the stage's estimate
    streamed = make(stream)
    return streamed if streamed.sizes.ram < whole.sizes.ram else whole


def _auto(make, request: StageRequest, optimized, lap):
    whole, first = None, None
    try:
        whole = make("off")
    except MemoryBudgetError as err:
        first = err
    stage = choose_stage(optimized(), allowance=PATCH_ALLOWANCE,
                         io_in_workspace=request.io_in_workspace, generated_only=True).stage
    lap("planning")
    patched = None
    if stage is not None:
        try:
            patched = make(PatchChoice(len(stage.nodes), stage.grid))
        except MemoryBudgetError:
            pass
    if whole is None and patched is None:
        raise first
    if patched is None or (whole is not None and patched.sizes.ram >= whole.sizes.ram):
        return whole
    return patched


def _within_budget(make, request: StageRequest, optimized, lap):
    try:
        return make(None)
    except MemoryBudgetError as err:
        first = err
    stages = budget_stages(optimized(), request.io_in_workspace)
    lap("planning")
    for choice in stages:
        try:
            return make(choice)
        except MemoryBudgetError:
            continue
    raise first


def stage_code(stage, stage_graph: Graph, where, name: str, alignment: int
               ) -> entry.StreamCode | entry.PatchCode:
    """The entry code of ``stage`` (its layers lowered in ``stage_graph``; ``where``:
    the band graph's tensors, :func:`aot.executor.streams.band_graph`) and the one buffer
    it needs (``code.buffer``), whose bytes the model's plan holds during the stage's
    step only.

    A stream stage's windows live through the whole loop, side by side; a tensor fused
    away inside one kernel (a convolution's output its residual add reads) needs no
    window.  A patch stage's buffers have a plan of their own (no in-place writes)."""
    if isinstance(stage, StreamStage):
        used = {where[t.name].source.tensor.name for t in stage_graph.inputs} | \
            {where[t.name].source.tensor.name for g in stage_graph.annotations.groups
             for t in g.outputs(stage_graph)} | {stage.input.name}
        offsets, total = {}, 0
        for st in stage.windowed:
            if st.tensor.name not in used:
                continue
            offsets[st.tensor.name] = total
            total += -(-st.window_bytes // alignment) * alignment
        buffer = Tensor(f"{name}_stream_windows", TensorType((max(total, 1),), "int8"))
        return entry.StreamCode(stage, stage_graph, where, offsets, buffer)
    patch_plan = plan_memory(stage_graph, alignment=alignment, io_in_workspace=True,
                             inplace=False)
    buffer = Tensor(f"{name}_patch_buffers",
                    TensorType((max(patch_plan.workspace_bytes, 1),), "int8"))
    return entry.PatchCode(stage, stage_graph, patch_plan, buffer)
