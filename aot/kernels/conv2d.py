"""CONV_2D: NHWC activations, OHWI weights, int8 (per-channel) and float32.

int8: ``acc[n,h,w,o] = sum_{kh,kw,c} (x[...] + input_offset) * w[o,kh,kw,c]``
over the taps inside the input (padding contributes nothing), then
``clamp(MultiplyByQuantizedMultiplier(acc + bias[o], M[o], s[o]) + out_offset)``
with the constants folded by ``legalize_quantized``.  int16x8 accumulates
in int64 and uses the single-rounding int64 multiplier when the bias is
int64 (as the reference does).  The weights stay OHWI: for an NHWC input
the reduction then reads both operands contiguously along ``c``.
"""

from __future__ import annotations

import numpy as np

from aot import te
from aot.kernels.common import (channel_value, float_activation, in_bounds, multiplier_tables,
                                needs_check, requantize, window_index)
from aot.kernels.registry import Computed, compute_rule, strategy


def _taps(x, n, h, w, kh, kw, c, attrs, in_hw, out_hw, k_hw, fill):
    """``x`` at the tap, or ``fill`` where the tap falls into the padding."""
    top, left, _, _ = attrs["padding"]
    sh, sw = attrs["strides"]
    dh, dw = attrs.get("dilation", (1, 1))
    ih = window_index(h, kh, sh, dh, top)
    iw = window_index(w, kw, sw, dw, left)
    cond = in_bounds([
        (ih, in_hw[0], *needs_check(out_hw[0], k_hw[0], sh, dh, top, in_hw[0])),
        (iw, in_hw[1], *needs_check(out_hw[1], k_hw[1], sw, dw, left, in_hw[1])),
    ])
    return lambda load: load(ih, iw) if cond is None else te.if_then_else(cond, load(ih, iw), fill)


def accumulate(ctx, node, depthwise: bool):
    """The accumulator stage of conv2d or depthwise_conv2d, and the epilogue pieces."""
    x_t, w_t, b_t = node.inputs
    y_t = node.outputs[0]
    N, H, W, C = x_t.shape
    _, OH, OW, O = y_t.shape
    weights = np.asarray(w_t.data)
    KH, KW = weights.shape[1], weights.shape[2]
    x = ctx.value(x_t)
    w = ctx.const(f"{node.name}_weight", weights)
    is_float = x_t.dtype == "float32"
    qp = None if is_float else ctx.quant(node)
    acc_dtype = "float32" if is_float else ("int64" if qp.wide else "int32")
    kh = te.reduce_axis((0, KH), "kh")
    kw = te.reduce_axis((0, KW), "kw")
    zero = te.const(0, acc_dtype) if not is_float else te.const(0.0, "float32")

    def widen(v):
        if is_float:
            return v
        return v.astype(acc_dtype) + te.const(qp.input_offset, acc_dtype)

    if depthwise:
        mult = node.attrs["depth_multiplier"]

        def body(n, h, w_, o):
            tap = _taps(x, n, h, w_, kh, kw, None, node.attrs, (H, W), (OH, OW), (KH, KW), zero)
            v = tap(lambda ih, iw: widen(x[n, ih, iw, o // mult]))
            return te.sum(v * w[0, kh, kw, o].astype(acc_dtype), axis=[kh, kw])
        macs = N * OH * OW * O * KH * KW
    else:
        rc = te.reduce_axis((0, C), "rc")

        def body(n, h, w_, o):
            tap = _taps(x, n, h, w_, kh, kw, rc, node.attrs, (H, W), (OH, OW), (KH, KW), zero)
            v = tap(lambda ih, iw: widen(x[n, ih, iw, rc]))
            return te.sum(v * w[o, kh, kw, rc].astype(acc_dtype), axis=[kh, kw, rc])
        macs = N * OH * OW * O * KH * KW * C
    acc = te.compute((N, OH, OW, O), body, name="acc")
    bias = None if b_t is None else ctx.const(f"{node.name}_bias", np.asarray(b_t.data))
    return acc, bias, qp, macs


def epilogue(ctx, node, acc, bias, qp):
    """Bias, requantization (or float activation) and clamp over the channel axis."""
    y_t = node.outputs[0]
    if qp is None:
        def out(*idx):
            v = acc[idx]
            if bias is not None:
                v = v + bias[idx[-1]]
            return float_activation(v, node.attrs["activation"])
        return te.compute(acc.shape, out, name="y")
    mult_tab, shift_tab, mult, shift = multiplier_tables(ctx, node, qp)
    acc_dtype = acc.dtype

    def out(*idx):
        c = idx[-1]
        v = acc[idx]
        if bias is not None:
            b = bias[c]
            v = v + (b if b.dtype == acc_dtype else b.astype(acc_dtype))
        return requantize(v, channel_value(mult_tab, mult, c), channel_value(shift_tab, shift, c),
                          qp.output_offset, qp.clamp, y_t.dtype, wide=qp.wide)
    return te.compute(acc.shape, out, name="y")


@compute_rule("conv2d")
def conv2d(ctx, node) -> Computed:
    acc, bias, qp, macs = accumulate(ctx, node, depthwise=False)
    return Computed(epilogue(ctx, node, acc, bias, qp), {"acc": acc}, macs)


@strategy("conv2d")
def schedule_conv2d_generic(s, final, stages) -> None:
    """One output element at a time: the accumulator lives in a register
    (a one-element stack array) and the reduction runs innermost over
    (kh, kw, c), so weights and inputs are read contiguously."""
    s[stages["acc"]].compute_at(s[final], final.op.axis[-1])
