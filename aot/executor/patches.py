"""Patch-based execution of the leading layers (MCUNetV2): the analysis.

The first layers of a CNN hold the largest activations.  A *patch stage* runs
them one spatial tile at a time: every tile of the stage's output is computed
through all the stage's layers before the next tile starts, so only one
tile's worth of each intermediate tensor is alive, plus the stage's input and
its assembled output.  Neighbouring tiles need overlapping inputs (the halo),
which are recomputed.

This module decides *what* a stage computes; :func:`patch_graph` gives the
stage's layers on their patch shapes, which :func:`aot.compile.compile_model`
lowers once each, and :mod:`aot.executor.codegen` calls for every patch
(see docs/memory.md, "Patch-based execution").

Stage
    A prefix of the graph's nodes, each a ``conv2d``, ``depthwise_conv2d``,
    ``max_pool2d`` or a same-shape ``add`` of two activations, on NHWC batch-1 tensors, that
    reads one non-constant tensor from outside (the stage input) and leaves
    exactly one tensor to the rest of the graph (the stage output).  Inside,
    the stage may branch and join (a residual block) as long as every path
    from a tensor to the output has the same total stride.  Average pooling
    ends a stage: it divides by the taps inside the image, which no buffer
    filling can imitate.

Regions (rows; columns alike)
    The output is cut into ``g`` tiles of ``t = ceil(H / g)`` rows, tile ``i``
    starting at ``a_i = min(i * t, H - t)`` (the last one moves back inside the
    image, so every tile has the same size and lies wholly in the image).
    Walking the stage backwards, each tensor gets an affine need: patch ``i``
    holds rows ``[a_i * S + c, a_i * S + c + n)`` of it.  The output has
    ``(S, c, n) = (1, 0, t)``; a window layer with kernel ``k``, stride ``s``,
    dilation ``d`` and top padding ``p`` whose output needs ``(S, c, n)``
    needs ``(S * s, c * s - p, (n - 1) * s + (k - 1) * d + 1)`` of its input;
    an add needs of each input what its output needs.  A tensor read by
    several layers holds the union (the same ``S`` on every path, the smallest
    ``c``, the largest end), and a reader that needs less reads a sub-window at
    a fixed offset.  Since ``n`` does not depend on ``i``, **every patch of a
    tensor has one shape**, so one kernel per layer (compiled for VALID
    padding on that shape) serves every patch, and the weights exist once.

Exactness
    Rows and columns of a patch outside the image are *filled*: with the
    reader's input zero point for a convolution (SAME padding of an int8
    convolution is VALID padding over zero-point borders; 0.0 for float), the
    dtype's minimum for a max pool (TFLM skips out-of-image taps, and the
    minimum never wins a max).  A tensor read by a convolution and a max pool
    would need two fills and is refused.  An add's inputs need no fill (its
    out-of-image results are refilled for its readers).  Only the copy-in of
    the stage input, these fills and the copy-out of each tile into the stage
    output depend on the patch's position.  :func:`run_stage` executes a stage
    this way with the reference interpreter, one VALID layer per patch, which
    the tests compare bit for bit with the whole layers.

Cost
    :func:`analyze_stage` counts the MACs recomputed in the halos (every patch
    computes its whole output patch, in-image or not) and the bytes copied and
    filled, and the bytes held: the stage input and output whole, and per
    patch the buffers alive at each layer.  :func:`estimate_peak` puts that
    beside the rest of the graph's steps (the planner's bytes alive per step,
    whole-step lifetimes, in-place writes, no overlaps), and
    :func:`choose_stage` picks the stage length and grid that lower that peak
    most within an allowance of extra work.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from aot.errors import AotError
from aot.executor.memory import alive_bytes, plan_memory
from aot.ir import Graph, Node, Tensor
from aot.ir.analysis import node_macs
from aot.ir.types import TensorType

WINDOW_OPS = ("conv2d", "depthwise_conv2d", "max_pool2d")
STAGE_OPS = WINDOW_OPS + ("add",)


class PatchError(AotError):
    """A patch stage the graph cannot have (not supported yet, or bad arguments)."""


@dataclass(frozen=True)
class Need:
    """Patch ``i`` holds rows (or columns) ``[a_i * scale + start, ... + size)``."""

    scale: int
    start: int
    size: int

    def at(self, a: int) -> int:
        """The first row (column) of the patch whose output tile starts at ``a``."""
        return a * self.scale + self.start


@dataclass(frozen=True)
class PatchTensor:
    """One tensor of a stage: its needs along rows and columns, its fill value
    (None: no reader looks at out-of-image positions) and the patch's bytes."""

    tensor: Tensor
    rows: Need
    cols: Need
    fill: float | int | None

    @property
    def patch_shape(self) -> tuple[int, int, int, int]:
        return (1, self.rows.size, self.cols.size, self.tensor.shape[3])

    @property
    def patch_bytes(self) -> int:
        return math.prod(self.patch_shape) * self.tensor.type.np_dtype.itemsize


