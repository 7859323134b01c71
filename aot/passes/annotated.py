"""Graphs that carry what the passes learned: views, fused groups, folded requantization.

The IR's :class:`~aot.ir.Graph` holds operators and tensors only; the
operator schemas leave no room for compiler facts.  Passes record those
facts in an :class:`Annotations` record attached to an
:class:`AnnotatedGraph`, a ``Graph`` subclass, so every stage that reads
graphs (the interpreter, the printer, the planner) still accepts it.
``str()`` of an annotated graph is :func:`format_annotated` (end of this module).

Annotations are keyed by :class:`~aot.ir.Node` object (nodes compare by
identity).  When a pass rebuilds a graph with :func:`rebuild`, annotations
of nodes that survive unchanged are kept and those of removed or replaced
nodes are dropped, so a stale fact can never describe a different node.

* ``views``: nodes (reshape) whose output is the input's bytes under
  another shape; the memory planner gives both one buffer and the lowering
  emits no code for them.
* ``groups``: :class:`FusedGroup` records, each a contiguous run of nodes in
  the node order that becomes one kernel.  Every node is in exactly one
  group once :func:`aot.passes.fuse_ops` has run.
* ``quant``: :class:`QuantParams` per integer node whose fixed-point
  multipliers and shifts were computed at compile time.
* ``placement``: per node, the :class:`~aot.ir.DeviceAnnotation` of each
  core that computes part of it (one covering the whole output when it is
  not split), and ``barriers``: the :class:`Barrier` points where every core
  meets (:func:`aot.passes.place_cores`; empty on one core).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np

from aot.ir import DeviceAnnotation, Graph, Node, Tensor, format_graph


@dataclass(frozen=True, eq=False)
class FusedGroup:
    """Nodes that become one kernel, in execution order.

    ``anchor`` is the heavy node (conv, dense, pool, reduction) the others
    fused around, or None for a group of elementwise/injective nodes.
    ``kind`` is ``"fused"``, ``"opaque"`` (a node that fuses with nothing),
    ``"view"`` (a reshape that is a view: no kernel at all) or
    ``"external"`` (a function an external codegen generates: ``codegen``
    names it, ``pattern`` the pattern of its table that matched;
    :mod:`aot.passes.partition`).
    """

    name: str
    nodes: tuple[Node, ...]
    anchor: Node | None
    kind: str = "fused"
    codegen: str | None = None   # kind "external": the external codegen that implements it
    pattern: str | None = None   # kind "external": the name of the pattern it matched

    def outputs(self, graph: Graph) -> list[Tensor]:
        """Tensors the group writes that something outside it reads (or graph outputs)."""
        inside = {id(n) for n in self.nodes}
        users = graph.consumers()
        result = {id(t): t for t in graph.outputs}
        outs = []
        for node in self.nodes:
            for t in node.outputs:
                if id(t) in result or any(id(u) not in inside for u in users.get(id(t), [])):
                    outs.append(t)
        return outs

    def inputs(self) -> list[Tensor]:
        """Tensors the group reads that it does not produce, in first-use order."""
        made = {id(t) for n in self.nodes for t in n.outputs}
        seen: dict[int, Tensor] = {}
        for node in self.nodes:
            for t in node.inputs:
                if t is not None and id(t) not in made:
                    seen.setdefault(id(t), t)
        return list(seen.values())


@dataclass(frozen=True, eq=False)
class QuantParams:
    """Requantization constants of one integer node, folded at compile time.

    ``multiplier``/``shift`` are per output channel (length 1 when per
    tensor), as ``QuantizeMultiplier`` gives them: the real scale is
    ``multiplier * 2**(shift - 31)``.  ``input_offset`` is minus the input
    zero point (what kernels add to each input value), ``output_offset`` the
    output zero point, ``clamp`` the integer range after the fused
    activation.  ``extra`` holds operator-specific constants (the input
    multipliers and left shift of ADD/SUB).
    """

    multiplier: np.ndarray
    shift: np.ndarray
    input_offset: int
    output_offset: int
    clamp: tuple[int, int]
    wide: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        def short(a: np.ndarray) -> str:
            vals = [str(int(v)) for v in a[:3]]
            return "[" + ",".join(vals) + (",...]" if len(a) > 3 else "]")

        text = (f"requant(mult={short(self.multiplier)}, shift={short(self.shift)}, "
                f"in_off={self.input_offset}, out_off={self.output_offset}, "
                f"clamp=[{self.clamp[0]},{self.clamp[1]}]")
        if self.wide:
            text += ", wide"
        for key in sorted(self.extra):
            text += f", {key}={self.extra[key]}"
        return text + ")"


@dataclass(frozen=True, eq=False)
class Barrier:
    """Every core waits here until all have finished what came before.

    ``before`` is the first node that must not start earlier (None: the end
    of the inference, before the outputs are returned); ``waits_for`` names
    the tensors written on another core that made the barrier necessary.
    """

    before: Node | None
    waits_for: tuple[str, ...]

    def __str__(self) -> str:
        where = self.before.name if self.before is not None else "the end"
        return f"barrier before {where} (waits for {', '.join(self.waits_for)})"


@dataclass(frozen=True)
class Annotations:
    views: frozenset[Node] = frozenset()
    groups: tuple[FusedGroup, ...] = ()
    quant: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    # External codegens (aot.passes.partition): the regions they claimed, and
    # per node the reason the codegens that matched it gave for declining it.
    regions: tuple[FusedGroup, ...] = ()
    declined: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    # Cores (aot.passes.placement): who computes which part of each node, and where they meet.
    placement: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    barriers: tuple[Barrier, ...] = ()

    def devices(self, node: Node) -> tuple[DeviceAnnotation, ...]:
        """The parts of ``node`` and the cores that compute them (core 0, whole,
        when the placement pass did not run)."""
        return self.placement.get(node, (DeviceAnnotation(),))

    @property
    def cores(self) -> int:
        """How many cores the placement uses (1 when the placement pass did not run)."""
        return 1 + max((d.core for parts in self.placement.values() for d in parts), default=0)

    def restrict(self, nodes: list[Node]) -> Annotations:
        """Drop facts about nodes not in ``nodes``; drop groups and regions that lost a node."""
        alive = set(nodes)
        return Annotations(
            views=frozenset(n for n in self.views if n in alive),
            groups=tuple(g for g in self.groups if all(n in alive for n in g.nodes)),
            quant=MappingProxyType({n: q for n, q in self.quant.items() if n in alive}),
            regions=tuple(g for g in self.regions if all(n in alive for n in g.nodes)),
            declined=MappingProxyType({n: r for n, r in self.declined.items() if n in alive}),
            placement=MappingProxyType({n: p for n, p in self.placement.items() if n in alive}),
            barriers=tuple(b for b in self.barriers if b.before is None or b.before in alive),
        )


class AnnotatedGraph(Graph):
    """A :class:`Graph` plus :class:`Annotations` (see the module docstring)."""

    def __init__(self, inputs, outputs, nodes, name: str = "main",
                 annotations: Annotations | None = None) -> None:
        super().__init__(inputs, outputs, nodes, name)
        self.annotations = (annotations or Annotations()).restrict(self.nodes)

    def __str__(self) -> str:
        return format_annotated(self)


def annotations(graph: Graph) -> Annotations:
    """The graph's annotations (empty for a plain :class:`Graph`)."""
    return getattr(graph, "annotations", Annotations())


