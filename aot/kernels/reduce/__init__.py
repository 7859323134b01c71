"""MEAN and SUM over any set of axes (TFLM's arithmetic), REDUCE_ALL, and REDUCE_MAX
and REDUCE_MIN (values of the input, so no arithmetic: TFLM requires one
quantization for input and output).

int8/int16: ``acc = sum(x - x_zp)`` in int32, then one
``MultiplyByQuantizedMultiplier`` with the reference's own multiplier for
the count (``aot.quant.params.mean_multiplier``), plus the output
zero point, clamped;
float32: the sum divided by the count.  SUM is the same sum requantized
with ``QM(s_in / s_out)`` (float32: added in the input's order).  Global average pooling exported as
MEAN over H and W is the common case.
"""

from __future__ import annotations

import math

from aot import te
from aot.kernels.common import requantize
from aot.kernels.kernel import KernelError
from aot.kernels.registry import Computed, compute_rule, strategy
from aot.quant.arith import qrange
from aot.quant import arith as quant
from aot.quant.params import CUMSUM_LEFT_SHIFT, cumsum_params_int8, f32, mean_multiplier
from aot.tir import expr as E


def _reader(x, rank: int, axes: list[int], keep: bool, shape):
    """``read(i)``: the input element for output index ``i`` and the current
    reduction indices; and the reduction axes by input axis."""
    red = {a: te.reduce_axis((0, int(shape[a])), f"r{a}") for a in axes}

    def read(i):
        idx, out = [], iter(i)
        for a in range(rank):
            if a in red:
                idx.append(red[a])
                if keep:
                    next(out)
            else:
                idx.append(next(out))
        return x[tuple(idx)]
    return read, red


@compute_rule("reduce_max")
@compute_rule("reduce_min")
def reduce_extreme(ctx, node) -> Computed:
    x_t, y_t = node.inputs[0], node.outputs[0]
    if x_t.quant != y_t.quant:
        raise KernelError(f"{node.op} ({node.name}): input and output quantized differently: "
                          "not supported (TFLM requires one quantization)")
    rank = len(x_t.shape)
    axes = sorted({int(a) % rank for a in node.attrs["axes"]})
    read, red = _reader(ctx.value(x_t), rank, axes, bool(node.attrs["keepdims"]), x_t.shape)
    reducer = te.max if node.op == "reduce_max" else te.min
    acc = te.compute(tuple(y_t.shape), lambda *i: reducer(read(i), axis=list(red.values())),
                     name="acc")
    return Computed(acc, {"acc": acc})


@compute_rule("reduce_all")
def reduce_all(ctx, node) -> Computed:
    """The minimum of the bools read as int8 (1 unless some element is 0)."""
    x_t, y_t = node.inputs[0], node.outputs[0]
    rank = len(x_t.shape)
    axes = sorted({int(a) % rank for a in node.attrs["axes"]})
    read, red = _reader(ctx.value(x_t), rank, axes, bool(node.attrs["keepdims"]), x_t.shape)
    shape = tuple(y_t.shape)
    acc = te.compute(shape, lambda *i: te.min(read(i).astype("int8"), axis=list(red.values())),
                     name="acc")
    y = te.compute(shape, lambda *i: acc[i].astype("bool"), name="y")
    return Computed(y, {"acc": acc})


@compute_rule("arg_max")
@compute_rule("arg_min")
def arg_extreme(ctx, node) -> Computed:
    """Two reductions along ``axis``: the extreme value ``m``, then the least
    index ``k`` with ``x[k] == m`` (the first one, as TFLM's strict comparison)."""
    x_t, y_t = node.inputs[0], node.outputs[0]
    rank = len(x_t.shape)
    axis = int(node.attrs["axis"]) % rank
    x = ctx.value(x_t)
    n = int(x_t.shape[axis])
    shape = tuple(y_t.shape)
    r1 = te.reduce_axis((0, n), "r")
    r2 = te.reduce_axis((0, n), "k")

    def at(i, r):
        idx = list(i)
        idx.insert(axis, r)
        return x[tuple(idx)]
    reducer = te.max if node.op == "arg_max" else te.min
    m = te.compute(shape, lambda *i: reducer(at(i, r1), axis=[r1]), name="acc")
    dtype = y_t.dtype

    def first(*i):
        hit = at(i, r2).equal(m[i])
        return te.min(te.if_then_else(hit, r2.var.astype(dtype), E.const(n, dtype)), axis=[r2])
    return Computed(te.compute(shape, first, name="y"), {"acc": m})


