"""Placement on the cores of one board: which core computes which part of each kernel.

:func:`place_cores` runs after :func:`aot.passes.fuse_ops` and works on its
fused groups (the future kernels).  With ``placement.cores`` = 1 (the
default) it returns the graph unchanged.  With N cores, walking the groups
in order:

1. **Split a heavy layer.**  A group anchored by a conv2d or
   depthwise_conv2d of batch 1 is split by *output rows*: core ``k`` computes
   rows ``[k * H // N, (k + 1) * H // N)`` of the NHWC output.  Row ``h`` of an
   NHWC tensor of batch 1 is bytes ``[h * W * C, (h + 1) * W * C)``, so every
   core writes a disjoint contiguous slice of the one output buffer (no
   concatenation); the input rows a part needs (its window plus the halo
   the kernel's height adds) are read-only and may overlap between cores.
   A dense layer of batch 1 is split by *output channels* the same way
   (its output ``[1, units]`` is one row).  A group is split only when its
   anchor has at least ``placement.min_macs`` multiply-accumulates, at least
   one row (channel) per core, no external codegen implements it, and every
   operand its fused tail reads either spans the whole output along the
   split axis (then each core reads its slice) or is broadcast along it.
2. **Independent branches side by side.**  Two consecutive groups that
   are not split, emit code (no view) and where the second reads nothing
   the first writes run at once: the first on core 0, the second on core 1.
3. **Synchronisation.**  After each such parallel step every core meets at
   a :class:`~aot.passes.annotated.Barrier` placed before the next group (or
   at the end of the inference), naming the tensors written on several
   cores.  The barrier sits at the next group and not at the first reader
   further on, because the memory plan may hand a buffer the parallel step
   still reads to the very next step.

Every node of a group gets the same tuple of
:class:`~aot.ir.DeviceAnnotation` (one per core that computes a part, memory
scope ``shared``: the boards this serves have no core-local RAM).  The pass
changes no node, tensor or order: executing the groups one after the other
and each part one after the other (:func:`part_node` gives a part as an
operator of its own) computes what the unsplit graph does, which
tests/cores/test_placement.py checks bit for bit on the shared models.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from aot.errors import PassError
from aot.ir import DeviceAnnotation, Graph, Node, Quantization, Tensor, TensorType
from aot.ir.analysis import node_macs
from aot.ir.ops import check_node
from aot.ir.types import DTYPES
from aot.passes.annotated import (AnnotatedGraph, Annotations, Barrier, FusedGroup,
                                  annotations, rebuild)
from aot.passes.base import PassConfig, graph_pass
from aot.passes.legalize import quant_params

#: The operators a group may be split on, and along which part of the output.
SPLIT_PART = {"conv2d": "rows", "depthwise_conv2d": "rows", "dense": "channels"}


@graph_pass("place_cores", opt_level=0)
def place_cores(graph: Graph) -> Graph:
    """Assign each kernel's parts to the board's cores (placement.cores; nothing on one core).

    See the module docstring for the policy: heavy conv2d/depthwise split by
    output rows, dense of batch 1 by output channels, independent groups
    side by side, and a barrier after every parallel step.
    """
    ctx = PassConfig.current()
    cores = ctx.get("placement.cores")
    if cores < 1:
        raise PassError(f"placement.cores = {cores}: give at least 1")
    if cores == 1:
        return graph
    groups = annotations(graph).groups
    if not groups and graph.nodes:
        raise PassError("place_cores places fused groups: it runs after fuse_ops, which "
                        "is disabled or has not run")
    min_macs = ctx.get("placement.min_macs")
    placement: dict[Node, tuple[DeviceAnnotation, ...]] = {}
    barriers: list[Barrier] = []
    pending: list[str] = []   # tensors written by a parallel step since the last barrier
    i = 0
    while i < len(groups):
        group = groups[i]
        if pending:
            barriers.append(Barrier(group.nodes[0], tuple(pending)))
            pending = []
        parts = split_parts(group, graph, cores, min_macs)
        if parts:
            for node in group.nodes:
                placement[node] = parts
            pending = [t.name for t in group.outputs(graph)]
            i += 1
            continue
        if i + 1 < len(groups) and _side_by_side(group, groups[i + 1]):
            second = groups[i + 1]
            for node in group.nodes:
                placement[node] = (DeviceAnnotation(core=0),)
            for node in second.nodes:
                placement[node] = (DeviceAnnotation(core=1),)
            pending = [t.name for g in (group, second) for t in g.outputs(graph)]
            i += 2
            continue
        for node in group.nodes:
            placement[node] = (DeviceAnnotation(core=0),)
        i += 1
    if pending:
        barriers.append(Barrier(None, tuple(pending)))
    return rebuild(graph, placement=MappingProxyType(placement), barriers=tuple(barriers))


def split_parts(group: FusedGroup, graph: Graph, cores: int,
                min_macs: int) -> tuple[DeviceAnnotation, ...] | None:
    """The parts of ``group`` on ``cores`` cores, or None when it stays whole (module
    docstring, step 1): core ``k`` gets ``[k * n // cores, (k + 1) * n // cores)`` of the
    ``n`` output rows or channels."""
    anchor = group.anchor
    if group.kind != "fused" or anchor is None or anchor.op not in SPLIT_PART:
        return None
    if node_macs(anchor) < min_macs:
        return None
    part = SPLIT_PART[anchor.op]
    y = anchor.outputs[0]
    axis = _split_axis(anchor)
    if axis is None:
        return None
    n = y.shape[axis]
    if n < cores:
        return None
    made = {id(t) for node in group.nodes for t in node.outputs}
    for node in group.nodes:
        if node is anchor:
            continue
        if node.outputs[0].shape != y.shape:
            return None
        for t in node.inputs:
            if t is None or id(t) in made:
                continue
            if _operand_extent(t, y, axis) is None:
                return None
    return tuple(DeviceAnnotation(core=k, part=part, start=k * n // cores,
                                  stop=(k + 1) * n // cores) for k in range(cores))


def _split_axis(anchor: Node) -> int | None:
    """The output axis a split divides (1: H of NHWC; -1: a dense's units), or None
    when the output has more than one batch row, so the parts would not be contiguous."""
    y = anchor.outputs[0]
    if anchor.op == "dense":
        lead = 1
        for d in y.shape[:-1]:
            lead *= d
        return len(y.shape) - 1 if lead == 1 else None
    return 1 if y.shape[0] == 1 else None


def _operand_extent(t: Tensor, y: Tensor, axis: int) -> str | None:
    """How a fused tail's operand ``t`` meets a split of ``y`` along ``axis``: ``"slice"``
    (it spans the axis: each part reads its slice), ``"whole"`` (broadcast along it) or
    None (neither: the group cannot be split)."""
    offset = len(y.shape) - len(t.shape)
    if offset < 0:
        return None
    k = axis - offset
    if k < 0 or t.shape[k] == 1:
        return "whole"
    return "slice" if t.shape[k] == y.shape[axis] else None


def _side_by_side(a: FusedGroup, b: FusedGroup) -> bool:
    """Whether ``b`` may run on core 1 while ``a`` runs on core 0 (module docstring, step 2)."""
    if a.kind == "view" or b.kind == "view":
        return False
    made = {id(t) for node in a.nodes for t in node.outputs}
    return not any(t is not None and id(t) in made for node in b.nodes for t in node.inputs)


@dataclass(frozen=True)
class Part:
    """One part of a split node as an operator of its own.

    ``node`` computes the part: the same operator on the part's slice of
    the data (rows ``data_rows`` of the NHWC input, the halo included, with
    the padding the slice still needs) or with the part's slice of the
    weights and bias (dense).  ``out`` is the part's slice of the output
    along ``axis``.  Both slices are contiguous in memory for batch 1, so a
    kernel instance for ``node`` reads its input at byte offset
    ``data_rows[0] * W * C`` and writes at ``out[0] * W * C`` (rows) or
    ``out[0]`` (channels) times the element size.
    """

    node: Node
    axis: int
    out: tuple[int, int]
    data_rows: tuple[int, int] | None


def part_node(node: Node, device: DeviceAnnotation) -> Part:
    """``node``'s part ``device`` (a ``rows`` or ``channels`` annotation) as a :class:`Part`.

    Rows ``[r0, r1)`` of a convolution with stride ``s``, dilation ``d``,
    kernel height ``kh`` and top padding ``pt`` read the padded input rows
    ``a = r0 * s - pt`` to ``b = (r1 - 1) * s + (kh - 1) * d - pt`` inclusive;
    the part reads the real rows ``[max(a, 0), min(b, H - 1)]`` and pads
    ``max(0, -a)`` on top and ``max(0, b - (H - 1))`` below, so its output has
    exactly ``r1 - r0`` rows, each computed from the same window as before.
    """
    if device.part == "rows":
        part = _row_part(node, device.start, device.stop)
    elif device.part == "channels":
        part = _channel_part(node, device.start, device.stop)
    else:
        raise PassError(f"{node.label()}: part {device.part!r} is not a split")
    check_node(part.node)   # the part's shapes follow from its operator's type inference
    return part


def _row_part(node: Node, r0: int, r1: int) -> Part:
    x, w, bias = node.inputs
    y = node.outputs[0]
    kh = w.shape[1]
    sh = node.attrs["strides"][0]
    dh = node.attrs["dilation"][0]
    top, left, bottom, right = node.attrs["padding"]
    height = x.shape[1]
    a = r0 * sh - top
    b = (r1 - 1) * sh + (kh - 1) * dh - top
    lo, hi = max(a, 0), min(b, height - 1)
    if lo > hi:
        raise PassError(f"{node.label()}: output rows [{r0}, {r1}) read padding only; "
                        "a split of this layer is not supported")
    data = _tensor(f"{x.name}@rows{lo}:{hi + 1}", (x.shape[0], hi - lo + 1) + x.shape[2:], x)
    out = _tensor(f"{y.name}@rows{r0}:{r1}", (y.shape[0], r1 - r0) + y.shape[2:], y)
    attrs = {**node.attrs, "padding": (max(0, -a), left, max(0, b - (height - 1)), right)}
    part = Node(node.op, [data, w, bias], [out], attrs, f"{node.name}@rows{r0}:{r1}")
    return Part(part, 1, (r0, r1), (lo, hi + 1))


def _channel_part(node: Node, c0: int, c1: int) -> Part:
    x, w, bias = node.inputs
    y = node.outputs[0]
    weight = _constant_rows(w, c0, c1)
    part_bias = _constant_rows(bias, c0, c1) if bias is not None else None
    out = _tensor(f"{y.name}@channels{c0}:{c1}", y.shape[:-1] + (c1 - c0,), y)
    part = Node(node.op, [x, weight, part_bias], [out], dict(node.attrs),
                f"{node.name}@channels{c0}:{c1}")
    return Part(part, len(y.shape) - 1, (c0, c1), None)


def _tensor(name: str, shape: tuple[int, ...], like: Tensor) -> Tensor:
    return Tensor(name, TensorType(tuple(shape), like.dtype, like.quant), "activation")


def _constant_rows(t: Tensor, c0: int, c1: int) -> Tensor:
    """Rows ``[c0, c1)`` of the constant ``t`` (axis 0), its per-axis quantization sliced."""
    q = t.quant
    if q is not None and q.axis is not None and q.axis != 0:
        raise PassError(f"constant {t.name!r} is quantized along axis {q.axis}; a channel "
                        "split needs it per tensor or along axis 0")
    return _constant_slice(t, 0, c0, c1)


@dataclass(frozen=True)
class GroupPart:
    """One core's part of a split fused group as a model of its own.

    ``graph`` holds the part as one fused group (its only group, with the
    folded quantization of its nodes): the anchor's part (:func:`part_node`)
    and the fused tail on the part's slices.  Its inputs are the part's
    run-time operands and its output the part's slice of the group's output.
    ``windows`` maps each of these tensors' names to the tensor of the whole
    graph whose bytes they are, and the byte offset where they start there:
    a slice along the split axis of a tensor of batch 1 is contiguous, so a
    kernel of ``graph`` run on the whole tensors' addresses plus these
    offsets computes the core's part of the group in place.
    """

    core: int
    graph: AnnotatedGraph
    windows: MappingProxyType   # part tensor name -> (whole graph's tensor, byte offset)


def part_group(group: FusedGroup, graph: Graph, device: DeviceAnnotation) -> GroupPart:
    """Core ``device.core``'s part of the split ``group`` of ``graph`` (a ``rows`` or
    ``channels`` device of its placement) as a :class:`GroupPart`.

    The anchor's part reads the input rows its windows need (or, split by
    channels, the whole input); each fused-tail operand that spans the split
    axis is read as the part's slice of it, one broadcast along it whole, a
    constant sliced.
    """
    anchor = group.anchor
    if anchor is None or group.nodes[0] is not anchor:
        raise PassError(f"group {group.name}: only a group that starts with its anchor is "
                        "split")
    part = part_node(anchor, device)
    y = anchor.outputs[0]
    lo, hi = part.out
    tag = f"@{device.part}{lo}:{hi}"
    windows: dict[str, tuple[Tensor, int]] = {}
    inputs: dict[str, Tensor] = {}

    def operand(t: Tensor, axis: int | None, start: int, stop: int, name: str) -> Tensor:
        """The part graph's input for rows/elements ``[start, stop)`` of ``t`` along
        ``axis`` (None: all of ``t``)."""
        if name not in inputs:
            shape = list(t.shape)
            if axis is not None:
                shape[axis] = stop - start
            inputs[name] = Tensor(name, TensorType(tuple(shape), t.dtype, t.quant), "input")
            windows[name] = (t, 0 if axis is None else _slice_offset(t, axis, start))
        return inputs[name]

    x = anchor.inputs[0]
    if part.data_rows is None:
        data = operand(x, None, 0, 0, x.name)
    else:
        data = operand(x, 1, *part.data_rows, part.node.inputs[0].name)
    first = Node(anchor.op, [data, *part.node.inputs[1:]], part.node.outputs,
                 dict(part.node.attrs), part.node.name)
    nodes = [first]
    made = {id(y): part.node.outputs[0]}
    for node in group.nodes[1:]:
        args = []
        for t in node.inputs:
            if t is None or id(t) in made:
                args.append(None if t is None else made[id(t)])
                continue
            k = part.axis - (len(y.shape) - len(t.shape))
            whole = _operand_extent(t, y, part.axis) == "whole"
            if t.kind == "constant":
                args.append(t if whole else _constant_slice(t, k, lo, hi))
            else:
                args.append(operand(t, None, 0, 0, t.name) if whole
                            else operand(t, k, lo, hi, f"{t.name}{tag}"))
        out = node.outputs[0]
        made[id(out)] = _tensor(f"{out.name}{tag}", part.node.outputs[0].shape, out)
        nodes.append(Node(node.op, args, [made[id(out)]], dict(node.attrs), f"{node.name}{tag}"))
    results = group.outputs(graph)
    if len(results) != 1:
        raise PassError(f"group {group.name} writes {len(results)} tensors for others; a part "
                        "writes one")
    out = made[id(results[0])]
    windows[out.name] = (results[0], _slice_offset(results[0], part.axis, lo))
    for node in nodes[1:]:
        check_node(node)
    quant = {n: q for n in nodes if (q := quant_params(n)) is not None}
    fused = FusedGroup(f"{group.name}{tag}", tuple(nodes), first, group.kind)
    part_graph = AnnotatedGraph(list(inputs.values()), [out], nodes, f"{group.name}{tag}",
                                Annotations(groups=(fused,), quant=MappingProxyType(quant)))
    return GroupPart(device.core, part_graph, MappingProxyType(windows))


def _slice_offset(t: Tensor, axis: int, start: int) -> int:
    """Bytes from ``t``'s start to index ``start`` along ``axis``: a slice along it is
    contiguous when every axis before it has one entry (batch 1)."""
    if any(d != 1 for d in t.shape[:axis]):
        raise PassError(f"tensor {t.name!r} of shape {list(t.shape)}: a slice along axis "
                        f"{axis} is not contiguous (its leading axes are not all 1)")
    inner = 1
    for d in t.shape[axis + 1:]:
        inner *= d
    return start * inner * DTYPES[t.dtype].itemsize


def _constant_slice(t: Tensor, axis: int, start: int, stop: int) -> Tensor:
    """Entries ``[start, stop)`` of the constant ``t`` along ``axis`` (a fused tail's
    operand; its quantization per tensor, or per axis along another axis)."""
    q = t.quant
    if q is not None and q.axis == axis:
        q = Quantization(q.scale[start:stop], q.zero_point[start:stop], axis)
    cut = [slice(None)] * len(t.shape)
    cut[axis] = slice(start, stop)
    shape = list(t.shape)
    shape[axis] = stop - start
    return Tensor(f"{t.name}@{start}:{stop}", TensorType(tuple(shape), t.dtype, q),
                  "constant", t.data[tuple(cut)])
