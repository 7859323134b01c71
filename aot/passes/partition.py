"""Partitioning for external codegens: which layers a library such as CMSIS-NN implements.

Three passes, run before :func:`aot.passes.fuse_ops` so that fusion works
on what is left:

``annotate_external``
    Matches every node against the pattern tables in the context
    (``partition.tables``, one :class:`PatternTable` per codegen named in the
    target's ``-libs``, in that order).  A pattern is a chain of operators,
    each the only reader of the previous one's output, plus a predicate on
    the matched nodes (attributes, dtypes, quantization).  The first table
    whose pattern matches and whose predicate accepts claims the nodes as
    one *region*; a predicate's refusal is kept (``declined``) so the
    compile report can say why a layer stayed with aot's kernels.
``merge_external``
    Joins a region to the next one of the same codegen when the codegen's
    table allows merging (``merge=True``) and the second region is the only
    reader of the first one's output: one function instead of two, the
    intermediate tensor becomes the codegen's business.
``partition_external``
    Turns the regions into :class:`~aot.passes.FusedGroup` records of kind
    ``external`` marked with their codegen, except regions holding a node
    named in ``partition.exclude`` (the per-layer choice keeps those with
    aot's kernels).  :func:`aot.passes.fuse_ops` keeps these groups as they
    are and groups the other nodes.

Without tables the three passes return the graph unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from aot.errors import PassError, did_you_mean
from aot.ir import REGISTRY, Graph, Node
from aot.passes.annotated import FusedGroup, annotations, rebuild
from aot.passes.base import PassConfig, graph_pass

#: ``check(nodes, graph)``: None when the codegen implements the matched
#: nodes, else the reason it does not (shown in the compile report).
Check = Callable[[tuple[Node, ...], Graph], "str | None"]


@dataclass(frozen=True)
class Pattern:
    """A chain of operators an external codegen implements as one function."""

    name: str
    ops: tuple[str, ...]
    check: Check | None = None


@dataclass(frozen=True)
class PatternTable:
    """The patterns of one external codegen, tried in order.

    Every operator a pattern names must be an IR operator: a table naming an
    unknown one is refused when it is built, naming the codegen and pattern.
    """

    codegen: str
    patterns: tuple[Pattern, ...]
    merge: bool = False

    def __post_init__(self) -> None:
        for p in self.patterns:
            if not p.ops:
                raise PassError(f"pattern table of codegen {self.codegen!r}: pattern "
                                f"{p.name!r} names no operator")
            for op in p.ops:
                if op not in REGISTRY:
                    raise PassError(
                        f"pattern table of codegen {self.codegen!r}: pattern {p.name!r} "
                        f"names the unknown operator {op!r}{did_you_mean(op, REGISTRY)}; "
                        "`aot operators` lists the IR operators")


def _tables() -> tuple[PatternTable, ...]:
    tables = PassConfig.current().get("partition.tables")
    for t in tables:
        if not isinstance(t, PatternTable):
            raise PassError(f"partition.tables holds {t!r}, not a PatternTable")
    return tables


def _chain(node: Node, ops: tuple[str, ...], users, outputs) -> tuple[Node, ...] | None:
    """``node`` and the nodes after it, each the only reader of the previous
    one's single output, whose operators are ``ops``; None if they are not."""
    if node.op != ops[0]:
        return None
    chain = [node]
    for op in ops[1:]:
        last = chain[-1]
        if len(last.outputs) != 1 or id(last.outputs[0]) in outputs:
            return None
        readers = users.get(id(last.outputs[0]), [])
        if len(readers) != 1 or readers[0].op != op:
            return None
        chain.append(readers[0])
    return tuple(chain)


def _check(table: PatternTable, pattern: Pattern, chain, graph) -> str | None:
    """The pattern's predicate on ``chain``; a predicate that fails is an error
    naming the codegen, the pattern and the node (never a traceback)."""
    if pattern.check is None:
        return None
    try:
        reason = pattern.check(chain, graph)
    except Exception as err:  # a bug in a codegen's predicate
        raise PassError(f"pattern {pattern.name!r} of codegen {table.codegen!r} failed on "
                        f"{chain[0].op} {chain[0].name!r}: {type(err).__name__}: {err}") from err
    if reason is not None and not isinstance(reason, str):
        raise PassError(f"pattern {pattern.name!r} of codegen {table.codegen!r} returned "
                        f"{reason!r} for {chain[0].name!r}: a predicate returns None to accept "
                        "or a reason (str) to decline")
    return reason