@compute_rule("mean")
def mean(ctx, node) -> Computed:
    x_t, y_t = node.inputs[0], node.outputs[0]
    x = ctx.value(x_t)
    rank = len(x_t.shape)
    axes = sorted({int(a) % rank for a in node.attrs["axes"]})
    keep = bool(node.attrs["keepdims"])
    n = math.prod(int(x_t.shape[a]) for a in axes)
    read, red = _reader(x, rank, axes, keep, x_t.shape)

    shape = tuple(y_t.shape)
    raxes = list(red.values())
    if y_t.dtype == "float32":
        acc = te.compute(shape, lambda *i: te.sum(read(i), axis=raxes), name="acc")
        y = te.compute(shape, lambda *i: acc[i] / E.const(float(n), "float32"), name="y")
        return Computed(y, {"acc": acc})
    if y_t.dtype not in ("int8", "int16") or x_t.dtype != y_t.dtype:
        raise KernelError(f"mean ({node.name}) from {x_t.dtype} to {y_t.dtype}: not supported "
                          "yet")
    if any(t.quant is None or t.quant.is_per_axis for t in (x_t, y_t)):
        raise KernelError(f"mean ({node.name}): needs per-tensor quantization")
    x_zp = int(x_t.quant.zero_point[0])
    acc = te.compute(shape, lambda *i: te.sum(read(i).astype("int32") - x_zp, axis=raxes),
                     name="acc")
    mult, shift = mean_multiplier(n, x_t.quant.scale[0], y_t.quant.scale[0])
    y_zp = int(y_t.quant.zero_point[0])
    y = te.compute(shape, lambda *i: requantize(acc[i], mult, shift, y_zp, qrange(y_t.dtype),
                                                y_t.dtype), name="y")
    return Computed(y, {"acc": acc})


@compute_rule("sum")
def reduce_sum(ctx, node) -> Computed:
    x_t, y_t = node.inputs[0], node.outputs[0]
    rank = len(x_t.shape)
    axes = sorted({int(a) % rank for a in node.attrs["axes"]})
    read, red = _reader(ctx.value(x_t), rank, axes, bool(node.attrs["keepdims"]), x_t.shape)
    shape, raxes = tuple(y_t.shape), list(red.values())
    if y_t.dtype == "float32":
        acc = te.compute(shape, lambda *i: te.sum(read(i), axis=raxes), name="acc")
        return Computed(acc, {"acc": acc})
    if any(t.quant is None or t.quant.is_per_axis for t in (x_t, y_t)):
        raise KernelError(f"sum ({node.name}): needs per-tensor quantization")
    x_zp = int(x_t.quant.zero_point[0])
    acc = te.compute(shape, lambda *i: te.sum(read(i).astype("int32") - x_zp, axis=raxes),
                     name="acc")
    mult, shift = quant.quantize_multiplier(f32(x_t.quant.scale[0]) / f32(y_t.quant.scale[0]))
    y_zp = int(y_t.quant.zero_point[0])
    y = te.compute(shape, lambda *i: requantize(acc[i], mult, shift, y_zp, qrange(y_t.dtype),
                                                y_t.dtype), name="y")
    return Computed(y, {"acc": acc})