@dataclass(frozen=True)
class PatchStage:
    """The first ``len(nodes)`` nodes of a graph run as ``grid`` patches."""

    nodes: tuple[Node, ...]
    grid: tuple[int, int]
    tile: tuple[int, int]
    tensors: dict[int, PatchTensor]
    input: Tensor
    output: Tensor
    row_starts: tuple[int, ...]
    col_starts: tuple[int, ...]
    macs: int
    patched_macs: int
    copy_bytes: int
    peak_bytes: int

    @property
    def extra_macs(self) -> int:
        """MACs recomputed in the halos and outside the image, per inference."""
        return self.patched_macs - self.macs

    def patches(self) -> list[tuple[int, int]]:
        """The output tiles' top-left corners, row-major."""
        return [(a, b) for a in self.row_starts for b in self.col_starts]


# --------------------------------------------------------------------------- the stage

def step_ends(graph: Graph) -> list[int]:
    """How many nodes the first 1, 2, ... steps of the memory plan cover: the fused
    groups of an optimized graph (a stage never cuts a group), else one node each."""
    groups = getattr(graph, "annotations", None)
    sizes = [len(g.nodes) for g in groups.groups] if groups is not None else []
    if not sizes or sum(sizes) != len(graph.nodes):
        sizes = [1] * len(graph.nodes)
    return list(itertools.accumulate(sizes))


def stage_lengths(graph: Graph) -> list[int]:
    """Every ``n`` for which the first ``n`` nodes form a stage (shortest first)."""
    return list(iter_stage_lengths(graph))


def iter_stage_lengths(graph: Graph):
    """:func:`stage_lengths` one at a time, so a search that stops early (a bound
    crossed, :func:`aot.executor.streams.choose_stream`) does not check the rest."""
    ends = set(step_ends(graph))
    for n in range(1, len(graph.nodes) + 1):
        node = graph.nodes[n - 1]
        if node.op not in STAGE_OPS or not _nhwc_batch1(node):
            break
        if n not in ends:
            continue
        try:
            _boundary(graph, n)
        except PatchError:
            continue
        yield n


def _nhwc_batch1(node: Node) -> bool:
    ts = [t for t in node.inputs[:1] + node.outputs if t is not None]
    if node.op == "add":
        ts = [t for t in node.inputs + node.outputs if t is not None]
    return all(len(t.shape) == 4 and t.shape[0] == 1 for t in ts)


