"""Data movement: TRANSPOSE, CONCATENATION, STRIDED_SLICE, PAD, MIRROR_PAD,
BROADCAST_TO, GATHER, GATHER_ND, DYNAMIC_UPDATE_SLICE and nearest-neighbour
and bilinear resizing.

Each output element is one input element (or PAD's constant): the integers
are copied raw, as TFLM's kernels and the reference interpreter
(``aot.reference``) copy them, so an output quantized differently from its
input reads them with its own scale and zero point (no requantization;
bilinear resizing interpolates the integers the same way, and
DYNAMIC_UPDATE_SLICE still refuses differently quantized operands).  PAD writes
the real ``value`` in the output's quantization (the zero point for 0.0).
Selections use ``te.if_then_else``, which C evaluates lazily, so no operand is
read out of its bounds.  Padding that a convolution or pooling consumes is folded into
it by the passes and never reaches this kernel.
"""

from __future__ import annotations

import numpy as np

from aot import te
from aot.kernels.kernel import KernelError
from aot.kernels.registry import Computed, compute_rule
from aot.reference.ops.shape import bilinear_taps, nearest_indices
from aot.tir import expr as E


@compute_rule("transpose")
def transpose(ctx, node) -> Computed:
    """``y[i_0, ..., i_n] = x[j]`` with ``j[perm[k]] = i_k``."""
    x = ctx.value(node.inputs[0])
    perm = list(node.attrs["perm"])

    def body(*i):
        j = [None] * len(perm)
        for k, axis in enumerate(perm):
            j[axis] = i[k]
        return x[tuple(j)]
    return Computed(te.compute(tuple(node.outputs[0].shape), body, name="y"))


@compute_rule("concatenate")
def concatenate(ctx, node) -> Computed:
    """The operands one after the other along ``axis``: the output index along
    it picks the operand whose range holds it (a chain of selects)."""
    if node.attrs.get("activation", "none") != "none":
        raise KernelError(f"concatenate ({node.name}) with a fused activation: not supported "
                          "yet")
    y_t = node.outputs[0]
    axis = node.attrs["axis"] % len(y_t.shape)
    parts = [(ctx.value(t), int(t.shape[axis])) for t in node.inputs]
    return Computed(te.compute(tuple(y_t.shape), _ordered(parts, axis), name="y"))


def _ordered(parts, axis):
    """``body`` of :func:`concatenate`: ``i < end_0 ? p_0 : i < end_1 ? p_1 : ... p_last``."""
    ends = np.cumsum([n for _, n in parts])

    def body(*i):
        (last, _) = parts[-1]
        value = _read(last, i, axis, int(ends[-1]) - parts[-1][1])
        for k in range(len(parts) - 2, -1, -1):
            t, n = parts[k]
            start = int(ends[k]) - n
            value = te.if_then_else(i[axis] < int(ends[k]), _read(t, i, axis, start), value)
        return value
    return body


def _read(t, i, axis, start):
    idx = list(i)
    if start:
        idx[axis] = i[axis] - start
    return t[tuple(idx)]


@compute_rule("strided_slice")
def strided_slice(ctx, node) -> Computed:
    """``y = x[b_0:e_0:s_0, ...]`` (begin, end and strides resolved by the
    importer), then the ``squeeze_axes`` dropped: output axis k reads input
    axis ``a_k`` at ``start + i_k * step``; dropped axes read their one index."""
    x_t, y_t = node.inputs[0], node.outputs[0]
    x = ctx.value(x_t)
    a = node.attrs
    ranges = [range(d)[b:e:s] for b, e, s, d in zip(a["begin"], a["end"], a["strides"],
                                                     x_t.shape)]
    squeezed = {ax % len(x_t.shape) for ax in a.get("squeeze_axes", ())}
    kept = [ax for ax in range(len(x_t.shape)) if ax not in squeezed]

    def body(*i):
        idx = []
        for ax, r in enumerate(ranges):
            if ax in squeezed:
                idx.append(r.start)
            else:
                k = i[kept.index(ax)]
                idx.append(k * r.step + r.start)
        return x[tuple(idx)]
    return Computed(te.compute(tuple(y_t.shape), body, name="y"))


@compute_rule("pad")
def pad(ctx, node) -> Computed:
    """``y[i] = x[i - before]`` inside the data, the constant elsewhere."""
    x_t, y_t = node.inputs[0], node.outputs[0]
    x = ctx.value(x_t)
    widths = [tuple(int(v) for v in p) for p in node.attrs["pad_width"]]
    value = np.float32(node.attrs["value"])
    if y_t.quant is not None:
        info = np.iinfo(y_t.type.np_dtype)
        q = int(y_t.quant.zero_point[0]) + int(np.round(value / np.float32(y_t.quant.scale[0])))
        fill = E.const(int(np.clip(q, info.min, info.max)), y_t.dtype)
    else:
        fill = E.const(float(value), y_t.dtype)

    def body(*i):
        conds, idx = [], []
        for k, ((before, after), n) in enumerate(zip(widths, x_t.shape)):
            idx.append(i[k] - before if before else i[k])
            if before:
                conds.append(i[k] >= before)
            if after:
                conds.append(i[k] < before + int(n))
        read = x[tuple(idx)]
        # likely: loop partitioning peels the border, the interior copies without tests
        return te.if_then_else(te.likely(te.all(*conds)), read, fill) if conds else read
    return Computed(te.compute(tuple(y_t.shape), body, name="y"))


