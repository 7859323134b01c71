"""The static memory planner: every activation gets a fixed offset in one workspace.

Algorithm
---------
1. **Steps.**  The execution order is a list of steps: the fused groups of
   an annotated graph (:mod:`aot.passes`), or one step per node.  Only
   tensors that cross a step boundary need memory; a group's intermediate
   values stay inside its kernel.
2. **Buffers.**  Tensors that share storage form one buffer:

   * a view (reshape, squeeze, expand_dims) shares its input's buffer;
   * a step may write its output over an input of the same shape and dtype
     whose last reader is that step, when only the step's elementwise tail
     reads it (an elementwise op alone, or the bias/residual add after a
     conv): out[i] depends on that input's element i only, so each element
     is read before it is overwritten.  A kernel whose output aliases an
     input this way must read element i before writing element i.  With a
     predicate for ``inplace`` each such candidate is also put to it
     (:func:`aot.compile.compile_model` asks the kernel library, which
     accepts only what its lowered loop nest allows: :mod:`aot.kernels.inplace`);
     a refused candidate keeps its own buffer and the next input is tried.

   A buffer never holds two caller tensors (graph inputs/outputs), and
   never a caller input being overwritten.
3. **Lifetimes.**  A buffer lives from the step that writes it to the last
   step that reads it, inclusive (graph inputs from step 0, graph outputs
   to the last step; a step buffer, ``plan_memory(step_buffers=...)``, during
   its step only).  Two buffers conflict if their lifetimes intersect.

   A graph placed on several cores (:func:`aot.passes.place_cores`) has
   *parallel steps*: a split group (each core computes some rows or
   channels of it) and two groups side by side (one on core 0, the next on
   core 1), which a barrier ends.  The steps of one parallel step run at
   once, so a buffer alive at any of them lives through all of them (both
   side-by-side steps' buffers are alive together until their barrier);
   and since an in-place write or an overlap pair assumes that one core
   writes the output in order while it reads the input, neither is made
   for a split step's output, nor over an input the other step beside it
   also reads.
4. **Placement.**  Each algorithm of :data:`ALGORITHMS` places the buffers
   at offsets that are multiples of ``alignment``, never overlapping a
   conflicting buffer; the smallest workspace wins (ties: the first
   algorithm listed).

   * ``greedy_by_size``: largest buffer first, each at the lowest offset
     where it fits between conflicting buffers already placed.
   * ``greedy_by_conflicts``: buffers with the most conflicting bytes
     first (they constrain the rest most), lowest offset that fits.
   * ``best_fit_by_lifetime``: buffers in order of their first step; each
     goes into the smallest gap between conflicting placed buffers that
     holds it, or on top.

5. **Check.**  :func:`check_plan` verifies the result independently: every
   offset aligned, inside the workspace, and no two tensors alive at the
   same step overlap in bytes unless they share a buffer.

Inputs and outputs live in the caller's buffers by default
(``io_in_workspace=False``): they take no workspace, and views or in-place
writes never alias them with workspace buffers.  With
``io_in_workspace=True`` they are placed like any other buffer (this is
what TFLM's arena does).  Variable tensors (state) persist between calls
and are reported apart; constants are in flash.

Limits: lifetimes are step granular (a kernel's output never shares bytes
with its own inputs except in place); the placement is greedy, so it may
be above the optimum, which :attr:`MemoryPlan.lower_bound` bounds from
below (the most bytes alive at one step).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from aot.errors import AotError, did_you_mean
from aot.ir import Graph, Node, Tensor, get_op
from aot.passes.annotated import AnnotatedGraph, annotations

VIEW_OPS = ("reshape", "squeeze", "expand_dims")
_INPLACE_PATTERNS = ("elementwise", "broadcast")


class MemoryPlanError(AotError):
    """The model does not fit the memory it is given, or a plan breaks its invariants."""


@dataclass(eq=False)
class Buffer:
    """Storage shared by one or more tensors; ``offset`` is None for caller buffers.

    ``over`` maps ``id(x)`` to ``(x, D, (y tensor, x tensor))`` for each buffer ``x`` that dies at
    the step writing this one, whose kernel proved it may start at
    ``x.offset + d`` for any ``d <= D`` (:mod:`aot.kernels.overlap`);
    ``under`` is the same relation seen from ``x``.
    """

    tensors: list[Tensor]
    size: int
    start: int
    end: int
    external: bool = False
    offset: int | None = None
    region: str = ""     # "" the main workspace; else a board region (aot.executor.regions)
    over: dict[int, tuple[Buffer, int, tuple[str, str]]] = field(default_factory=dict)
    under: dict[int, tuple[Buffer, int, tuple[str, str]]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.tensors[0].name

    def conflicts(self, other: Buffer) -> bool:
        return self.start <= other.end and other.start <= self.end

    def forbidden(self, placed: Buffer, top_down: bool = False,
                  alignment: int = 1) -> tuple[int, int]:
        """The open interval of offsets where this buffer may not start, given
        a conflicting buffer already placed: overlapping bytes, unless the
        two are an overlap pair placed within its limit.

        ``top_down``: offsets count down from the top of the workspace, and
        each buffer takes its size rounded up to ``alignment`` (so that the
        offsets stay aligned once turned back, :func:`_place`).
        """
        if not top_down:
            lo, hi = placed.offset - self.size, placed.offset + placed.size
            if id(placed) in self.over:      # this may start at placed + d, d <= D
                lo = max(lo, placed.offset + self.over[id(placed)][1])
            elif id(placed) in self.under:   # placed may start at this + d, d <= D
                hi = min(hi, placed.offset - self.under[id(placed)][1])
            return lo, hi
        mine, theirs = _align(self.size, alignment), _align(placed.size, alignment)
        lo, hi = placed.offset - mine, placed.offset + theirs
        # Counted from the top, y at x + d (d <= D) is y' >= x' + |x| - |y| - D.
        if id(placed) in self.over:
            hi = min(hi, placed.offset + theirs - mine - self.over[id(placed)][1])
        elif id(placed) in self.under:
            lo = max(lo, placed.offset - (mine - theirs - self.under[id(placed)][1]))
        return lo, hi

    def overlap_ok(self, other: Buffer) -> bool:
        """Whether this buffer and ``other``, alive together and sharing bytes,
        are an overlap pair within its limit."""
        if id(other) in self.over:
            return self.offset - other.offset <= self.over[id(other)][1]
        if id(other) in self.under:
            return other.offset - self.offset <= self.under[id(other)][1]
        return False


@dataclass
class MemoryPlan:
    """Where every activation tensor lives, and the sizes that follow.

    ``workspace_bytes`` is the winning algorithm's size (a multiple of
    ``alignment``); ``candidates`` has every algorithm's size.
    ``lower_bound`` is the most buffer bytes alive at one step (for the
    buffers placed in the workspace); no placement of these lifetimes can
    be smaller.
    """

    steps: list[str]
    buffers: list[Buffer]
    alignment: int
    io_in_workspace: bool
    algorithm: str
    candidates: dict[str, int]
    workspace_bytes: int
    lower_bound: int
    state_bytes: int
    io_bytes: int
    aliases: list[tuple[str, str, str]] = field(default_factory=list)
    # Bytes per board region outside the main workspace, and every region's
    # speed rank (aot.executor.regions.split_regions); empty: one workspace.
    regions: dict[str, int] = field(default_factory=dict)
    region_speeds: dict[str, int | None] = field(default_factory=dict)
    # Bytes of kernel constants copied at start-up into each region ("ram"
    # included; aot.executor.regions.place_constants), and the region holding
    # the firmware's stack of stack_bytes when the regions moved it ("": the
    # port's default, the top of ram).
    region_constants: dict[str, int] = field(default_factory=dict)
    stack_region: str = ""
    stack_bytes: int = 0

    def buffer_of(self, tensor: Tensor) -> Buffer | None:
        """The buffer holding ``tensor``; None for a constant (it stays in flash: a
        view of one, such as a graph output known at compile time, is a copy)."""
        if tensor.kind == "constant":
            return None
        for b in self.buffers:
            if any(t is tensor for t in b.tensors):
                return b
        raise KeyError(tensor.name)

    def offsets(self) -> dict[str, int | None]:
        """Tensor name -> workspace offset (None: in a caller buffer)."""
        return {t.name: b.offset for b in self.buffers for t in b.tensors}

    def to_json(self) -> dict:
        return {
            "algorithm": self.algorithm,
            "alignment": self.alignment,
            "io_in_workspace": self.io_in_workspace,
            "workspace_bytes": self.workspace_bytes,
            "lower_bound_bytes": self.lower_bound,
            "state_bytes": self.state_bytes,
            "io_bytes": self.io_bytes,
            "candidates": dict(self.candidates),
            "regions": dict(self.regions),
            **({"region_constants": dict(self.region_constants)}
               if self.region_constants else {}),
            **({"stack_region": self.stack_region, "stack_bytes": self.stack_bytes}
               if self.stack_region else {}),
            "buffers": [{"tensors": [t.name for t in b.tensors], "bytes": b.size,
                         "offset": b.offset, "first_step": b.start, "last_step": b.end,
                         **({"region": b.region} if b.region else {})}
                        for b in self.buffers],
        }


# ------------------------------------------------------------------------- steps and buffers

def _steps(graph: Graph) -> list[tuple[str, tuple[Node, ...]]]:
    groups = getattr(graph, "annotations", None)
    if groups is not None and groups.groups:
        covered = sum(len(g.nodes) for g in groups.groups)
        if covered == len(graph.nodes):
            return [(g.name, g.nodes) for g in groups.groups]
    return [(n.name or n.op, (n,)) for n in graph.nodes]


def _parallel_steps(graph: Graph, steps) -> tuple[list[tuple[int, int]], set[int]]:
    """Per step, the first and last step of the parallel step it is part of
    (module docstring, 3: ``(i, i)`` when it runs alone), and the steps that
    are split across cores.

    A step whose first node :func:`aot.passes.place_cores` gave several
    devices is split; a step on a core other than 0 runs beside the step
    before it.  Without placement every step runs alone.
    """
    spans = [(i, i) for i in range(len(steps))]
    split: set[int] = set()
    ann = annotations(graph)
    if not ann.placement:
        return spans, split
    for i, (_, nodes) in enumerate(steps):
        devices = ann.devices(nodes[0])
        if len(devices) > 1:
            split.add(i)
        elif devices[0].core != 0 and i > 0:
            spans[i - 1] = spans[i] = (spans[i - 1][0], i)
    return spans, split


class _Classes:
    """Union-find over tensor ids, remembering each class's members."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}
        self.members: dict[int, list[Tensor]] = {}

    def add(self, t: Tensor) -> None:
        if id(t) not in self.parent:
            self.parent[id(t)] = id(t)
            self.members[id(t)] = [t]

    def find(self, t: Tensor) -> int:
        k = id(t)
        while self.parent[k] != k:
            k = self.parent[k]
        return k

    def union(self, a: Tensor, b: Tensor) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra
            self.members[ra] += self.members.pop(rb)


