"""AVERAGE_POOL_2D and MAX_POOL_2D on NHWC data (int8, int16, float32), and
L2_POOL_2D (float32: ``sqrtf(sum of squares / count)``, TFLM's order).

Quantized pooling keeps the input's quantization; only the fused
activation's clamp (``QuantParams.clamp``) applies.  Padded taps are not
part of a window: the average divides by the number of covered input
pixels, ``count = (min(h0 + KH, H) - max(h0, 0)) * (same for w)`` with
``h0 = h * stride - top``, and rounds half away from zero with C's
truncating division: ``(sum +- count / 2) / count``.
"""

from __future__ import annotations

from aot import te
from aot.kernels.common import float_activation, in_bounds, needs_check, window_index
from aot.kernels.registry import Computed, compute_rule, strategy
from aot.tir import expr as E


def _window(ctx, node):
    x_t, y_t = node.inputs[0], node.outputs[0]
    _, H, W, _ = x_t.shape
    _, OH, OW, _ = y_t.shape
    KH, KW = node.attrs["pool_size"]
    sh, sw = node.attrs["strides"]
    top, left, _, _ = node.attrs["padding"]
    x = ctx.value(x_t)
    kh = te.reduce_axis((0, KH), "kh")
    kw = te.reduce_axis((0, KW), "kw")

    def tap(n, h, w, c, fill):
        ih = window_index(h, kh, sh, 1, top)
        iw = window_index(w, kw, sw, 1, left)
        cond = in_bounds([(ih, H, *needs_check(OH, KH, sh, 1, top, H)),
                          (iw, W, *needs_check(OW, KW, sw, 1, left, W))])
        v = x[n, ih, iw, c]
        return v if cond is None else te.if_then_else(cond, v, fill)

    def count(h, w):
        def covered(o, k, s, pad, size):
            start = o * s - pad
            return E.min_(start + k, E.const(size, "int32")) - E.max_(start, E.const(0, "int32"))
        return covered(h, KH, sh, top, H) * covered(w, KW, sw, left, W)

    return x, (kh, kw), tap, count, y_t.shape, KH * KW


def _clamped(node, v):
    y_t = node.outputs[0]
    if y_t.dtype == "float32":
        return float_activation(v, node.attrs["activation"])
    return v


@compute_rule("avg_pool2d")
def avg_pool2d(ctx, node) -> Computed:
    x, axes, tap, count, shape, window = _window(ctx, node)
    y_t = node.outputs[0]
    is_float = y_t.dtype == "float32"
    acc_dtype = "float32" if is_float else "int32"
    zero = E.const(0.0 if is_float else 0, acc_dtype)
    acc = te.compute(shape, lambda n, h, w, c: te.sum(
        tap(n, h, w, c, zero) if is_float else tap(n, h, w, c, E.const(0, x.dtype))
        .astype(acc_dtype), axis=list(axes)), name="acc")
    if is_float:
        out = te.compute(shape, lambda n, h, w, c: _clamped(
            node, acc[n, h, w, c] / count(h, w).astype("float32")), name="y")
    else:
        lo, hi = ctx.quant(node).clamp

        def body(n, h, w, c):
            s, k = acc[n, h, w, c], count(h, w)
            half = te.truncdiv(k, 2)
            avg = te.truncdiv(te.if_then_else(s > 0, s + half, s - half), k)
            return te.clamp(avg, lo, hi).astype(y_t.dtype)
        out = te.compute(shape, body, name="y")
    return Computed(out, {"acc": acc}, int(y_t.type.size) * window)


@compute_rule("max_pool2d")
def max_pool2d(ctx, node) -> Computed:
    x, axes, tap, _, shape, window = _window(ctx, node)
    y_t = node.outputs[0]
    lowest = te.min_value(x.dtype)
    acc = te.compute(shape, lambda n, h, w, c: te.max(tap(n, h, w, c, lowest), axis=list(axes)),
                     name="acc")
    if y_t.dtype == "float32":
        out = te.compute(shape, lambda *i: _clamped(node, acc[i]), name="y")
    else:
        lo, hi = ctx.quant(node).clamp
        out = te.compute(shape, lambda *i: te.clamp(acc[i], lo, hi), name="y")
    return Computed(out, {"acc": acc}, int(y_t.type.size) * window)


@compute_rule("l2_pool2d")
def l2_pool2d(ctx, node) -> Computed:
    x, axes, tap, count, shape, window = _window(ctx, node)
    zero = E.const(0.0, "float32")

    def square(n, h, w, c):
        v = tap(n, h, w, c, zero)
        return v * v
    acc = te.compute(shape, lambda *i: te.sum(square(*i), axis=list(axes)), name="acc")
    out = te.compute(shape, lambda n, h, w, c: _clamped(
        node, te.sqrt(acc[n, h, w, c] / count(h, w).astype("float32"))), name="y")
    return Computed(out, {"acc": acc}, int(node.outputs[0].type.size) * window)


@strategy("l2_pool2d")
@strategy("avg_pool2d")
@strategy("max_pool2d")
def schedule_pool_generic(s, final, stages) -> None:
    """One output element at a time with its window innermost."""
    s[stages["acc"]].compute_at(s[final], final.op.axis[-1])
