"""A stable text form of a :class:`~aot.ir.graph.Graph`, for golden tests and dumps.

One line per node: ``%3 = conv2d(%0, @1, @2) {activation=relu, ...} : int8[1,25,5,64] q(...)``.
Activations and inputs print as ``%N``, constants as ``@N`` and variables as
``$N``, numbered in first-use order, so the text depends only on the graph's
structure, never on tensor names or object ids.  Attributes print sorted by
name.  Constants are listed after the signature with their type only.
"""

from __future__ import annotations

from aot.ir.graph import Graph, Tensor

_SIGIL = {"input": "%", "activation": "%", "constant": "@", "variable": "$"}


def _fmt_attr(value) -> str:
    if isinstance(value, float):
        return f"{value:.9g}"
    if isinstance(value, tuple):
        return "[" + ",".join(_fmt_attr(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def format_graph(graph: Graph) -> str:
    numbers: dict[int, str] = {}
    counters = {"%": 0, "@": 0, "$": 0}

    def ref(t: Tensor | None) -> str:
        if t is None:
            return "_"
        if id(t) not in numbers:
            sigil = _SIGIL[t.kind]
            numbers[id(t)] = f"{sigil}{counters[sigil]}"
            counters[sigil] += 1
        return numbers[id(t)]

    params = ", ".join(f"{ref(t)}: {t.type}" for t in graph.inputs)
    lines = [f"graph {graph.name}({params}) {{"]
    for t in graph.tensors():
        if t.kind in ("constant", "variable"):
            lines.append(f"  {ref(t)}: {t.kind} {t.type}")
    for node in graph.nodes:
        args = ", ".join(ref(t) for t in node.inputs)
        attrs = ", ".join(f"{k}={_fmt_attr(v)}" for k, v in sorted(node.attrs.items()))
        outs = ", ".join(ref(t) for t in node.outputs)
        types = ", ".join(str(t.type) for t in node.outputs)
        attr_text = f" {{{attrs}}}" if attrs else ""
        lines.append(f"  {outs} = {node.op}({args}){attr_text} : {types}")
    lines.append(f"  return {', '.join(ref(t) for t in graph.outputs)}")
    lines.append("}")
    return "\n".join(lines) + "\n"
