"""Row streaming of the leading layers ("line buffers"): the analysis.

A *stream stage* runs the same prefix of layers a patch stage may take
(:mod:`aot.executor.patches`: convolutions, depthwise convolutions, max pools and
same-shape adds on NHWC batch-1 tensors, one tensor in, one out, every path to the
output of one total stride) without recomputing any halo.  The stage output is
produced in full-width *bands* of ``t`` rows (``t`` divides its height), top to
bottom; every other tensor of the stage keeps a *window* of the rows its readers still
need, and each band every layer computes only its new rows.

Rows (columns are always whole)
    A tensor ``T`` whose rows are ``S`` times the output's (the product of the strides
    on its paths to the output) gets ``t * S`` new rows per band: band ``j`` computes
    rows ``[j*t*S + o, j*t*S + o + t*S)``, where the *phase* ``o`` is found walking the
    stage backwards.  A window layer (kernel ``k``, stride ``s``, dilation ``d``, top
    padding ``p``) computing rows ``[r, r + m)`` of its output reads rows
    ``[r*s - p, (r + m - 1)*s - p + (k - 1)*d + 1)`` of its input, an add the same rows
    of both inputs.  Each tensor's newest row is the largest end its readers read at a
    band (``o = end - t*S``), and its window holds ``w = max(t*S, end - start)`` rows,
    ``start`` the smallest row a reader reads: the rows are ``[j*t*S + o + t*S - w,
    j*t*S + o + t*S)``.  Since the readers' offsets into the window and the row counts
    do not depend on ``j``, every layer is **one kernel for one fixed shape**: VALID
    along the rows, the layer's own padding along the columns (rows are whole, so a
    window's rows and any run of them are one contiguous block: no copies for reads).

A band
    1. *Slide*: every window whose ``w > t*S`` moves its last ``w - t*S`` rows to its
       front (one ``memmove``).  A ring buffer with a moving start would save that copy
       but split a window at its wrap point, and a kernel reads a run of rows at one
       pointer; the copies are ``w - t*S`` rows per window and band (measured under 1 %
       of ResNet-8's instructions, docs/memory.md).
    2. *Copy-in*: the stage input's new rows from the whole input, rows outside the
       image set to its fill.
    3. Each layer in order: if its new rows lie wholly outside the image it is not
       called (its rows are set to the fill, if the tensor has one); else it reads its
       input rows at fixed offsets in the windows and writes its new rows at the end of
       its window (the stage output's straight into the output, band ``j`` at row
       ``j*t``); new rows outside the image are then set to the fill.

Borders
    Before the first band every window is filled (the fill, or zeros where no reader
    looks outside the image).  The loop starts at the band ``j0 <= 0`` at which every
    window's kept rows (those it does not compute at ``j0``) lie above the image, so
    they are top padding already; the bands before 0 compute the first rows the
    later bands need (and call no layer whose rows are all above the image).  The last
    band is ``H/t - 1``: rows past the bottom the windows then hold are fills.  Fills
    are those of patch stages: a convolution's input zero point, a max pool's minimum;
    a tensor read by both is refused.  Every in-image row of every tensor is computed
    exactly once, so the only extra MACs are the out-of-image rows of a band that is
    partly inside the image.

:func:`run_stream` executes a stage this way with the reference interpreter, and
:func:`band_graph` gives the layers on their band shapes for code generation
(:func:`aot.executor.codegen.lower_entry`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from aot.ir import Graph, Node, Tensor
from aot.ir.analysis import node_macs
from aot.ir.types import TensorType
from aot.executor.patches import (PatchError, _boundary, _data_inputs, _fill, _nhwc_batch1,
                                  _window, alive_by_node, estimate_peak, iter_stage_lengths,
                                  stage_lengths)


def row_bytes(t: Tensor) -> int:
    """Bytes of one row (all columns and channels) of an NHWC tensor."""
    return t.shape[2] * t.shape[3] * t.type.np_dtype.itemsize


@dataclass(frozen=True)
class StreamTensor:
    """One tensor of a stream stage: ``scale`` rows per output row, band ``j``'s new rows
    start at ``j * new + phase``, the window holds ``window`` rows (the newest last),
    out-of-image rows hold ``fill`` (None: no reader looks at them)."""

    tensor: Tensor
    scale: int
    new: int
    phase: int
    window: int
    fill: float | int | None

    @property
    def height(self) -> int:
        return self.tensor.shape[1]

    @property
    def row_bytes(self) -> int:
        return row_bytes(self.tensor)

    @property
    def window_bytes(self) -> int:
        return self.window * self.row_bytes

    @property
    def kept(self) -> int:
        """Rows a band keeps of the previous one (slid to the window's front)."""
        return self.window - self.new

    def first_new(self, band: int) -> int:
        return band * self.new + self.phase

    def window_start(self, band: int) -> int:
        return self.first_new(band) + self.new - self.window

    def computes(self, band: int) -> bool:
        """Whether band ``band``'s new rows touch the image (else the writer is skipped)."""
        r = self.first_new(band)
        return r < self.height and r + self.new > 0


@dataclass(frozen=True)
class StreamStage:
    """The first ``len(nodes)`` nodes of a graph run in ``bands`` bands of ``band`` output
    rows, from band ``first_band`` (<= 0: the bands above the image fill the windows)."""

    nodes: tuple[Node, ...]
    band: int
    bands: int
    first_band: int
    tensors: dict[int, StreamTensor]
    input: Tensor
    output: Tensor
    macs: int
    streamed_macs: int
    copy_bytes: int
    window_bytes: int
    peak_bytes: int

    @property
    def extra_macs(self) -> int:
        """MACs of out-of-image rows computed in bands partly inside the image, less the
        in-image rows no reader needs (a stride-3 pool skipping a convolution's last
        rows): may be negative."""
        return self.streamed_macs - self.macs

    @property
    def windowed(self) -> list[StreamTensor]:
        """The tensors that get a window buffer: the stage input and every tensor but the
        output (which the last layer writes in place, band by band)."""
        return [st for st in self.tensors.values() if st.tensor is not self.output]

    def describe(self) -> str:
        return f"{len(self.nodes)} layers in bands of {self.band} rows"


def stream_bands(graph: Graph, n: int) -> list[int]:
    """The band heights a stream of the first ``n`` nodes may take: divisors of the
    output's height."""
    _, y = _boundary(graph, n)
    return [t for t in range(1, y.shape[1] + 1) if y.shape[1] % t == 0]


def analyze_stream(graph: Graph, n: int, band: int, *,
                   io_in_workspace: bool = True) -> StreamStage:
    """The first ``n`` nodes of ``graph`` as a stream stage of bands of ``band`` rows.

    Raises :class:`PatchError` when they are no stage or the band does not divide."""
    if n < 1 or n > len(graph.nodes):
        raise PatchError(f"a stream stage of {n} nodes: the graph has {len(graph.nodes)}")
    x, y = _boundary(graph, n)
    nodes = tuple(graph.nodes[:n])
    for node in nodes:
        if not _nhwc_batch1(node):
            raise PatchError(f"{node.label()}: a stream stage needs NHWC tensors of batch 1")
    height = y.shape[1]
    if band < 1 or height % band:
        raise PatchError(f"bands of {band} rows do not divide the stage output's "
                         f"{height} rows")
    if any(y is t for node in nodes for t in node.inputs):
        raise PatchError(f"the stage output {y.name!r} is read inside the stage; "
                         "not supported yet")

    reads: dict[int, list] = {}  # id -> [(scale, start, end, fill)] read at band 0
    tensors: dict[int, StreamTensor] = {id(y): StreamTensor(y, 1, band, 0, band, None)}
    for node in reversed(nodes):
        out = node.outputs[0]
        if id(out) not in tensors:
            if id(out) not in reads:
                raise PatchError(f"{node.label()}: its output is not read inside the stage")
            tensors[id(out)] = _merge(out, reads[id(out)], band)
        st = tensors[id(out)]
        if node.op == "add":
            for t in node.inputs:
                reads.setdefault(id(t), []).append(
                    (st.scale, st.phase, st.phase + st.new, None))
            continue
        (kh, _), (sh, _), (dh, _), (top, _) = _window(node)
        start = st.phase * sh - top
        end = (st.phase + st.new - 1) * sh - top + (kh - 1) * dh + 1
        xin = node.inputs[0]
        reads.setdefault(id(xin), []).append((st.scale * sh, start, end, _fill(node, xin)))
    tensors[id(x)] = _merge(x, reads[id(x)], band)

    bands = height // band
    first = min([0] + [_first_band(st) for st in tensors.values() if st.kept > 0])
    macs = sum(node_macs(node) for node in nodes)
    streamed = 0
    for node in nodes:
        st = tensors[id(node.outputs[0])]
        rows = sum(st.new for j in range(first, bands) if st.computes(j))
        streamed += node_macs(node) * rows // st.height
    windows = sum(st.window_bytes for st in tensors.values() if st.tensor is not y)
    copy = _copy_bytes(tensors, y, first, bands)
    whole = y.type.nbytes + (x.type.nbytes if io_in_workspace else 0)
    return StreamStage(nodes=nodes, band=band, bands=bands, first_band=first,
                       tensors=tensors, input=x, output=y, macs=macs, streamed_macs=streamed,
                       copy_bytes=copy, window_bytes=windows, peak_bytes=whole + windows)


def _first_band(st: StreamTensor) -> int:
    """The latest band at which ``st``'s kept rows all lie above the image (its new rows
    start at row 0 or above it): ``j * new + phase <= 0``."""
    return math.floor(-st.phase / st.new)


def _merge(t: Tensor, reads: list, band: int) -> StreamTensor:
    """The window of ``t`` that serves all its readers (one scale, one fill)."""
    fills = {f for *_, f in reads if f is not None}
    if len(fills) > 1:
        raise PatchError(f"tensor {t.name!r} is read by layers that pad it differently "
                         f"({sorted(map(str, fills))}); not supported yet")
    scales = {s for s, *_ in reads}
    if len(scales) != 1:
        raise PatchError(f"tensor {t.name!r} reaches the stage output through paths of "
                         "different strides; not supported yet")
    scale = scales.pop()
    new = band * scale
    start = min(r[1] for r in reads)
    end = max(r[2] for r in reads)
    return StreamTensor(t, scale, new, end - new, max(new, end - start),
                        fills.pop() if fills else None)


def _copy_bytes(tensors, y: Tensor, first: int, bands: int) -> int:
    """Bytes moved per inference besides the layers: the windows' first fill, each band's
    slides, the stage input's rows (copied or filled) and the out-of-image rows filled."""
    total = 0
    for st in tensors.values():
        if st.tensor is y:
            continue
        total += st.window_bytes + (bands - first) * st.kept * st.row_bytes
        if st.fill is None:
            continue
        for j in range(first, bands):
            r = st.first_new(j)
            outside = st.new - max(0, min(r + st.new, st.height) - max(r, 0))
            total += outside * st.row_bytes
    return total


def read_rows(stage: StreamStage, node: Node, t: Tensor) -> tuple[int, int]:
    """``(offset, rows)``: the run of ``t``'s window that ``node`` reads at every band."""
    out, src = stage.tensors[id(node.outputs[0])], stage.tensors[id(t)]
    base = src.window_start(0)
    if node.op == "add":
        return out.phase - base, out.new
    (kh, _), (sh, _), (dh, _), (top, _) = _window(node)
    return out.phase * sh - top - base, (out.new - 1) * sh + (kh - 1) * dh + 1


# --------------------------------------------------------------------------- execution

def run_stream(stage: StreamStage, x: np.ndarray) -> np.ndarray:
    """The stage output computed band by band with the reference interpreter, exactly as
    the generated code does it (windows, slides, skipped layers, fills).  Bit-exact with
    the whole layers when the analysis is right."""
    from aot.reference import interpreter  # the reference is a consumer, not a dependency

    x = np.asarray(x)
    if x.shape != stage.input.shape:
        raise PatchError(f"the stage input must have shape {list(stage.input.shape)}, "
                         f"got {list(x.shape)}")
    layers = [_band_layer(stage, node) for node in stage.nodes]
    windows = {key: np.full((1, st.window) + st.tensor.shape[2:],
                            st.fill if st.fill is not None else 0, st.tensor.type.np_dtype)
               for key, st in stage.tensors.items() if st.tensor is not stage.output}
    out = np.empty(stage.output.shape, stage.output.type.np_dtype)
    xs = stage.tensors[id(stage.input)]
    for j in range(stage.first_band, stage.bands):
        for key, w in windows.items():
            st = stage.tensors[key]
            w[:, :st.kept] = w[:, st.new:].copy()
        windows[id(stage.input)][:, xs.kept:] = _cut_rows(x, xs, j)
        for node, layer in zip(stage.nodes, layers, strict=True):
            y = node.outputs[0]
            st = stage.tensors[id(y)]
            if not st.computes(j):
                if st.fill is not None:
                    windows[id(y)][:, st.kept:] = st.fill
                continue
            args = []
            for t in _data_inputs(node):
                off, rows = read_rows(stage, node, t)
                args.append(windows[id(t)][:, off:off + rows])
            value = interpreter.run(layer, args)[0]
            if y is stage.output:
                out[:, j * stage.band:(j + 1) * stage.band] = value
                continue
            dst = windows[id(y)][:, st.kept:]
            dst[...] = value
            if st.fill is not None:
                rows = np.arange(st.first_new(j), st.first_new(j) + st.new)
                dst[:, (rows < 0) | (rows >= st.height)] = st.fill
    return out


def _cut_rows(x: np.ndarray, st: StreamTensor, band: int) -> np.ndarray:
    """The stage input's new rows of band ``band``, out-of-image rows filled."""
    rows = np.full((1, st.new) + x.shape[2:], st.fill if st.fill is not None else 0, x.dtype)
    r0 = st.first_new(band)
    lo, hi = max(r0, 0), min(r0 + st.new, st.height)
    if lo < hi:
        rows[:, lo - r0:hi - r0] = x[:, lo:hi]
    return rows


def _band_layer(stage: StreamStage, node: Node) -> Graph:
    """``node`` alone on its band shapes: VALID along the rows, its own column padding."""
    ins, inputs = [], []
    for slot, t in enumerate(node.inputs):
        if t is None or t.kind == "constant":
            inputs.append(t)
            continue
        _, rows = read_rows(stage, node, t)
        p = Tensor(f"{t.name}_rows{slot}", TensorType((1, rows) + t.shape[2:], t.dtype,
                                                      t.quant), kind="input")
        ins.append(p)
        inputs.append(p)
    y = node.outputs[0]
    st = stage.tensors[id(y)]
    out = Tensor(f"{y.name}_band", TensorType((1, st.new) + y.shape[2:], y.dtype, y.quant))
    return Graph(ins, [out], [Node(node.op, inputs, [out], _band_attrs(node), node.name)])


def _band_attrs(node: Node) -> dict:
    attrs = dict(node.attrs)
    if "padding" in attrs:
        _, left, _, right = attrs["padding"]
        attrs["padding"] = (0, left, 0, right)
    return attrs


# --------------------------------------------------------------------------- code

@dataclass(frozen=True)
class BandTensor:
    """Where a tensor of :func:`band_graph` lives: ``rows`` rows of the window of stage
    tensor ``source`` from row ``offset`` (for the stage output: band ``j``'s rows of
    the output itself)."""

    source: StreamTensor
    offset: int
    rows: int


def band_graph(stage: StreamStage) -> tuple[Graph, dict[str, BandTensor]]:
    """The stage's layers on their band shapes (one kernel each serves every band) and
    where each of its tensors lives.  A layer reading exactly the new rows of a tensor
    written inside the stage reads that layer's output (so a residual add can fuse into
    the convolution before it); any other read is an input of its own, a run of rows of
    a window.  Every tensor whose window someone reads is an output of the graph."""
    made: dict[str, Tensor] = {}
    where: dict[str, BandTensor] = {}
    written = {id(n.outputs[0]) for n in stage.nodes}
    inputs, outputs = [], []

    def band_of(t: Tensor) -> Tensor:
        st = stage.tensors[id(t)]
        name = f"{t.name}_band"
        if name not in made:
            made[name] = Tensor(name, TensorType((1, st.new) + t.shape[2:], t.dtype, t.quant))
            where[name] = BandTensor(st, st.kept, st.new)
        return made[name]

    def rows_of(t: Tensor, off: int, rows: int) -> Tensor:
        st = stage.tensors[id(t)]
        if id(t) in written and (off, rows) == (st.kept, st.new):
            return band_of(t)
        name = f"{t.name}_rows{off}_{rows}"
        if name not in made:
            made[name] = Tensor(name, TensorType((1, rows) + t.shape[2:], t.dtype, t.quant),
                                kind="input")
            where[name] = BandTensor(st, off, rows)
            inputs.append(made[name])
            if id(t) in written and band_of(t) not in outputs:
                outputs.append(band_of(t))
        return made[name]

    nodes = []
    for node in stage.nodes:
        data = [id(t) for t in _data_inputs(node)]
        ins = [rows_of(t, *read_rows(stage, node, t)) if t is not None and id(t) in data
               else t for t in node.inputs]
        nodes.append(Node(node.op, ins, [band_of(node.outputs[0])], _band_attrs(node),
                          f"{node.name}_band"))
    y = band_of(stage.output)
    outputs = [t for t in outputs if t is not y] + [y]
    return Graph(inputs, outputs, nodes, f"{stage.output.name}_bands"), where


# --------------------------------------------------------------------------- choice

def stream_candidates(graph: Graph, *, io_in_workspace: bool = True):
    """Every stream stage of ``graph``: each stage length and band height."""
    for n in stage_lengths(graph):
        try:
            bands = stream_bands(graph, n)
        except PatchError:
            continue
        for band in bands:
            try:
                yield analyze_stream(graph, n, band, io_in_workspace=io_in_workspace)
            except PatchError:
                continue


def choose_stream(graph: Graph, *, allowance: float | None = None, band: int | None = None,
                  io_in_workspace: bool = True):
    """The stream stage with the lowest estimated peak (:func:`aot.executor.patches.
    estimate_peak`; ties to less extra work), among those with ``band`` rows per band if
    given and extra work (out-of-image MACs and bytes copied or filled, relative to the
    model's MACs) within ``allowance`` if given.  With an allowance, a stage that does
    not lower the peak is not chosen (the estimate's ``stage`` is None).

    The search is bounded, so it grows linearly with the layers: a stage of the first
    ``n`` nodes in bands of ``t`` rows holds at least :func:`peak_floor` ``(n, t)`` bytes,
    which grows with ``n`` and ``t``; once that floor exceeds the best peak found, no
    longer stage or taller band can win and none is analysed.  The choice is the one the
    exhaustive search makes (a candidate above the best peak never replaces it)."""
    if allowance is not None and allowance < 0:
        raise PatchError(f"the instruction allowance must not be negative, got {allowance}")
    alive = alive_by_node(graph, io_in_workspace)
    best = estimate_peak(graph, None, alive=alive) if allowance is not None else None
    row_sums = _RowSums(graph)
    for n in iter_stage_lengths(graph):
        floor = row_sums(n)
        if best is not None and peak_floor(floor, band or 1) > best.bytes_after:
            break
        try:
            heights = stream_bands(graph, n)
        except PatchError:
            continue
        for t in heights:
            if band is not None and t != band:
                continue
            if best is not None and peak_floor(floor, t) > best.bytes_after:
                break
            try:
                stage = analyze_stream(graph, n, t, io_in_workspace=io_in_workspace)
            except PatchError:
                continue
            est = estimate_peak(graph, stage, alive=alive)
            if allowance is not None and est.extra_work > allowance:
                continue
            if best is None or (est.bytes_after, est.extra_work) < (best.bytes_after,
                                                                    best.extra_work):
                best = est
    return best


def peak_floor(rows: int, band: int) -> int:
    """A lower bound of :attr:`StreamStage.peak_bytes` for bands of ``band`` rows, given
    ``rows``, the bytes of one row of every stage layer's output together: each
    layer's output but the stage's holds a window of at least ``band`` new rows (its
    ``new = band * scale``, ``scale >= 1``), and the stage output all its rows, at least
    ``band``."""
    return band * rows


class _RowSums:
    """``self(n)``: the bytes of one row of each of the first ``n`` nodes' outputs
    (:func:`peak_floor`'s ``rows``), each node's row counted once as ``n`` grows."""

    def __init__(self, graph: Graph) -> None:
        self.nodes = graph.nodes
        self.sums = [0]

    def __call__(self, n: int) -> int:
        while len(self.sums) <= n:  # the nodes of a stage are NHWC of batch 1
            t = self.nodes[len(self.sums) - 1].outputs[0]
            self.sums.append(self.sums[-1] + row_bytes(t))
        return self.sums[n]