def _boundary(graph: Graph, n: int) -> tuple[Tensor, Tensor]:
    """The stage input and output of the first ``n`` nodes, or PatchError."""
    nodes = graph.nodes[:n]
    written = {id(t) for node in nodes for t in node.outputs}
    outside_in = []
    for node in nodes:
        if node.op not in STAGE_OPS:
            raise PatchError(f"{node.label()}: a patch stage takes {', '.join(STAGE_OPS)}; "
                             f"{node.op} is not supported yet")
        if node.op == "add" and (node.inputs[0].shape != node.inputs[1].shape):
            raise PatchError(f"{node.label()}: a broadcasting add in a patch stage "
                             "is not supported yet")
        if node.op == "add" and any(t.kind in ("constant", "variable") for t in node.inputs):
            raise PatchError(f"{node.label()}: an add of a constant or a variable in a patch "
                             "stage is not supported yet")
        data = node.inputs if node.op == "add" else node.inputs[:1]
        for t in data:
            if t.kind != "constant" and id(t) not in written and \
                    all(t is not u for u in outside_in):
                outside_in.append(t)
    if len(outside_in) != 1:
        raise PatchError(f"the first {n} nodes read {len(outside_in)} tensors from outside; "
                         "a patch stage reads one")
    later = {id(t) for node in graph.nodes[n:] for t in node.inputs if t is not None}
    later |= {id(t) for t in graph.outputs}
    leaving = [t for node in nodes for t in node.outputs if id(t) in later]
    if len(leaving) != 1:
        raise PatchError(f"the first {n} nodes leave {len(leaving)} tensors to the rest of "
                         "the graph; a patch stage leaves one")
    return outside_in[0], leaving[0]


def _window(node: Node) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int],
                                 tuple[int, int]]:
    """``(kernel, stride, dilation, (top, left) padding)`` of a window layer."""
    if node.op == "max_pool2d":
        kernel = tuple(node.attrs["pool_size"])
        dilation = (1, 1)
    else:
        w = node.inputs[1].shape
        kernel = (w[1], w[2])
        dilation = tuple(node.attrs["dilation"])
    top, left, _, _ = node.attrs["padding"]
    return kernel, tuple(node.attrs["strides"]), dilation, (top, left)


def _fill(node: Node, x: Tensor) -> float | int:
    """What out-of-image positions of ``x`` must hold for ``node`` to read them."""
    if node.op == "max_pool2d":
        dtype = x.type.np_dtype
        return -math.inf if dtype.kind == "f" else int(np.iinfo(dtype).min)
    if x.quant is None:
        return 0.0 if x.type.np_dtype.kind == "f" else 0
    return int(x.quant.zero_point[0])