def _build_buffers(graph: Graph, steps, parallel, io_in_workspace: bool, inplace,
                   overlap=None):
    """The buffers of ``steps`` and the aliases they make; ``parallel`` is
    :func:`_parallel_steps`' result."""
    spans, split = parallel
    inputs = {id(t) for t in graph.inputs}
    outputs = {id(t) for t in graph.outputs}
    last = len(steps) - 1
    produced_at: dict[int, int] = {id(t): 0 for t in graph.inputs}
    read_last: dict[int, int] = {}
    read_at: dict[int, set[int]] = {}
    crossing: list[Tensor] = list(graph.inputs)
    step_io: list[tuple[list[Tensor], list[Tensor]]] = []
    for i, (_, nodes) in enumerate(steps):
        made = {id(t) for n in nodes for t in n.outputs}
        reads: dict[int, Tensor] = {}
        for n in nodes:
            for t in n.inputs:
                if t is not None and t.kind in ("input", "activation") and id(t) not in made:
                    reads.setdefault(id(t), t)
                    read_last[id(t)] = i
                    read_at.setdefault(id(t), set()).add(i)
        step_io.append((list(reads.values()), []))
        for n in nodes:
            for t in n.outputs:
                produced_at[id(t)] = i
        for t in _step_outputs(graph, nodes):
            crossing.append(t)
            step_io[i][1].append(t)
    for t in graph.outputs:
        if t.kind in ("input", "activation"):
            read_last[id(t)] = last

    classes = _Classes()
    for t in crossing:
        classes.add(t)
    aliases: list[tuple[str, str, str]] = []

    def one_core_writes(i: int, members: list[Tensor]) -> bool:
        """Whether step ``i``'s output may share bytes with ``members`` (the
        tensors of one buffer it reads) as far as the cores go: not when the
        step is split, nor when another step beside it reads them."""
        if i in split:
            return False
        beside = set(range(spans[i][0], spans[i][1] + 1)) - {i}
        return not any(read_at.get(id(m), set()) & beside for m in members)

    def caller_tensors(root: int) -> int:
        return sum(1 for m in classes.members[root] if id(m) in inputs or id(m) in outputs)

    def can_merge(a: Tensor, b: Tensor, overwrite: bool) -> bool:
        """Whether ``b`` may take ``a``'s storage (``overwrite``: while ``a`` dies)."""
        ra, rb = classes.find(a), classes.find(b)
        if ra == rb:
            return False
        if overwrite and caller_tensors(ra):
            return False  # inputs and outputs must hold their values for the caller
        if io_in_workspace:
            return True
        return caller_tensors(ra) + caller_tensors(rb) <= (0 if overwrite else 1)

    views = _view_nodes(graph)
    for i, (_, nodes) in enumerate(steps):
        reads, writes = step_io[i]
        if len(nodes) == 1 and nodes[0] in views and writes:
            x, y = nodes[0].inputs[0], nodes[0].outputs[0]
            if x.kind in ("input", "activation") and can_merge(x, y, False):
                classes.union(x, y)
                aliases.append((y.name, x.name, "view"))
            continue
        if not inplace or len(writes) != 1 or writes[0] is not nodes[-1].outputs[0]:
            continue
        y = writes[0]
        epilogue = _epilogue(nodes, y)
        for x in reads:
            readers = [n for n in nodes if any(t is x for t in n.inputs)]
            # A view of x read by the same step would be a second argument
            # on the same bytes, one the kernel does not expect to change.
            alone = not any(m is not x and classes.find(m) == classes.find(x) for m in reads)
            dies_here = all(read_last.get(id(m), -1) <= i
                            for m in classes.members[classes.find(x)])
            if (dies_here and alone and all(n in epilogue for n in readers)
                    and x.shape == y.shape and x.dtype == y.dtype
                    and one_core_writes(i, classes.members[classes.find(x)])
                    and can_merge(x, y, True) and (inplace is True or inplace(y, x))):
                classes.union(x, y)
                aliases.append((y.name, x.name, "in place"))
                break

    buffers = []
    for members in classes.members.values():
        start = min(produced_at[id(m)] for m in members)
        end = max(max(read_last.get(id(m), produced_at[id(m)]) for m in members), start)
        external = not io_in_workspace and any(
            id(m) in inputs or id(m) in outputs for m in members)
        size = max(m.type.nbytes for m in members)
        buffers.append(Buffer(members, size, start, end, external))
    if overlap:
        _pair_overlaps(buffers, step_io, overlap, one_core_writes)
    for b in buffers:   # alive through every step of the parallel steps it is alive at
        b.start, b.end = spans[b.start][0], spans[b.end][1]
    buffers.sort(key=lambda b: (b.start, b.end, b.name))
    return buffers, aliases


