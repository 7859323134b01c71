"""Text form of an annotated graph: the IR printer's lines, grouped and annotated.

Nodes print exactly as :func:`aot.ir.format_graph` prints them (same
tensor numbering); fused groups wrap their nodes in a block
``group NAME kind [anchor=OP] { ... }``, and a node's annotations follow it
as a comment (``# view``, ``# requant(...)``).  After :func:`aot.passes.place_cores`
a group's line ends with its cores and parts (``on cpu:0 rows[0:13] shared,
cpu:1 rows[13:25] shared``) and each barrier is a line of its own
(``barrier (waits for T)``) before the group it holds back, or at the end.
"""

from __future__ import annotations

from aot.ir import Graph, format_graph
from aot.passes.annotated import annotations


def format_annotated(graph: Graph) -> str:
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
