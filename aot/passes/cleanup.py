"""Dead-code removal and constant folding."""

from __future__ import annotations

from aot.ir import Graph, Node, Tensor
from aot.passes.annotated import AnnotatedGraph, rebuild, substitute
from aot.passes.base import graph_pass
from aot.reference.interpreter import InterpretError, run


def _has_effects(node: Node) -> bool:
    """Nodes that update variable tensors (state) must run even if their output is unused."""
    return any(t is not None and t.kind == "variable" for t in node.inputs)


def prune(graph: Graph) -> AnnotatedGraph:
    """``graph`` without the nodes whose results nothing needs."""
    needed = {id(t) for t in graph.outputs}
    keep: list[Node] = []
    for node in reversed(graph.nodes):
        if _has_effects(node) or any(id(t) in needed for t in node.outputs):
            keep.append(node)
            needed.update(id(t) for t in node.inputs if t is not None)
    keep.reverse()
    return rebuild(graph, keep)


@graph_pass("remove_dead_code", opt_level=0)
def remove_dead_code(graph: Graph) -> Graph:
    """Remove nodes whose outputs are neither graph outputs nor read by a kept node.

    Nodes that read a variable tensor are kept: they update state that the
    next invocation sees.  Graph inputs stay, even unused ones, because they
    are the model's calling convention.
    """
    pruned = prune(graph)
    return graph if len(pruned.nodes) == len(graph.nodes) else pruned


@graph_pass("fold_constants", opt_level=1)
def fold_constants(graph: Graph) -> Graph:
    """Replace nodes whose inputs are all constants by constants holding their result.

    Results are computed with the reference interpreter, so folding cannot
    change a single bit of the model's output.  Nodes that read state are
    never folded, nor nodes that make a graph output (a model whose output is
    known at compile time, e.g. an ONNX Shape, still writes it at run time);
    nodes the interpreter cannot run are left alone.
    """

    mapping: dict[int, Tensor] = {}
    folded: set[Node] = set()
    outputs = {id(t) for t in graph.outputs}
    for node in graph.nodes:
        if any(id(t) in outputs for t in node.outputs):
            continue  # the caller's output buffer must be written by a step
        args = [mapping.get(id(t), t) if t is not None else None for t in node.inputs]
        present = [t for t in args if t is not None]
        if not present or not all(t.kind == "constant" for t in present):
            continue
        probe = Node(node.op, args, node.outputs, dict(node.attrs), node.name)
        try:
            values = run(Graph([], node.outputs, [probe], graph.name), [])
        except InterpretError:
            continue
        for t, value in zip(node.outputs, values, strict=True):
            mapping[id(t)] = Tensor(t.name, t.type, "constant", value)
        folded.add(node)
    if not folded:
        return graph
    return substitute(graph, mapping, drop=folded)