def rebuild(graph: Graph, nodes: list[Node] | None = None, *,
            inputs: list[Tensor] | None = None, outputs: list[Tensor] | None = None,
            **changes) -> AnnotatedGraph:
    """A new graph like ``graph`` with some parts replaced; annotations carried over.

    ``changes`` replace fields of :class:`Annotations` (``views=``,
    ``groups=``, ``quant=``) before they are restricted to the new nodes.
    """
    ann = annotations(graph)
    for key in ("quant", "declined", "placement"):
        if key in changes and not isinstance(changes[key], MappingProxyType):
            changes[key] = MappingProxyType(dict(changes[key]))
    if changes:
        ann = replace(ann, **changes)
    return AnnotatedGraph(
        graph.inputs if inputs is None else inputs,
        graph.outputs if outputs is None else outputs,
        graph.nodes if nodes is None else nodes,
        graph.name,
        ann,
    )


def substitute(graph: Graph, mapping: dict[int, Tensor], drop: set[Node] = frozenset(),
               **changes) -> AnnotatedGraph:
    """Rewrite every use of tensor ``id -> replacement`` and remove nodes in ``drop``.

    Nodes whose inputs do not change are kept as the same objects (and keep
    their annotations); the others are copied with new inputs.
    """
    def sub(t: Tensor | None) -> Tensor | None:
        while t is not None and id(t) in mapping:
            t = mapping[id(t)]
        return t

    nodes = []
    renamed: dict[Node, Node] = {}
    for node in graph.nodes:
        if node in drop:
            continue
        new_inputs = [sub(t) for t in node.inputs]
        if all(a is b for a, b in zip(new_inputs, node.inputs)):
            nodes.append(node)
        else:
            copy = Node(node.op, new_inputs, node.outputs, dict(node.attrs), node.name)
            renamed[node] = copy
            nodes.append(copy)
    outputs = [sub(t) for t in graph.outputs]
    ann = annotations(graph)
    if renamed and "views" not in changes:
        changes["views"] = frozenset(renamed.get(n, n) for n in ann.views)
    return rebuild(graph, nodes, outputs=outputs, **changes)