@compute_rule("cumsum")
def cumsum(ctx, node) -> Computed:
    """``y[k] = start + sum of t(x[j])`` over the ``j`` before ``k`` along the
    axis (after it when ``reverse``; ``k`` itself unless ``exclusive``): a
    reduction over the whole axis whose terms outside the range are 0.  The
    reduction walks the axis in TFLM's order (backwards when ``reverse``), so
    float32 rounds as TFLM's running sum.  int8: ``t(v) = QM(2**20 (v - zp))``
    with the halving multiplier and ``start = t(0)`` (TFLM's starting value),
    then the sum is requantized to the output."""
    x_t, y_t = node.inputs[0], node.outputs[0]
    x = ctx.value(x_t)
    rank = len(x_t.shape)
    axis = int(node.attrs["axis"]) % rank
    n = int(x_t.shape[axis])
    exclusive, reverse = bool(node.attrs["exclusive"]), bool(node.attrs["reverse"])
    shape = tuple(y_t.shape)
    r = te.reduce_axis((0, n), "r")
    quantized = y_t.dtype != "float32"
    if quantized:
        if any(t.quant is None or t.quant.is_per_axis for t in (x_t, y_t)):
            raise KernelError(f"cumsum ({node.name}): needs per-tensor quantization")
        x_zp = int(x_t.quant.zero_point[0])
        im, ishift, om, oshift = cumsum_params_int8(x_t.quant.scale[0], y_t.quant.scale[0])
        start = int(quant.multiply_by_quantized_multiplier(
            quant.wrap_int32(-x_zp << CUMSUM_LEFT_SHIFT), im, ishift))

    def term(i):
        j = (n - 1) - r.var if reverse else r.var
        idx = list(i)
        idx[axis] = j
        v = x[tuple(idx)]
        if quantized:
            shifted = (v.astype("int32") - x_zp) * (1 << CUMSUM_LEFT_SHIFT)
            v = te.call_pure("int32", "aot_mbqm", shifted, im, ishift)
        k = i[axis]
        if reverse:
            inside = j > k if exclusive else j >= k
        else:
            inside = j < k if exclusive else j <= k
        return te.if_then_else(inside, v, E.const(0 if quantized else 0.0,
                                                  "int32" if quantized else "float32"))
    acc = te.compute(shape, lambda *i: te.sum(term(i), axis=[r]), name="acc")
    if not quantized:
        return Computed(acc, {"acc": acc})
    y_zp = int(y_t.quant.zero_point[0])
    y = te.compute(shape, lambda *i: requantize(acc[i] + start, om, oshift, y_zp,
                                                qrange(y_t.dtype), y_t.dtype), name="y")
    return Computed(y, {"acc": acc})


@strategy("reduce_all")
@strategy("cumsum")
@strategy("sum")
@strategy("arg_max")
@strategy("arg_min")
@strategy("reduce_max")
@strategy("reduce_min")
@strategy("mean")
def schedule_mean_generic(s, final, stages) -> None:
    """One output at a time with its reduction innermost (a scalar output
    keeps the sum in its own one-element buffer).  A reduction that is the
    group's output (max, min without an epilogue) is already that loop nest.

    When the group's output broadcasts the reduction again (LayerNorm's
    ``x - mean(x)`` or ``x * rsqrt(var + eps)``: the reduced axes, kept as
    size 1, come back at full size), the sum is computed once per reduced
    row, at the loop just outside the first output axis it does not vary
    along, instead of once per output element."""
    acc = stages["acc"]
    if final.op.axis and acc is not final:
        s[acc].compute_at(s[final], final.op.axis[_attach_axis(acc, final)])


def _attach_axis(acc, final) -> int:
    """The output loop to compute ``acc`` in (see :func:`schedule_mean_generic`)."""
    a_shape = [d.value if isinstance(d, E.IntImm) else None for d in acc.shape]
    f_shape = [d.value if isinstance(d, E.IntImm) else None for d in final.shape]
    if None in a_shape or None in f_shape:
        return len(f_shape) - 1
    if len(a_shape) != len(f_shape) or a_shape == f_shape:
        return len(f_shape) - 1
    for k, (a, f) in enumerate(zip(a_shape, f_shape)):
        if a != f:
            return max(k - 1, 0) if a == 1 else len(f_shape) - 1
    return len(f_shape) - 1
