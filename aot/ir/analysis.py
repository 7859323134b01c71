"""Static facts about a graph: MACs, parameter bytes, activation memory.

Definitions (the ones MLPerf Tiny and ``BASELINE.md`` use):

* conv2d: ``N*OH*OW*OC*KH*KW*IC`` multiply-accumulates;
* depthwise_conv2d: ``N*OH*OW*OC*KH*KW``;
* transpose_conv2d: ``N*IH*IW*IC*KH*KW*OC`` (each input pixel times each
  filter tap, as TFLM's scatter counts them; taps cropped by the padding
  included);
* dense: ``rows*units*depth`` (outputs x input depth);
* batch_matmul: ``outputs*depth`` (every output element of the broadcast
  batch is one dot product over the shared inner axis);
* svdf: ``batch*filters*(depth + memory)`` (feature then time filter);
* lstm: ``steps*batch*4*cells*(depth + outputs)`` plus the projection
  ``steps*batch*outputs*cells`` when there is one;
* every other operator: 0 (its arithmetic is not multiply-accumulate bound).

Parameter bytes are the bytes of the graph's constants.  Operands that a
frontend turns into attributes (reshape shapes, pad widths, mean axes) are
not constants of the graph and are not counted.

Activation memory, for the graph's own node order: a tensor is live from
the step that produces it (graph inputs: from the start) to the last step
that reads it (graph outputs: to the end).  :func:`activation_peak` reports
the largest total size of the tensors live at one step, both with the graph
inputs and outputs counted and without them (the generated code receives
those from the caller, so they are not in its workspace).  No tensor
shares memory with another (a reshape's output is counted apart from its
input), so any planner that keeps the order and does not alias needs at
least this much.  Constants live in flash and variables persist between
invocations; both are reported apart.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from aot.ir.graph import Graph, Node


def node_macs(node: Node) -> int:
    """Multiply-accumulates of one node, by the definitions above."""
    op = node.op
    out = node.outputs[0].shape
    if op == "conv2d":
        oc, kh, kw, ic = node.inputs[1].shape
        return out[0] * out[1] * out[2] * oc * kh * kw * ic
    if op == "depthwise_conv2d":
        _, kh, kw, oc = node.inputs[1].shape
        return out[0] * out[1] * out[2] * oc * kh * kw
    if op == "transpose_conv2d":
        n, ih, iw, ic = node.inputs[0].shape
        oc, kh, kw, _ = node.inputs[1].shape
        return n * ih * iw * ic * kh * kw * oc
    if op == "dense":
        units, depth = node.inputs[1].shape
        return node.inputs[0].type.size // depth * units * depth
    if op == "batch_matmul":
        lhs = node.inputs[0].shape
        depth = lhs[-2] if node.attrs["adj_x"] else lhs[-1]
        return node.outputs[0].type.size * depth
    if op == "svdf":
        batch, depth = node.inputs[0].shape
        filters, memory = node.inputs[2].shape
        return batch * filters * (depth + memory)
    if op == "lstm":
        steps, batch = node.inputs[0].shape[:2]
        cells, depth = node.inputs[2].shape
        outputs = node.inputs[6].shape[1]
        projection = outputs * cells if node.inputs[16] is not None else 0
        return steps * batch * (4 * cells * (depth + outputs) + projection)
    return 0


@dataclass(frozen=True)
class ActivationPeak:
    """Peak live bytes and the node index (0-based) where it is reached."""

    bytes_with_io: int
    step_with_io: int
    bytes_without_io: int
    step_without_io: int


def activation_peak(graph: Graph) -> ActivationPeak:
    """Largest total bytes of tensors live at one step (see the module docstring)."""
    last = len(graph.nodes) - 1
    start: dict[int, int] = {id(t): 0 for t in graph.inputs}
    end: dict[int, int] = {}
    size: dict[int, int] = {id(t): t.type.nbytes for t in graph.inputs}
    for i, node in enumerate(graph.nodes):
        for t in node.inputs:
            if t is not None and t.kind in ("input", "activation"):
                end[id(t)] = i
        for t in node.outputs:
            start[id(t)] = i
            end.setdefault(id(t), i)
            size[id(t)] = t.type.nbytes
    io = {id(t) for t in graph.inputs} | {id(t) for t in graph.outputs}
    for t in graph.outputs:
        if id(t) in start:
            end[id(t)] = last
    best = [0, 0, 0, 0]
    for step in range(max(len(graph.nodes), 1)):
        live = [k for k in start if start[k] <= step <= end.get(k, start[k])]
        with_io = sum(size[k] for k in live)
        without_io = sum(size[k] for k in live if k not in io)
        if with_io > best[0]:
            best[0:2] = with_io, step
        if without_io > best[2]:
            best[2:4] = without_io, step
    return ActivationPeak(*best)


def summarize(graph: Graph) -> dict:
    """Everything ``aot inspect`` reports, as JSON-ready data."""
    layers = []
    for i, node in enumerate(graph.nodes):
        params = sum(t.type.nbytes for t in node.inputs if t is not None and t.is_constant)
        layers.append({
            "index": i,
            "op": node.op,
            "name": node.name,
            "output": node.outputs[0].type.to_json(),
            "macs": node_macs(node),
            "param_bytes": params,
        })
    peak = activation_peak(graph)
    tensors = graph.tensors()

    def io(t):
        return {"name": t.name, **t.type.to_json()}

    return {
        "name": graph.name,
        "inputs": [io(t) for t in graph.inputs],
        "outputs": [io(t) for t in graph.outputs],
        "operators": dict(sorted(Counter(n.op for n in graph.nodes).items())),
        "layers": layers,
        "tensors": [
            {"name": t.name, "kind": t.kind, "bytes": t.type.nbytes, **t.type.to_json()}
            for t in tensors
        ],
        "total_macs": sum(layer["macs"] for layer in layers),
        "param_bytes": sum(t.type.nbytes for t in tensors if t.kind == "constant"),
        "state_bytes": sum(t.type.nbytes for t in tensors if t.kind == "variable"),
        "activation_peak_bytes": peak.bytes_with_io,
        "activation_peak_node": peak.step_with_io,
        "workspace_lower_bound_bytes": peak.bytes_without_io,
        "workspace_peak_node": peak.step_without_io,
    }