def format_annotated(graph: Graph) -> str:
    """The text form of an annotated graph (``str(graph)``): the IR printer's
    lines, grouped and annotated.

    Nodes print exactly as :func:`aot.ir.format_graph` prints them (same
    tensor numbering); fused groups wrap their nodes in a block
    ``group NAME kind [anchor=OP] { ... }``, and a node's annotations follow it
    as a comment (``# view``, ``# requant(...)``).  After :func:`aot.passes.place_cores`
    a group's line ends with its cores and parts (``on cpu:0 rows[0:13] shared,
    cpu:1 rows[13:25] shared``) and each barrier is a line of its own
    (``barrier (waits for T)``) before the group it holds back, or at the end.
    """
    text = format_graph(graph).splitlines()
    ann = annotations(graph)
    extra = sum(1 for t in graph.tensors() if t.kind in ("constant", "variable"))
    head, body, tail = text[:1 + extra], text[1 + extra:1 + extra + len(graph.nodes)], \
        text[1 + extra + len(graph.nodes):]
    lines = {}
    region_of = {n: r for r in ann.regions for n in r.nodes}
    for node, line in zip(graph.nodes, body, strict=True):
        notes = []
        if node in ann.views:
            notes.append("view")
        if node in ann.quant:
            notes.append(str(ann.quant[node]))
        if node in region_of and not ann.groups:
            notes.append(f"region {region_of[node].name} for {region_of[node].codegen}")
        if node in ann.declined:
            notes.append(f"declined by {ann.declined[node]}")
        lines[node] = line + ("  # " + "; ".join(notes) if notes else "")
    out = list(head)
    barriers = {b.before: b for b in ann.barriers}
    if ann.groups:
        for g in ann.groups:
            anchor = f" anchor={g.anchor.op}" if g.anchor is not None else ""
            if g.codegen is not None:
                anchor += f" codegen={g.codegen} pattern={g.pattern}"
            if g.nodes[0] in ann.placement:
                anchor += " on " + ", ".join(str(d) for d in ann.placement[g.nodes[0]])
            if g.nodes[0] in barriers:
                out.append(f"  barrier (waits for {', '.join(barriers[g.nodes[0]].waits_for)})")
            out.append(f"  group {g.name} {g.kind}{anchor} {{")
            out += ["  " + lines[n] for n in g.nodes]
            out.append("  }")
        if None in barriers:
            out.append(f"  barrier (waits for {', '.join(barriers[None].waits_for)})")
    else:
        out += [lines[n] for n in graph.nodes]
    return "\n".join(out + tail) + "\n"