def _region_name(i: int, codegen: str, nodes) -> str:
    ident = "".join(c if c.isalnum() else "_" for c in codegen)
    return f"external_{i}_{ident}_" + "_".join(n.op for n in nodes)


@graph_pass("annotate_external", opt_level=0)
def annotate_external(graph: Graph) -> Graph:
    """Mark the chains of nodes each external codegen of ``-libs`` implements (regions).

    Nodes are visited in order; for each, the tables are tried in ``-libs``
    order and each table's patterns in order.  The first pattern whose
    operator chain matches and whose predicate accepts claims the chain;
    refusals by predicates are recorded as ``declined`` for the report.
    Views (reshapes sharing their input's buffer) are never claimed.
    """
    tables = _tables()
    if not tables:
        return graph
    ann = annotations(graph)
    users = graph.consumers()
    outputs = {id(t) for t in graph.outputs}
    claimed: set[Node] = set()
    regions: list[FusedGroup] = []
    declined: dict[Node, str] = {}
    for node in graph.nodes:
        if node in claimed or node in ann.views:
            continue
        found = None
        for table in tables:
            for pattern in table.patterns:
                chain = _chain(node, pattern.ops, users, outputs)
                if chain is None or any(n in claimed or n in ann.views for n in chain):
                    continue
                reason = _check(table, pattern, chain, graph)
                if reason is None:
                    found = (table, pattern, chain)
                    break
                declined.setdefault(node, f"{table.codegen}: {reason}")
            if found:
                break
        if found:
            table, pattern, chain = found
            claimed.update(chain)
            declined.pop(node, None)
            regions.append(FusedGroup(_region_name(len(regions), table.codegen, chain), chain,
                                      chain[0], "external", codegen=table.codegen,
                                      pattern=pattern.name))
    return rebuild(graph, regions=tuple(regions), declined=declined)


@graph_pass("merge_external", opt_level=0)
def merge_external(graph: Graph) -> Graph:
    """Join consecutive regions of one codegen whose table allows merging.

    Region B joins region A when A has one output, B is its only reader,
    the output is not a graph output, and both belong to the same codegen
    with ``merge=True``.  The joined region keeps A's pattern name plus B's
    (``conv2d+softmax``).
    """
    tables = {t.codegen: t for t in _tables()}
    ann = annotations(graph)
    if not any(t.merge for t in tables.values()) or len(ann.regions) < 2:
        return graph
    users = graph.consumers()
    outputs = {id(t) for t in graph.outputs}
    merged: list[FusedGroup] = []
    for region in ann.regions:
        prev = merged[-1] if merged else None
        if prev is not None and prev.codegen == region.codegen and tables[region.codegen].merge:
            outs = prev.outputs(graph)
            if (len(outs) == 1 and id(outs[0]) not in outputs
                    and {id(u) for u in users.get(id(outs[0]), [])}
                    <= {id(n) for n in region.nodes}):
                nodes = prev.nodes + region.nodes
                merged[-1] = replace(prev, nodes=nodes,
                                     pattern=f"{prev.pattern}+{region.pattern}")
                continue
        merged.append(region)
    if len(merged) == len(ann.regions):
        return graph
    merged = [replace(r, name=_region_name(i, r.codegen, r.nodes)) for i, r in enumerate(merged)]
    return rebuild(graph, regions=tuple(merged))


@graph_pass("partition_external", opt_level=0)
def partition_external(graph: Graph) -> Graph:
    """Make each region a group of kind ``external`` for its codegen.

    A region holding a node named in ``partition.exclude`` stays with aot's
    kernels (its nodes are fused like any others).  The node order is
    unchanged; :func:`fuse_ops` then groups the remaining nodes.
    """
    ann = annotations(graph)
    if not ann.regions:
        return graph
    exclude = PassConfig.current().get("partition.exclude")
    groups = tuple(r for r in ann.regions if not any(n.name in exclude for n in r.nodes))
    return rebuild(graph, groups=groups)