def _pair_overlaps(buffers: list[Buffer], step_io, overlap, one_core_writes) -> None:
    """Record the overlap pairs: a step's one output ``y`` and each workspace
    input ``x`` that dies at that step and is read there through one tensor
    only, where ``overlap(y, x)`` gives the kernel's proved limit ``D`` and
    ``one_core_writes(step, x's tensors)`` holds (on several cores)."""
    of = {id(t): b for b in buffers for t in b.tensors}
    for i, (reads, writes) in enumerate(step_io):
        if len(writes) != 1:
            continue
        y = writes[0]
        by = of[id(y)]
        if by.external or by.start != i:
            continue
        for x in reads:
            bx = of[id(x)]
            if bx.external or bx is by or bx.end != i:
                continue
            if sum(1 for m in reads if of[id(m)] is bx) != 1 \
                    or not one_core_writes(i, bx.tensors):
                continue
            limit = overlap(y, x)
            if limit is not None and limit > -by.size:
                by.over[id(bx)] = (bx, limit, (y.name, x.name))
                bx.under[id(by)] = (by, limit, (y.name, x.name))


def _view_nodes(graph: Graph) -> frozenset[Node]:
    """Nodes whose output shares its input's bytes.

    For a graph from the pass pipeline, the reshapes ``canonicalize``
    recorded (none if it was disabled); for a plain graph, every reshape,
    squeeze and expand_dims (the integers are the same whatever the output's
    quantization: TFLM copies them raw).
    """
    if isinstance(graph, AnnotatedGraph):
        return graph.annotations.views
    return frozenset(n for n in graph.nodes if n.op in VIEW_OPS)


