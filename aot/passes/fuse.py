"""Fusion by operator pattern: which nodes become one kernel."""

from __future__ import annotations

from aot.ir import Graph, Node, get_op
from aot.passes.annotated import FusedGroup, annotations, rebuild
from aot.passes.base import PassConfig, graph_pass

_EPILOGUE = ("elementwise", "broadcast")
_ANCHORS = ("out_elemwise_fusable", "reduction")


@graph_pass("fuse_ops", opt_level=0)
def fuse_ops(graph: Graph) -> Graph:
    """Group nodes into kernels by their op pattern (see :data:`aot.ir.PATTERNS`).

    Walking the nodes in order, a node joins the group of the node that
    produced one of its inputs when that input has no other reader and is
    not a graph output, and:

    * it is elementwise or broadcast (bias add, requantize, activation, a
      residual add): it joins any fused group, after a conv/dense/pool/mean
      anchor or a chain of elementwise and injective nodes;
    * it is injective (pad, transpose, slice, concatenate): it joins only a
      group without an anchor (kernels read their inputs as plain buffers),
      and only when ``fuse.injective`` is on (when off, injective nodes
      stand alone and nothing joins them).

    Groups of kind ``external`` (made by :func:`partition_external`) stay
    as they are: no node joins them and their nodes join nothing else.
    Anchors (conv, dense, pool, mean) always start a group; opaque nodes
    (softmax, svdf, lstm) are groups of one; reshapes marked as views by
    ``canonicalize`` are groups of kind ``view`` that lower to nothing.  A
    group holds at most ``fuse.max_depth`` nodes.

    Every intermediate tensor of a group is read inside the group only, so
    each group has one output and can run where its last node was; the
    node order is rearranged to keep each group's nodes contiguous.  This
    changes no node, so the graph computes the same values.
    """
    ctx = PassConfig.current()
    max_depth = ctx.get("fuse.max_depth")
    injective = ctx.get("fuse.injective")
    views = annotations(graph).views
    external = {n: g for g in annotations(graph).groups if g.kind == "external"
                for n in g.nodes}
    outputs = {id(t) for t in graph.outputs}
    users = graph.consumers()
    producer: dict[int, int] = {}  # tensor id -> index of the group that made it
    groups: list[dict] = []
    placed: dict[int, int] = {}  # id of an external group -> index in groups
    for node in graph.nodes:
        pattern = get_op(node.op).pattern
        target = None
        if node in external:
            ext = external[node]
            if id(ext) not in placed:
                groups.append({"nodes": [], "anchor": ext.anchor, "kind": "external",
                               "closed": True, "external": ext})
                placed[id(ext)] = len(groups) - 1
            target = placed[id(ext)]
            groups[target]["nodes"].append(node)
            for t in node.outputs:
                producer[id(t)] = target
            continue
        if node not in views and (pattern in _EPILOGUE
                                  or (pattern == "injective" and injective)):
            for t in node.inputs:
                if t is None or id(t) not in producer:
                    continue
                g = groups[producer[id(t)]]
                if (g["kind"] == "fused" and not g["closed"] and len(users[id(t)]) == 1
                        and id(t) not in outputs and len(g["nodes"]) < max_depth
                        and (pattern in _EPILOGUE or g["anchor"] is None)):
                    target = producer[id(t)]
                    break
        if target is None:
            kind = "view" if node in views else "opaque" if pattern == "opaque" else "fused"
            anchor = node if pattern in _ANCHORS else None
            closed = pattern == "injective" and not injective
            groups.append({"nodes": [node], "anchor": anchor, "kind": kind, "closed": closed})
            target = len(groups) - 1
        else:
            groups[target]["nodes"].append(node)
        for t in node.outputs:
            producer[id(t)] = target
    order = {id(n): i for i, n in enumerate(graph.nodes)}
    groups.sort(key=lambda g: order[id(g["nodes"][-1])])
    records = []
    for i, g in enumerate(groups):
        ops = "_".join(n.op for n in g["nodes"])
        ext = g.get("external")
        records.append(FusedGroup(f"{g['kind']}_{i}_{ops}", tuple(g["nodes"]), g["anchor"],
                                  g["kind"], codegen=ext.codegen if ext else None,
                                  pattern=ext.pattern if ext else None))
    nodes: list[Node] = [n for g in records for n in g.nodes]
    return rebuild(graph, nodes, groups=tuple(records))