@compute_rule("mirror_pad")
def mirror_pad(ctx, node) -> Computed:
    """Inside the data ``y[i] = x[i - before]``; before it the mirror image
    ``x[-j]`` (reflect) or ``x[-j - 1]`` (symmetric) of ``j = i - before``,
    after it ``x[2(n-1) - j]`` or ``x[2n - 1 - j]``."""
    x_t, y_t = node.inputs[0], node.outputs[0]
    x = ctx.value(x_t)
    widths = [tuple(int(v) for v in p) for p in node.attrs["pad_width"]]
    edge = 0 if node.attrs["mode"] == "reflect" else 1

    def body(*i):
        idx = []
        for k, ((before, after), n) in enumerate(zip(widths, x_t.shape)):
            j = i[k] - before if before else i[k]
            n = int(n)
            if after:
                j = te.if_then_else(j >= n, 2 * n - 2 + edge - j, j)
            if before:
                j = te.if_then_else(j < 0, -j - edge, j)
            idx.append(j)
        return x[tuple(idx)]
    return Computed(te.compute(tuple(y_t.shape), body, name="y"))


@compute_rule("broadcast_to")
def broadcast_to(ctx, node) -> Computed:
    """``y[i] = x[i']`` with the leading axes dropped and index 0 on axes of size 1."""
    x_t, y_t = node.inputs[0], node.outputs[0]
    x = ctx.value(x_t)
    lead = len(y_t.shape) - len(x_t.shape)

    def body(*i):
        return x[tuple(0 if d == 1 else i[lead + k] for k, d in enumerate(x_t.shape))]
    return Computed(te.compute(tuple(y_t.shape), body, name="y"))


#: Output positions whose float32 rounding differs from the integer formula,
#: fixed one by one with a select; more than this is refused.
_MAX_NEAREST_FIXES = 8


def _nearest_map(in_size: int, out_size: int, align: bool, half: bool):
    """The output -> input index map of TFLite's nearest resize: integer
    arithmetic ``(o * a + b) // c`` plus the positions where TFLite's float32
    arithmetic lands on another index ({o: index}); None when there are more
    than :data:`_MAX_NEAREST_FIXES`."""
    want = nearest_indices(in_size, out_size, align_corners=align, half_pixel_centers=half)
    if align and out_size > 1:   # round(o (in-1)/(out-1)), halves up
        a, b, c = 2 * (in_size - 1), out_size - 1, 2 * (out_size - 1)
    elif half:                   # floor((o + 1/2) in / out)
        a, b, c = 2 * in_size, in_size, 2 * out_size
    else:                        # floor(o in / out)
        a, b, c = in_size, 0, out_size
    got = (np.arange(out_size) * a + b) // c
    fixes = {int(o): int(want[o]) for o in np.flatnonzero(got != want)}
    if len(fixes) > _MAX_NEAREST_FIXES:
        return None
    return (a, b, c), fixes


@compute_rule("resize_nearest")
def resize_nearest(ctx, node) -> Computed:
    """``y[n, r, c, k] = x[n, rows(r), cols(c), k]`` with TFLite's index rounding."""
    x_t, y_t = node.inputs[0], node.outputs[0]
    x = ctx.value(x_t)
    a = node.attrs
    maps = []
    for in_size, out_size in zip(x_t.shape[1:3], a["size"]):
        m = _nearest_map(int(in_size), int(out_size), a["align_corners"],
                         a["half_pixel_centers"])
        if m is None:
            raise KernelError(f"resize_nearest ({node.name}): resizing {in_size} to {out_size} "
                              f"rounds differently from integer arithmetic at more than "
                              f"{_MAX_NEAREST_FIXES} positions in float32: not supported yet")
        maps.append(m)

    def index(i, m):
        (mul, add, div), fixes = m
        j = i if add == 0 and mul == div else (i * mul + add) // div
        for o, value in sorted(fixes.items()):
            j = te.if_then_else(i.equal(o), value, j)  # == is identity on expressions
        return j

    def body(n, r, c, k):
        return x[n, index(r, maps[0]), index(c, maps[1]), k]
    return Computed(te.compute(tuple(y_t.shape), body, name="y"))


@compute_rule("gather")
def gather(ctx, node) -> Computed:
    """``y[o, c, n] = x[o, idx[b, c], n]`` with ``o`` the output axes before
    ``axis`` (the first ``batch_dims`` of them are ``b``), ``c`` those of the
    indices after the batch axes, ``n`` the rest.  An index out of range
    (TFLM fails the invocation) is clamped into it, so nothing is read
    outside ``x``."""
    x_t, i_t, y_t = node.inputs[0], node.inputs[1], node.outputs[0]
    x, idx = ctx.value(x_t), ctx.value(i_t)
    rank, irank = len(x_t.shape), len(i_t.shape)
    axis = node.attrs["axis"] % rank
    bd = node.attrs["batch_dims"]
    bd = bd + irank if bd < 0 else bd
    coords = irank - bd
    size = int(x_t.shape[axis])

    def body(*i):
        at = tuple(i[:bd]) + tuple(i[axis:axis + coords])
        pos = idx[at if at or not idx.shape else (0,)]  # a constant scalar has shape [1]
        j = te.clamp(pos, 0, size - 1)
        return x[tuple(i[:axis]) + (j,) + tuple(i[axis + coords:])]
    return Computed(te.compute(tuple(y_t.shape), body, name="y"))