def _epilogue(nodes: tuple[Node, ...], y: Tensor) -> set[Node]:
    """The step's trailing elementwise/broadcast nodes that all produce ``y``'s shape.

    Element ``i`` of ``y`` depends on element ``i`` of any same-shape operand
    these nodes read, and on nothing else of it: the kernel reads it just
    before writing ``y[i]``, so ``y`` may take that operand's bytes.
    """
    tail: set[Node] = set()
    for n in reversed(nodes):
        if get_op(n.op).pattern not in _INPLACE_PATTERNS or n.outputs[0].shape != y.shape:
            break
        tail.add(n)
    return tail


def _step_outputs(graph: Graph, nodes: tuple[Node, ...]) -> list[Tensor]:
    """The tensors a step writes for others: read by later steps, graph
    outputs, or read by nobody (the output of a node kept for its effect on
    state, e.g. ASSIGN_VARIABLE: its kernel still writes it somewhere)."""
    inside = {id(n) for n in nodes}
    users = graph.consumers()
    outs = {id(t) for t in graph.outputs}
    result = []
    for n in nodes:
        for t in n.outputs:
            readers = users.get(id(t), [])
            if id(t) in outs or not readers or any(id(u) not in inside for u in readers):
                result.append(t)
    return result


# ------------------------------------------------------------------------- placement