def _tiles(size: int, parts: int) -> tuple[int, tuple[int, ...]]:
    tile = -(-size // parts)
    return tile, tuple(sorted({min(i * tile, size - tile) for i in range(parts)}))


def analyze_stage(graph: Graph, n: int, grid: tuple[int, int], *,
                  io_in_workspace: bool = True) -> PatchStage:
    """The first ``n`` nodes of ``graph`` as a stage of ``grid`` (rows, columns) patches.

    Raises :class:`PatchError` when they are no stage or the grid does not fit."""
    if n < 1 or n > len(graph.nodes):
        raise PatchError(f"a patch stage of {n} nodes: the graph has {len(graph.nodes)}")
    gr, gc = grid
    x, y = _boundary(graph, n)
    nodes = tuple(graph.nodes[:n])
    for node in nodes:
        if not _nhwc_batch1(node):
            raise PatchError(f"{node.label()}: a patch stage needs NHWC tensors of batch 1")
    height, width = y.shape[1], y.shape[2]
    if not (1 <= gr <= height and 1 <= gc <= width):
        raise PatchError(f"a {gr}x{gc} grid does not fit the stage output's "
                         f"{height}x{width} positions")
    (th, row_starts), (tw, col_starts) = _tiles(height, gr), _tiles(width, gc)

    needs: dict[int, list] = {id(y): [(Need(1, 0, th), Need(1, 0, tw), None)]}
    tensors: dict[int, PatchTensor] = {}
    for node in reversed(nodes):
        out = node.outputs[0]
        if id(out) not in needs:  # read by nobody after: no stage node only writes
            raise PatchError(f"{node.label()}: its output is not read inside the stage")
        pt = _merge(out, needs[id(out)])
        tensors[id(out)] = pt
        if node.op == "add":
            for t in node.inputs:
                needs.setdefault(id(t), []).append((pt.rows, pt.cols, None))
            continue
        (kh, kw), (sh, sw), (dh, dw), (top, left) = _window(node)
        rows = Need(pt.rows.scale * sh, pt.rows.start * sh - top,
                    (pt.rows.size - 1) * sh + (kh - 1) * dh + 1)
        cols = Need(pt.cols.scale * sw, pt.cols.start * sw - left,
                    (pt.cols.size - 1) * sw + (kw - 1) * dw + 1)
        xin = node.inputs[0]
        needs.setdefault(id(xin), []).append((rows, cols, _fill(node, xin)))
    tensors[id(x)] = _merge(x, needs[id(x)])

    macs = sum(node_macs(node) for node in nodes)
    patches = len(row_starts) * len(col_starts)
    patched = 0
    for node in nodes:
        whole = node.outputs[0].shape
        pt = tensors[id(node.outputs[0])]
        patched += node_macs(node) * patches * pt.rows.size * pt.cols.size \
            // (whole[1] * whole[2])
    corners = [(a, b) for a in row_starts for b in col_starts]
    copy, peak = _bytes(nodes, tensors, x, y, corners, io_in_workspace)
    return PatchStage(nodes=nodes, grid=(gr, gc), tile=(th, tw), tensors=tensors, input=x,
                      output=y, row_starts=row_starts, col_starts=col_starts, macs=macs,
                      patched_macs=patched, copy_bytes=copy, peak_bytes=peak)


def _merge(t: Tensor, needs: list) -> PatchTensor:
    """The union of the readers' needs of ``t`` (one scale per axis) and its one fill."""
    fills = {f for _, _, f in needs if f is not None}
    if len(fills) > 1:
        raise PatchError(f"tensor {t.name!r} is read by layers that pad it differently "
                         f"({sorted(map(str, fills))}); not supported yet")
    axes = []
    for axis in (0, 1):
        parts = [need[axis] for need in needs]
        if len({p.scale for p in parts}) != 1:
            raise PatchError(f"tensor {t.name!r} reaches the stage output through paths of "
                             "different strides; not supported yet")
        start = min(p.start for p in parts)
        end = max(p.start + p.size for p in parts)
        axes.append(Need(parts[0].scale, start, end - start))
    return PatchTensor(t, axes[0], axes[1], fills.pop() if fills else None)


def _bytes(nodes, tensors, x: Tensor, y: Tensor, corners: list[tuple[int, int]],
           io_in_workspace: bool) -> tuple[int, int]:
    """``(bytes copied or filled per inference, most bytes held at one layer)``.

    Copied: each patch of the stage input (in-image bytes copied, the rest filled), each
    sub-window a reader copies out, the out-of-image positions of every filled patch, and
    the stage output once (the tiles).
    Held: the stage input (if in the workspace) and output whole, and per patch each
    tensor's patch buffer from the layer writing it (the copy-in for the input) to its
    last reader, plus a sub-window copy while a reader that needs less reads it."""
    last: dict[int, int] = {}
    for i, node in enumerate(nodes):
        for t in node.inputs:
            if t is not None and id(t) in tensors:
                last[id(t)] = i
    patches = len(corners)
    whole = y.type.nbytes + (x.type.nbytes if io_in_workspace else 0)
    copy = patches * tensors[id(x)].patch_bytes + y.type.nbytes
    peak = 0
    for i, node in enumerate(nodes):
        alive = [pt for key, pt in tensors.items()
                 if (pt.tensor is x or _writer(nodes, pt.tensor) < i) and last.get(key, -1) >= i]
        held = sum(pt.patch_bytes for pt in alive) + tensors[id(node.outputs[0])].patch_bytes
        for t in _data_inputs(node):
            sub = _read_shape(node, t, tensors)
            if sub != tensors[id(t)].patch_shape[1:3]:
                nbytes = sub[0] * sub[1] * t.shape[3] * t.type.np_dtype.itemsize
                held += nbytes
                copy += patches * nbytes
        peak = max(peak, held)
        pt = tensors[id(node.outputs[0])]
        if pt.fill is not None:
            copy += sum(_outside(pt, a, b) for a, b in corners) * pt.tensor.shape[3] \
                * pt.tensor.type.np_dtype.itemsize
    return copy, whole + peak


def _outside(pt: PatchTensor, a: int, b: int) -> int:
    """Positions of the patch at tile corner ``(a, b)`` that lie outside the image."""
    def inside(need: Need, corner: int, size: int) -> int:
        start = need.at(corner)
        return max(0, min(start + need.size, size) - max(start, 0))

    return pt.rows.size * pt.cols.size - inside(pt.rows, a, pt.tensor.shape[1]) \
        * inside(pt.cols, b, pt.tensor.shape[2])


def _writer(nodes, t: Tensor) -> int:
    return next(i for i, node in enumerate(nodes) if any(o is t for o in node.outputs))


def _data_inputs(node: Node) -> list[Tensor]:
    return list(node.inputs) if node.op == "add" else [node.inputs[0]]


def _read_shape(node: Node, t: Tensor, tensors) -> tuple[int, int]:
    """Rows and columns of ``t``'s patch that ``node`` reads."""
    out = tensors[id(node.outputs[0])]
    if node.op == "add":
        return out.rows.size, out.cols.size
    (kh, kw), (sh, sw), (dh, dw), _ = _window(node)
    return ((out.rows.size - 1) * sh + (kh - 1) * dh + 1,
            (out.cols.size - 1) * sw + (kw - 1) * dw + 1)


def _read_offset(node: Node, t: Tensor, tensors) -> tuple[int, int]:
    """Where the window ``node`` reads starts inside ``t``'s patch."""
    out, src = tensors[id(node.outputs[0])], tensors[id(t)]
    if node.op == "add":
        return out.rows.start - src.rows.start, out.cols.start - src.cols.start
    _, (sh, sw), _, (top, left) = _window(node)
    return (out.rows.start * sh - top - src.rows.start,
            out.cols.start * sw - left - src.cols.start)


# --------------------------------------------------------------------------- execution

def run_stage(stage: PatchStage, x: np.ndarray) -> np.ndarray:
    """The stage output computed patch by patch with the reference interpreter.

    Each layer runs with VALID padding on its patch shape (one graph per layer,
    whatever the patch); only the copy-in, the fills and the copy-out use the
    patch's position.  Bit-exact with the whole layers when the analysis is right."""
    from aot.reference import interpreter  # the reference is a consumer, not a dependency

    x = np.asarray(x)
    if x.shape != stage.input.shape:
        raise PatchError(f"the stage input must have shape {list(stage.input.shape)}, "
                         f"got {list(x.shape)}")
    layers = [_valid_layer(node, stage.tensors) for node in stage.nodes]
    out = np.empty(stage.output.shape, stage.output.type.np_dtype)
    th, tw = stage.tile
    for a, b in stage.patches():
        values = {id(stage.input): _cut(x, stage.tensors[id(stage.input)], a, b)}
        for node, layer in zip(stage.nodes, layers, strict=True):
            args = []
            for t in _data_inputs(node):
                (r, c), (h, w) = _read_offset(node, t, stage.tensors), \
                    _read_shape(node, t, stage.tensors)
                args.append(values[id(t)][:, r:r + h, c:c + w, :])
            y = interpreter.run(layer, args)[0]
            pt = stage.tensors[id(node.outputs[0])]
            if pt.fill is not None:
                _fill_outside(y, pt, a, b)
            values[id(node.outputs[0])] = y
        pt = stage.tensors[id(stage.output)]
        r, c = -pt.rows.start, -pt.cols.start
        out[:, a:a + th, b:b + tw, :] = values[id(stage.output)][:, r:r + th, c:c + tw, :]
    return out


def _cut(x: np.ndarray, pt: PatchTensor, a: int, b: int) -> np.ndarray:
    """The copy-in: the input's patch, out-of-image positions filled."""
    patch = np.full(pt.patch_shape, pt.fill if pt.fill is not None else 0, x.dtype)
    r0, c0 = pt.rows.at(a), pt.cols.at(b)
    h, w = x.shape[1], x.shape[2]
    rs, re = max(r0, 0), min(r0 + pt.rows.size, h)
    cs, ce = max(c0, 0), min(c0 + pt.cols.size, w)
    if rs < re and cs < ce:
        patch[:, rs - r0:re - r0, cs - c0:ce - c0, :] = x[:, rs:re, cs:ce, :]
    return patch


def _fill_outside(y: np.ndarray, pt: PatchTensor, a: int, b: int) -> None:
    h, w = pt.tensor.shape[1], pt.tensor.shape[2]
    r0, c0 = pt.rows.at(a), pt.cols.at(b)
    rows = np.arange(r0, r0 + pt.rows.size)
    cols = np.arange(c0, c0 + pt.cols.size)
    y[:, (rows < 0) | (rows >= h), :, :] = pt.fill
    y[:, :, (cols < 0) | (cols >= w), :] = pt.fill


def _valid_layer(node: Node, tensors) -> Graph:
    """``node`` alone on its patch shapes, without padding: the one kernel of that layer."""
    ins = []
    inputs = []
    for slot, t in enumerate(node.inputs):
        if t is None or t.kind == "constant":
            inputs.append(t)
            continue
        h, w = _read_shape(node, t, tensors)
        p = Tensor(f"{t.name}_patch{slot}", TensorType((1, h, w, t.shape[3]), t.dtype, t.quant),
                   kind="input")
        ins.append(p)
        inputs.append(p)
    y = node.outputs[0]
    pt = tensors[id(y)]
    out = Tensor(f"{y.name}_patch", TensorType(pt.patch_shape, y.dtype, y.quant))
    attrs = dict(node.attrs)
    if "padding" in attrs:
        attrs["padding"] = (0, 0, 0, 0)
    return Graph(ins, [out], [Node(node.op, inputs, [out], attrs, node.name)])


def patch_graph(stage: PatchStage) -> Graph:
    """The stage's layers on their patch shapes, VALID padding: one kernel each serves
    every patch.  Tensor ``t`` of the stage is ``t.name + "_patch"`` here.  A layer that
    reads part of a patch (a residual add reading the middle of its block input's patch,
    whose halo the convolution branch needs; a 1x1 shortcut) reads it through a
    ``strided_slice`` at the fixed offset, so the planner sees the whole patch alive up
    to that read."""
    made: dict[int, Tensor] = {}
    subs: dict[tuple, Tensor] = {}
    nodes: list[Node] = []

    def patch_of(t: Tensor, kind: str) -> Tensor:
        if id(t) not in made:
            pt = stage.tensors[id(t)]
            made[id(t)] = Tensor(f"{t.name}_patch", TensorType(pt.patch_shape, t.dtype, t.quant),
                                 kind=kind)
        return made[id(t)]

    def read(node: Node, t: Tensor) -> Tensor:
        whole = patch_of(t, "input" if t is stage.input else "activation")
        (r, c), (h, w) = _read_offset(node, t, stage.tensors), _read_shape(node, t, stage.tensors)
        if (r, c, h, w) == (0, 0) + stage.tensors[id(t)].patch_shape[1:3]:
            return whole
        key = (id(t), r, c, h, w)
        if key not in subs:
            channels = t.shape[3]
            subs[key] = Tensor(f"{t.name}_patch_{r}_{c}_{h}x{w}",
                               TensorType((1, h, w, channels), t.dtype, t.quant))
            nodes.append(Node("strided_slice", [whole], [subs[key]],
                              {"begin": (0, r, c, 0), "end": (1, r + h, c + w, channels),
                               "strides": (1, 1, 1, 1), "squeeze_axes": ()},
                              f"{t.name}_patch_window{len(subs)}"))
        return subs[key]

    for node in stage.nodes:
        data = {id(t) for t in _data_inputs(node)}
        ins = [read(node, t) if t is not None and id(t) in data else t for t in node.inputs]
        attrs = dict(node.attrs)
        if "padding" in attrs:
            attrs["padding"] = (0, 0, 0, 0)
        nodes.append(Node(node.op, ins, [patch_of(node.outputs[0], "activation")], attrs,
                          f"{node.name}_patch"))
    return Graph([made[id(stage.input)]], [made[id(stage.output)]], nodes,
                 f"{stage.output.name}_patches")


def _generated(stage: PatchStage) -> bool:
    try:
        patch_graph(stage)
    except PatchError:
        return False
    return True


# --------------------------------------------------------------------------- choice

@dataclass(frozen=True)
class PatchEstimate:
    """The analysis of one choice: the plan's bound before and after, and the cost."""

    stage: PatchStage | None
    bytes_before: int
    bytes_after: int
    model_macs: int

    @property
    def extra_work(self) -> float:
        """Recomputed MACs plus copied bytes, relative to the model's MACs."""
        if self.stage is None or not self.model_macs:
            return 0.0
        return (self.stage.extra_macs + self.stage.copy_bytes) / self.model_macs


def alive_by_node(graph: Graph, io_in_workspace: bool) -> list[int]:
    """The planner's bytes alive at each step of ``graph`` (whole-step lifetimes, in-place
    writes, no overlaps): what a stage's estimate replaces its own steps in."""
    return alive_bytes(plan_memory(graph, alignment=1, io_in_workspace=io_in_workspace))


def estimate_peak(graph: Graph, stage: PatchStage | None, *, io_in_workspace: bool = True,
                  alive: list[int] | None = None) -> PatchEstimate:
    """Most bytes held at one step with and without ``stage``: the planner's bytes alive
    per step (whole-step lifetimes, in-place writes, no overlaps) and, for the stage's
    steps, :attr:`PatchStage.peak_bytes` instead."""
    alive = alive if alive is not None else alive_by_node(graph, io_in_workspace)
    before = max(alive, default=0)
    model_macs = sum(node_macs(node) for node in graph.nodes)
    if stage is None:
        return PatchEstimate(None, before, before, model_macs)
    ends = step_ends(graph)
    if len(stage.nodes) not in ends:
        raise PatchError(f"a stage of {len(stage.nodes)} nodes cuts a fused group")
    rest = alive[ends.index(len(stage.nodes)) + 1:]
    return PatchEstimate(stage, before, max([stage.peak_bytes] + rest), model_macs)


GRIDS = ((2, 1), (4, 1), (2, 2), (3, 3), (4, 4), (6, 6), (8, 8))


def choose_stage(graph: Graph, *, allowance: float = 0.05, io_in_workspace: bool = True,
                 grids=GRIDS, generated_only: bool = False) -> PatchEstimate:
    """The stage length and grid with the lowest estimated peak whose extra work
    (:attr:`PatchEstimate.extra_work`) stays within ``allowance``; the estimate without a
    stage when none lowers the peak.  Ties go to less work.  ``generated_only`` skips
    stages :func:`patch_graph` refuses (code generation does not support them yet)."""
    if allowance < 0:
        raise PatchError(f"the instruction allowance must not be negative, got {allowance}")
    alive = alive_by_node(graph, io_in_workspace)
    best = estimate_peak(graph, None, alive=alive)
    for n in stage_lengths(graph):
        for grid in grids:
            try:
                stage = analyze_stage(graph, n, grid, io_in_workspace=io_in_workspace)
            except PatchError:
                continue
            est = estimate_peak(graph, stage, alive=alive)
            if est.extra_work > allowance or (generated_only and not _generated(stage)):
                continue
            if (est.bytes_after, est.extra_work) < (best.bytes_after, best.extra_work):
                best = est
    return best
