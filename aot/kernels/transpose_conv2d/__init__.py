"""TRANSPOSE_CONV as a gather: output pixel ``(oy, ox)`` sums the input
pixels ``iy`` with ``0 <= oy + pad_top - iy s_h < KH`` (and likewise in x),
each times the weight tap it lands on.

Those ``iy`` are ``iy0 + r`` for ``r < ceil(KH / s_h)`` with ``iy0 =
ceil((oy + pad_top - KH + 1) / s_h)``; taps outside the filter or the input
add zero (``if_then_else`` reads nothing there).  The reduction walks ``iy``,
then ``ix``, then the input channel, ascending: the order in which TFLM's
scatter adds to each output, so float32 rounds as TFLM.  int8: ``(x - zp) w``
in int32, int16: ``x w`` in int64; then the bias, per-channel
``MultiplyByQuantizedMultiplier`` (int64 variant for int16), the output
zero point and the type's range.  One output at a time, its sum innermost.
"""

from __future__ import annotations

import numpy as np

from aot import te
from aot.ir.analysis import node_macs
from aot.kernels.common import channel_value, requantize
from aot.kernels.kernel import KernelError
from aot.kernels.registry import Computed, compute_rule, strategy
from aot.quant import arith as quant
from aot.quant.arith import qrange
from aot.quant.params import f32
from aot.tir import expr as E


def _taps(o, pad: int, k: int, s: int, size: int, r):
    """Input index ``i`` and tap ``t`` for output ``o`` and step ``r``, and
    whether ``i < size`` and ``t`` is a tap of the filter."""
    i = (o + (pad - k + s)) // s + r
    t = o + pad - i * s
    return i, t, te.all(i < size, t >= 0, t < k)


@compute_rule("transpose_conv2d")
def transpose_conv2d(ctx, node) -> Computed:
    x_t, w_t, b_t = node.inputs
    y_t = node.outputs[0]
    n, ih, iw, ic = (int(d) for d in x_t.shape)
    oc, kh, kw, _ = (int(d) for d in w_t.shape)
    sh, sw = node.attrs["strides"]
    pt, pl = node.attrs["padding"]
    shape = tuple(int(d) for d in y_t.shape)
    x = ctx.value(x_t)
    w = ctx.const(f"{node.name}_weight", np.asarray(w_t.data))
    ry = te.reduce_axis((0, -(-kh // sh)), "ry")
    rx = te.reduce_axis((0, -(-kw // sw)), "rx")
    rc = te.reduce_axis((0, ic), "rc")
    is_float = y_t.dtype == "float32"
    if not is_float and (x_t.quant is None or w_t.quant is None or y_t.quant is None):
        raise KernelError(f"transpose_conv2d ({node.name}): integer tensors must be quantized")
    acc_dtype = "float32" if is_float else ("int64" if y_t.dtype == "int16" else "int32")
    x_zp = 0 if is_float else int(x_t.quant.zero_point[0])
    zero = E.const(0.0 if is_float else 0, acc_dtype)

    def body(b, oy, ox, c):
        iy, ty, in_y = _taps(oy, pt, kh, sh, ih, ry.var)
        ix, tx, in_x = _taps(ox, pl, kw, sw, iw, rx.var)
        xv, wv = x[b, iy, ix, rc], w[c, ty, tx, rc]
        if not is_float:
            xv = xv.astype(acc_dtype)
            if x_zp:
                xv = xv - E.const(x_zp, acc_dtype)
            wv = wv.astype(acc_dtype)
        inside = te.all(iy >= 0, in_y, ix >= 0, in_x)
        return te.sum(te.if_then_else(inside, xv * wv, zero), axis=[ry, rx, rc])
    acc = te.compute(shape, body, name="acc")
    macs = node_macs(node)
    bias = None if b_t is None else ctx.const(f"{node.name}_bias", np.asarray(b_t.data))
    if is_float:
        def fout(*i):
            return acc[i] + bias[i[-1]] if bias is not None else acc[i]
        return Computed(te.compute(shape, fout, name="y"), {"acc": acc}, macs)
    scales = np.broadcast_to(np.asarray(w_t.quant.scale, np.float32).reshape(-1), (oc,))
    mult, shift = quant.quantize_multipliers(
        [f32(x_t.quant.scale[0]) * float(s) / f32(y_t.quant.scale[0]) for s in scales])
    mult_tab = ctx.const(f"{node.name}_mult", np.asarray(mult, np.int32))
    shift_tab = ctx.const(f"{node.name}_shift", np.asarray(shift, np.int32))
    y_zp = int(y_t.quant.zero_point[0])

    def qout(*i):
        c = i[-1]
        v = acc[i]
        if bias is not None:
            v = v + bias[c].astype(acc_dtype)
        return requantize(v, channel_value(mult_tab, mult, c), channel_value(shift_tab, shift, c),
                          y_zp, qrange(y_t.dtype), y_t.dtype, wide=acc_dtype == "int64")
    return Computed(te.compute(shape, qout, name="y"), {"acc": acc}, macs)


@strategy("transpose_conv2d")
def schedule_generic(s, final, stages) -> None:
    """One output at a time, its sum innermost."""
    acc = stages["acc"]
    if acc is not final:
        s[acc].compute_at(s[final], final.op.axis[-1])