@compute_rule("gather_nd")
def gather_nd(ctx, node) -> Computed:
    """``y[r, s] = x[idx[r, 0], ..., idx[r, nd-1], s]`` with ``r`` the index
    rows and ``s`` the slice axes; each index is clamped into its axis (TFLM
    reads whatever lies there), so nothing is read outside ``x``."""
    x_t, i_t, y_t = node.inputs[0], node.inputs[1], node.outputs[0]
    x, idx = ctx.value(x_t), ctx.value(i_t)
    nd = int(i_t.shape[-1])
    rows = len(i_t.shape) - 1

    def body(*i):
        picks = tuple(te.clamp(idx[tuple(i[:rows]) + (k,)], 0, int(x_t.shape[k]) - 1)
                      for k in range(nd))
        return x[picks + tuple(i[rows:])]
    return Computed(te.compute(tuple(y_t.shape), body, name="y"))


@compute_rule("resize_bilinear")
def resize_bilinear(ctx, node) -> Computed:
    """``y = x[y0,x0] wy0 wx0 + x[y1,x0] wy1 wx0 + x[y0,x1] wy0 wx1 + x[y1,x1] wy1 wx1``
    with the taps and weights of :func:`aot.reference.ops.shape.bilinear_taps`
    as constant tables per output row and column (the float32 ones computed
    as TFLite computes them, so the sum rounds the same).  int8: the sum in
    int64 Q20, rounded half away from zero, cast without a clamp (TFLite's)."""
    x_t, y_t = node.inputs[0], node.outputs[0]
    x = ctx.value(x_t)
    a = node.attrs
    integer = x_t.dtype != "float32"
    tables = []
    for axis, (in_size, out_size) in enumerate(zip(x_t.shape[1:3], a["size"])):
        lo, hi, w_lo, w_hi = bilinear_taps(int(in_size), int(out_size),
                                           align_corners=a["align_corners"],
                                           half_pixel_centers=a["half_pixel_centers"],
                                           integer=integer)
        wtype = np.int32 if integer else np.float32
        tables.append([ctx.const(f"{node.name}_{'yx'[axis]}{k}", v.astype(t)) for k, v, t in
                       (("lo", lo, np.int32), ("hi", hi, np.int32), ("wlo", w_lo, wtype),
                        ("whi", w_hi, wtype))])
    (y0, y1, wy0, wy1), (x0, x1, wx0, wx1) = tables

    def body(n, r, c, k):
        taps = [(x[n, y0[r], x0[c], k], wy0[r], wx0[c]), (x[n, y1[r], x0[c], k], wy1[r], wx0[c]),
                (x[n, y0[r], x1[c], k], wy0[r], wx1[c]), (x[n, y1[r], x1[c], k], wy1[r], wx1[c])]
        if not integer:
            total = None
            for v, wy, wx in taps:
                term = v * wy * wx
                total = term if total is None else total + term
            return total + E.const(0.0, "float32")
        total = None
        for v, wy, wx in taps:
            term = v.astype("int64") * wy.astype("int64") * wx.astype("int64")
            total = term if total is None else total + term
        half = te.if_then_else(total > E.const(0, "int64"), E.const(1 << 19, "int64"),
                               E.const(-(1 << 19), "int64"))
        return te.truncdiv(total + half, E.const(1 << 20, "int64")).astype(y_t.dtype)
    return Computed(te.compute(tuple(y_t.shape), body, name="y"))


@compute_rule("dynamic_update_slice")
def dynamic_update_slice(ctx, node) -> Computed:
    """``y[i] = u[i - s]`` where ``s <= i < s + shape(u)``, else ``x[i]``, with
    ``s[k] = clamp(start[k], 0, size_k - usize_k)`` (TFLM's clamp)."""
    x_t, u_t, s_t = node.inputs
    y_t = node.outputs[0]  # quantized like x and u or not: the integers are copied raw
    x, u, start = ctx.value(x_t), ctx.value(u_t), ctx.value(s_t)
    sizes = [(int(d), int(e)) for d, e in zip(x_t.shape, u_t.shape)]

    def body(*i):
        conds, idx = [], []
        for k, (d, e) in enumerate(sizes):
            s = te.clamp(start[k], 0, d - e)
            if s_t.dtype != "int32":
                s = s.astype("int32")
            conds += [i[k] >= s, i[k] < s + e]
            idx.append(i[k] - s)
        return te.if_then_else(te.all(*conds), u[tuple(idx)], x[i])
    return Computed(te.compute(tuple(y_t.shape), body, name="y"))