def _align(x: int, alignment: int) -> int:
    return -(-x // alignment) * alignment


def _forbidden(buf: Buffer, placed: list[Buffer], alignment: int,
               top_down: bool) -> list[tuple[int, int]]:
    """Open intervals of offsets where ``buf`` may not start, sorted by their start."""
    spans = (buf.forbidden(b, top_down, alignment) for b in placed if b.conflicts(buf))
    return sorted((lo, hi) for lo, hi in spans if lo < hi)


def _lowest_fit(buf: Buffer, placed: list[Buffer], alignment: int, top_down: bool) -> int:
    """Lowest aligned offset where ``buf`` overlaps no conflicting placed buffer
    (but an overlap pair within its limit)."""
    offset = 0
    for lo, hi in _forbidden(buf, placed, alignment, top_down):
        if offset <= lo:
            break
        offset = max(offset, _align(hi, alignment))
    return offset


def _best_fit(buf: Buffer, placed: list[Buffer], alignment: int, top_down: bool) -> int:
    """Smallest gap between conflicting placed buffers that holds ``buf``, else on top."""
    best, best_gap, cursor = None, None, 0
    for lo, hi in _forbidden(buf, placed, alignment, top_down):
        if cursor <= lo and (best_gap is None or lo - cursor < best_gap):
            best, best_gap = cursor, lo - cursor
        cursor = max(cursor, _align(hi, alignment))
    return best if best is not None else cursor


def _place(buffers: list[Buffer], order: list[Buffer], fit, alignment: int,
           top_down: bool) -> int:
    """Place ``order`` one by one with ``fit``; the aligned workspace size.

    Top down, offsets are first counted from the top (each buffer rounded up
    to ``alignment``), then turned into offsets from the bottom.  An overlap
    pair needs its output *below* its input; counting from the top, the
    output goes above the input, which lowest-fit placement finds naturally.
    """
    placed: list[Buffer] = []
    for b in order:
        b.offset = fit(b, placed, alignment, top_down)
        placed.append(b)
    if not top_down:
        return _align(max((b.offset + b.size for b in placed), default=0), alignment)
    top = max((b.offset + _align(b.size, alignment) for b in placed), default=0)
    for b in placed:
        b.offset = top - b.offset - _align(b.size, alignment)
    return top


def greedy_by_size(buffers: list[Buffer], alignment: int, top_down: bool = False) -> int:
    order = sorted(buffers, key=lambda b: (-b.size, b.start, b.end))
    return _place(buffers, order, _lowest_fit, alignment, top_down)


def greedy_by_conflicts(buffers: list[Buffer], alignment: int, top_down: bool = False) -> int:
    weight = {id(b): sum(o.size for o in buffers if o is not b and o.conflicts(b))
              for b in buffers}
    order = sorted(buffers, key=lambda b: (-(weight[id(b)] + b.size), -b.size, b.start))
    return _place(buffers, order, _lowest_fit, alignment, top_down)


def best_fit_by_lifetime(buffers: list[Buffer], alignment: int, top_down: bool = False) -> int:
    order = sorted(buffers, key=lambda b: (b.start, -b.size, b.end))
    return _place(buffers, order, _best_fit, alignment, top_down)


#: Placement algorithms: name -> function(buffers, alignment) -> workspace bytes.
ALGORITHMS: dict[str, Callable[[list[Buffer], int], int]] = {
    "greedy_by_size": greedy_by_size,
    "greedy_by_conflicts": greedy_by_conflicts,
    "best_fit_by_lifetime": best_fit_by_lifetime,
}


def lower_bound(buffers: list[Buffer], n_steps: int) -> int:
    """Most bytes of buffers alive at one step, less what each overlap pair born
    at that step can share at best (its limit ``D``: a pair needs at least
    ``max(|x| + max(-D, 0), |y|)`` bytes)."""
    def alive(s: int) -> int:
        total = 0
        for b in buffers:
            if b.start <= s <= b.end:
                total += b.size
                if b.start == s:
                    for x, limit, _ in b.over.values():
                        pair = max(x.size + max(-limit, 0), b.size)
                        total -= max(x.size + b.size - pair, 0)
        return total
    return max((alive(s) for s in range(max(n_steps, 1))), default=0)


# ------------------------------------------------------------------------- driver

def plan_memory(graph: Graph, *, alignment: int = 16, io_in_workspace: bool = False,
                inplace: bool | Callable[[Tensor, Tensor], bool] = True,
                overlap: Callable[[Tensor, Tensor], int | None] | None = None,
                algorithms: tuple[str, ...] | None = None,
                step_buffers: dict[str, Tensor] | None = None) -> MemoryPlan:
    """Plan the workspace of ``graph`` (see the module docstring); the plan is checked.

    ``step_buffers`` maps a step's name to a tensor no node names that lives
    during that step only (the patch buffers of a patch stage,
    :mod:`aot.executor.patches`): the planner places its bytes like any buffer.

    ``alignment`` is the target's (4 for Cortex-M, 16 on hosts with SIMD);
    ``algorithms`` restricts the placement algorithms tried.  ``inplace``:
    False never writes an output over an input; True allows every in-place
    write the graph's structure allows; a predicate ``accept(out, in)`` is
    asked about each of those and may refuse it (the kernel writing ``out``
    cannot honour it).  Each in-place write is
    in :attr:`MemoryPlan.aliases` as ``(out, in, "in place")``.

    ``overlap(out, in)`` returns the kernel's proved limit ``D`` (bytes:
    ``out`` may start at ``in``'s offset plus any ``d <= D``,
    :mod:`aot.kernels.overlap`) or None; each pair the placement makes
    share bytes is in :attr:`MemoryPlan.aliases` as ``(out, in, "overlap")``.
    """
    if alignment < 1 or alignment & (alignment - 1):
        raise MemoryPlanError(f"alignment must be a power of two, got {alignment}")
    names = tuple(ALGORITHMS) if algorithms is None else tuple(algorithms)
    for name in names:
        if name not in ALGORITHMS:
            raise MemoryPlanError(f"unknown placement algorithm {name!r}"
                                  f"{did_you_mean(name, ALGORITHMS)}")
    if not names:
        raise MemoryPlanError("no placement algorithm given")
    steps = _steps(graph)
    parallel = _parallel_steps(graph, steps)
    buffers, aliases = _build_buffers(graph, steps, parallel, io_in_workspace, inplace,
                                      overlap)
    step_names = [name for name, _ in steps]
    for step, t in (step_buffers or {}).items():
        if step not in step_names:
            raise MemoryPlanError(f"a buffer for step {step!r}, which the graph does not have")
        first, last = parallel[0][step_names.index(step)]
        buffers.append(Buffer([t], t.type.nbytes, first, last))
    inner = [b for b in buffers if not b.external]
    candidates: dict[str, int] = {}
    offsets: dict[str, list[int]] = {}
    # Overlap pairs put each output below its input, which placing from the
    # top finds; without pairs both directions give the same sizes.
    directions = (False, True) if any(b.over for b in inner) else (False,)
    for name in names:
        for top_down in directions:
            key = f"{name} (top down)" if top_down else name
            candidates[key] = ALGORITHMS[name](inner, alignment, top_down)
            offsets[key] = [b.offset for b in inner]
    names = tuple(candidates)
    best = min(names, key=lambda n: candidates[n])  # min keeps the first of equals
    for b, off in zip(inner, offsets[best]):
        b.offset = off
    for y in inner:
        for x, _, (out, src) in y.over.values():
            if x.offset < y.offset + y.size and y.offset < x.offset + x.size:
                aliases.append((out, src, "overlap"))
    tensors = graph.tensors()
    plan = MemoryPlan(
        steps=[name for name, _ in steps],
        buffers=buffers,
        alignment=alignment,
        io_in_workspace=io_in_workspace,
        algorithm=best,
        candidates=candidates,
        workspace_bytes=candidates[best],
        lower_bound=lower_bound(inner, len(steps)),
        state_bytes=sum(t.type.nbytes for t in tensors if t.kind == "variable"),
        io_bytes=sum(b.size for b in buffers if b.external),
        aliases=aliases,
    )
    check_plan(plan)
    return plan


def check_plan(plan: MemoryPlan) -> None:
    """Raise :class:`MemoryPlanError` unless the plan is sound.

    Every workspace buffer has an aligned offset and ends inside the
    workspace; no two tensors alive at one step overlap in bytes unless they
    are the same buffer (a view or an in-place write); every tensor is in
    exactly one buffer.
    """
    seen: set[int] = set()
    for b in plan.buffers:
        for t in b.tensors:
            if id(t) in seen:
                raise MemoryPlanError(f"tensor {t.name!r} is in two buffers")
            seen.add(id(t))
        if b.external:
            if b.offset is not None:
                raise MemoryPlanError(f"caller buffer {b.name!r} has a workspace offset")
            continue
        if b.offset is None or b.offset < 0 or b.offset % plan.alignment:
            raise MemoryPlanError(f"buffer {b.name!r} has offset {b.offset}, not a "
                                  f"non-negative multiple of {plan.alignment}")
        bound = plan.regions.get(b.region, 0) if b.region else plan.workspace_bytes
        if b.offset + b.size > bound:
            where = f"region {b.region}" if b.region else "workspace"
            raise MemoryPlanError(f"buffer {b.name!r} ends at {b.offset + b.size}, past the "
                                  f"{where} of {bound} bytes")
    inner = sorted((b for b in plan.buffers if not b.external), key=lambda b: b.offset)
    for i, a in enumerate(inner):
        for b in inner[i + 1:]:
            if b.offset >= a.offset + a.size:
                break
            if a.region != b.region:
                continue
            if a.conflicts(b) and a.size and b.size and not a.overlap_ok(b):
                raise MemoryPlanError(
                    f"buffers {a.name!r} [{a.offset}, {a.offset + a.size}) steps "
                    f"{a.start}-{a.end} and {b.name!r} [{b.offset}, {b.offset + b.size}) "
                    f"steps {b.start}-{b.end} overlap while both are alive")


def workspace_alignment(target) -> int:
    """The buffer alignment for an :class:`aot.target.Target`.

    Its ``-workspace-byte-alignment`` when given, else the target's vector
    width where it has one (4 bytes on Cortex-M4/M7, whose SIMD works on
    32-bit words; 16 with Helium/MVE), else 16, which suits host SIMD and
    costs little.
    """
    given = target.attrs.get("workspace-byte-alignment")
    return given or target.vector_bytes or 16


@dataclass(frozen=True)
class Sizes:
    """Bytes per section of a compiled model.

    ``workspace`` includes the kernels' shared scratch once code is
    generated; ``code`` is measured by compiling the generated C with the
    board's (or host) toolchain, None when that was not possible or not
    done yet (``code_note`` says why).  ``ram_constants`` are the constant
    bytes the start-up copies into ``ram`` (``--memory-regions ram+const``):
    in flash (``constants``) and in RAM; ``ram_code`` the code bytes it copies
    there (kernels run from RAM, :mod:`aot.executor.code_placement`): in
    flash (``code``) and in RAM.
    """

    workspace: int
    constants: int
    state: int
    io: int
    code: int | None
    code_note: str = ""
    ram_constants: int = 0
    ram_code: int = 0

    @classmethod
    def of_plan(cls, plan: MemoryPlan, constants: int) -> Sizes:
        """What the plan fixes (no scratch, no code yet), with ``constants`` bytes
        of constants (the kernels', or before they exist the model file's)."""
        return cls(plan.workspace_bytes, constants,
                   plan.state_bytes, plan.io_bytes, None, "not generated yet",
                   plan.region_constants.get("ram", 0))

    @property
    def ram(self) -> int:
        return self.workspace + self.state + self.io + self.ram_constants + self.ram_code

    @property
    def flash(self) -> int:
        return self.constants + (self.code or 0)

    def to_json(self) -> dict:
        return {"workspace": self.workspace, "constants": self.constants,
                "state": self.state, "io": self.io, "code": self.code,
                "code_note": self.code_note,
                **({"ram_constants": self.ram_constants} if self.ram_constants else {}),
                **({"ram_code": self.ram_code} if self.ram_code else {})}

    def __str__(self) -> str:
        code = f"unknown ({self.code_note})" if self.code is None else f"{self.code} bytes"
        if self.ram_code:
            code += f" ({self.ram_code} copied to ram at start-up)"
        copied = (f" ({self.ram_constants} copied to ram at start-up)"
                  if self.ram_constants else "")
        return (f"workspace {self.workspace} bytes, constants {self.constants} bytes{copied}, "
                f"code {code}, state {self.state} bytes, caller i/o {self.io} bytes")


def check_fits_board(plan: MemoryPlan, graph: Graph, board, *, sizes: Sizes | None = None,
                     kernels=()) -> None:
    """:func:`check_fits` against an :class:`aot.target.Board`'s flash and the
    RAM its firmware leaves once the stack is reserved
    (``Memory.model_ram_bytes``).  Boards without a memory map (the host)
    always fit."""
    mem = board.memory
    if mem is None:
        return
    check_fits(plan, graph, ram_bytes=mem.model_ram_bytes, flash_bytes=mem.flash.length,
               where=board.tag, sizes=sizes, kernels=kernels,
               ram_detail=f" ({mem.ram.length} bytes of RAM less its {mem.stack_bytes}-byte "
                          "stack)")


def check_group_fits_board(group: str, members: dict[str, Sizes], shared: Sizes,
                           board) -> None:
    """:func:`check_fits_board` for a model group: ``shared`` are the group's
    sizes (the largest workspace once, every model's state, caller i/o,
    constants and code), ``members`` each model's own, named in the message."""
    mem = board.memory
    if mem is None:
        return
    ram, flash = mem.model_ram_bytes, mem.flash.length
    if shared.ram > ram:
        each = ", ".join(f"{n} {s.workspace}" for n, s in members.items())
        raise MemoryPlanError(
            f"model group {group!r} needs {shared.ram} bytes of RAM (shared workspace "
            f"{shared.workspace}, state {shared.state}, inputs/outputs {shared.io}) but "
            f"{board.tag} has {ram} ({mem.ram.length} bytes of RAM less its "
            f"{mem.stack_bytes}-byte stack); workspaces: {each}. Try a board with more RAM "
            "or fewer models.")
    if shared.flash > flash:
        each = ", ".join(f"{n} {s.flash}" for n, s in members.items())
        raise MemoryPlanError(
            f"model group {group!r} needs {shared.flash} bytes of flash (constants "
            f"{shared.constants}, code {shared.code or 0}) but {board.tag} has {flash}; "
            f"per model: {each}. Try a board with more flash or fewer models.")


def _largest(plan: MemoryPlan, n: int = 3) -> str:
    items = sorted(((t.type.nbytes, t.name) for b in plan.buffers for t in b.tensors),
                   reverse=True)[:n]
    return ", ".join(f"{name!r} ({size} bytes)" for size, name in items)


def _largest_constants(graph: Graph, kernels, n: int = 3) -> str:
    if kernels:
        heavy = sorted(((k.constant_bytes, k.name, "+".join(k.op_names)) for k in kernels),
                       reverse=True)[:n]
        return ", ".join(f"{name} {ops} ({size} bytes)" for size, name, ops in heavy)
    consts = sorted(((t.type.nbytes, t.name) for t in graph.constants()), reverse=True)[:n]
    return ", ".join(f"{name!r} ({size} bytes)" for size, name in consts)


def check_fits(plan: MemoryPlan, graph: Graph, *, ram_bytes: int | None = None,
               flash_bytes: int | None = None, where: str = "the target",
               sizes: Sizes | None = None, kernels=(), ram_detail: str = "") -> None:
    """Raise :class:`MemoryPlanError` if the model needs more RAM or flash than given.

    RAM holds the workspace, the state and (with caller buffers) the
    inputs and outputs; flash holds the constants and the code.  ``sizes``
    are the model's sizes so far (by default what the plan fixes, with the
    constants of ``kernels`` when given); the compiler checks once after
    planning and again with the scratch and the measured code.  The message
    names both sizes, each part, and the largest tensors or constants;
    ``ram_detail`` says where ``ram_bytes`` comes from.
    """
    if sizes is None:
        # Before the kernels exist, the constants as the model file holds them
        # (the kernels' layouts and requantization tables add to these).
        sizes = Sizes.of_plan(plan, sum(k.constant_bytes for k in kernels) if kernels
                              else sum(t.type.nbytes for t in graph.constants()))
    if ram_bytes is not None and sizes.ram > ram_bytes:
        scratch = " with kernel scratch" if sizes.workspace > plan.workspace_bytes else ""
        raise MemoryPlanError(
            f"model {graph.name!r} needs {sizes.ram} bytes of RAM (workspace "
            f"{sizes.workspace}{scratch}, state {sizes.state}, inputs/outputs {sizes.io}"
            + (f", constants copied to ram {sizes.ram_constants}" if sizes.ram_constants
               else "")
            + (f", code copied to ram {sizes.ram_code}" if sizes.ram_code else "")
            + f") but {where} has {ram_bytes}{ram_detail}; largest tensors: {_largest(plan)}. "
            "Try a board with more RAM or a smaller model.")
    if flash_bytes is not None and sizes.flash > flash_bytes:
        code = f", code {sizes.code}" if sizes.code is not None else ""
        raise MemoryPlanError(
            f"model {graph.name!r} needs {sizes.flash} bytes of flash (constants "
            f"{sizes.constants}{code}) but {where} has {flash_bytes}; largest constants: "
            f"{_largest_constants(graph, kernels)}. "
            "Try a board with more flash or a smaller model.")


# ------------------------------------------------------------------------- report

def alive_bytes(plan: MemoryPlan) -> list[int]:
    """Workspace bytes held at each step (a buffer counts whole while alive)."""
    inner = [b for b in plan.buffers if not b.external]
    return [sum(b.size for b in inner if b.start <= s <= b.end) for s in range(len(plan.steps))]


def peak_step(plan: MemoryPlan) -> tuple[int, int]:
    """``(step, bytes)`` of the step that holds the most workspace bytes (the
    first of equals); ``(0, 0)`` without steps."""
    alive = alive_bytes(plan)
    if not alive:
        return 0, 0
    step = max(range(len(alive)), key=lambda s: (alive[s], -s))
    return step, alive[step]


_MARKS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _short(name: str, width: int = 40) -> str:
    return name if len(name) <= width else name[:width - 3] + "..."


def region_rows(plan: MemoryPlan) -> list[tuple[str, int, int | None, int]]:
    """``(region, workspace bytes, speed, constant bytes)`` of every memory the
    plan uses: the main workspace (``ram``) first, then each other region
    (:mod:`aot.executor.regions`); constants are those copied there at start-up."""
    speeds, consts = plan.region_speeds, plan.region_constants
    rows = [("ram", plan.workspace_bytes, speeds.get("ram"), consts.get("ram", 0))]
    names = list(dict.fromkeys([*plan.regions, *consts, plan.stack_region]))
    names = [r for r in names if r and r != "ram"]
    rows += [(r, plan.regions.get(r, 0), speeds.get(r), consts.get(r, 0)) for r in names]
    return rows


def format_memory_report(plan: MemoryPlan, width: int = 64, *,
                         constants: int | None = None) -> str:
    """The plan as a table, an ASCII chart of offsets over steps per memory
    region, and the totals.

    Below the table, one line per alias: ``view: y of x`` (a view shares
    its input's bytes) and ``in place: y over x`` (a kernel writes ``y`` over
    ``x``).  In each chart (the main workspace, then every other region the
    plan uses) a row is a step and a column ``region bytes / width``; a
    buffer's letter (from the table) marks the bytes it holds while alive,
    ``.`` is free.  With several regions the totals list each region's
    workspace bytes, constants copied there and speed rank.  ``constants``
    is the compile's one constants size (``Sizes.constants``: the arrays the
    generated C defines); the plan alone does not know it, so without it the
    totals leave it out.
    """
    inner = [b for b in plan.buffers if not b.external]
    marks = {id(b): _MARKS[i % len(_MARKS)] for i, b in enumerate(inner)}
    lines = [f"{'id':<3}{'tensor':<32}{'bytes':>9}{'offset':>9}  steps"]
    for b in plan.buffers:
        mark = marks.get(id(b), "-")
        names = "=".join(t.name for t in b.tensors)
        if len(names) > 30:
            names = names[:27] + "..."
        where = "caller" if b.external else (f"{b.region}+{b.offset}" if b.region
                                             else str(b.offset))
        lines.append(f"{mark:<3}{names:<32}{b.size:>9}{where:>9}  {b.start}-{b.end}")
    for out, src, how in plan.aliases:
        link = {"in place": "over", "overlap": "over part of"}.get(how, "of")
        lines.append(f"{how + ':':<10}{_short(out)} {link} {_short(src)}")
    several = bool(plan.regions)
    charts = [(r, n) for r, n, _, _ in region_rows(plan) if r == "ram" or n]
    for region, total_bytes in charts:
        mine = [b for b in inner if (b.region or "ram") == region]
        lines.append("")
        total = max(total_bytes, 1)
        per = -(-total // width)
        head = f"{region} (the workspace): " if several and region == "ram" else \
            (f"{region}: " if several else "")
        lines.append(f"{head}offset 0 .. {total_bytes} bytes, {per} bytes per column")
        for s, name in enumerate(plan.steps):
            row = ["."] * width
            for b in mine:
                if b.start <= s <= b.end and b.size:
                    first = b.offset // per
                    last = (b.offset + b.size - 1) // per
                    for c in range(first, min(last, width - 1) + 1):
                        row[c] = marks[id(b)]
            lines.append(f"{s:>4} |{''.join(row)}| {name}")
    lines.append("")
    cands = ", ".join(f"{k} {v}" for k, v in plan.candidates.items())
    lines.append(f"workspace {plan.workspace_bytes} bytes ({plan.algorithm}; {cands})")
    if several or plan.region_constants or plan.stack_region:
        lines.append("regions: " + ", ".join(
            f"{r} {n} bytes" + (f" + {c} bytes of constants" if c else "")
            + (f" + the {plan.stack_bytes}-byte stack" if r == plan.stack_region else "")
            + (f" (speed {s})" if s else "")
            for r, n, s, c in region_rows(plan)))
    known = "" if constants is None else f"constants {constants} bytes   "
    lines.append(f"lower bound {plan.lower_bound} bytes   {known}state {plan.state_bytes} "
                 f"bytes   caller i/o {plan.io_bytes} bytes")
    if plan.steps:
        step, held = peak_step(plan)
        lines.append(f"peak: step {step} {plan.steps[step]} holds {held} bytes of buffers"
                     + (" (some overlapping)" if held > sum(plan.regions.values())
                        + plan.workspace_bytes else ""))
    return "\n".join(lines) + "\n"
