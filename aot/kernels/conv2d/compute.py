"""The tensor expression of CONV_2D (NHWC activations, OHWI weights, int8
per channel, int16x8 and float32); depthwise_conv2d shares its accumulator.

int8: ``acc[n,h,w,o] = sum_{kh,kw,c} (x[...] + input_offset) * w[o,kh,kw,c]``
over the taps inside the input (padding contributes nothing), then
``clamp(MultiplyByQuantizedMultiplier(acc + bias[o], M[o], s[o]) + out_offset)``
with the constants folded by ``legalize_quantized``.  int16x8 accumulates
in int64 and uses the single-rounding int64 multiplier when the bias is
int64 (as the reference does).  The weights stay OHWI: for an NHWC input
the reduction then reads both operands contiguously along ``c``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from aot import te
from aot.kernels.common import (MAX_FOLDED_SHIFT, channel_value, float_activation, in_bounds,
                                multiplier_tables, needs_check, one_rounding_rows, requantize)
from aot.kernels.conv2d.fuse import conv_requant_rows
from aot.kernels.registry import Computed, compute_rule
from aot.quant.arith import multiply_by_quantized_multiplier


def _padded(x, x_t, node, out_hw, k_hw, fill):
    """The input with its padding materialized, or ``x`` itself when no tap can fall
    outside (the strategy computes the padded window per output pixel)."""
    N, H, W, C = x_t.shape
    top, left, _, _ = node.attrs["padding"]
    sh, sw = node.attrs["strides"]
    dh, dw = node.attrs.get("dilation", (1, 1))
    checks = [(H, *needs_check(out_hw[0], k_hw[0], sh, dh, top, H)),
              (W, *needs_check(out_hw[1], k_hw[1], sw, dw, left, W))]
    if not any(low or high for _, low, high in checks):
        return x, None
    rows = (out_hw[0] - 1) * sh + (k_hw[0] - 1) * dh + 1
    cols = (out_hw[1] - 1) * sw + (k_hw[1] - 1) * dw + 1

    def body(n, h, w, c):
        ih, iw = h - top, w - left
        cond = in_bounds([(ih, H, *checks[0][1:]), (iw, W, *checks[1][1:])])
        # likely: loop partitioning peels the border rows and columns, so the
        # interior copies without tests
        return te.if_then_else(te.likely(cond), x[n, ih, iw, c], fill)
    # The strategy sizes its stack buffers from the rows one output row reads.
    window_rows = (k_hw[0] - 1) * dh + 1
    pad = te.compute((N, rows, cols, C), body, name="pad", attrs={"window_rows": window_rows})
    return pad, pad


def accumulate(ctx, node, depthwise: bool):
    """The accumulator stage of conv2d or depthwise_conv2d, and the epilogue pieces.

    Padding reads the input zero point, so the input offset is folded into
    the bias at compile time: ``sum((x + off) * w) + b = sum(x * w) + (b +
    off * sum(w))`` (exact in two's complement), and the inner loop is a
    plain dot product.
    """
    x_t, w_t, b_t = node.inputs
    y_t = node.outputs[0]
    N, _, _, C = x_t.shape
    _, OH, OW, O = y_t.shape
    weights = np.asarray(w_t.data)
    KH, KW = weights.shape[1], weights.shape[2]
    sh, sw = node.attrs["strides"]
    dh, dw = node.attrs.get("dilation", (1, 1))
    x = ctx.value(x_t)
    is_float = x_t.dtype == "float32"
    qp = None if is_float else ctx.quant(node)
    acc_dtype = "float32" if is_float else ("int64" if qp.wide else "int32")
    weight_sums = weights.astype(np.int64).sum(axis=(0, 1, 2) if depthwise else (1, 2, 3))
    if depthwise and C == 1 and acc_dtype == "int32" and x_t.dtype == "int8":
        # one input channel (micro_speech): a convolution with C = 1 and OHWI
        # weights, so the conv2d helpers (2x2 blocks) apply
        depthwise = False
        weights = weights.transpose(3, 1, 2, 0)
    w = ctx.const(f"{node.name}_weight", weights)
    fill = te.const(0.0, "float32") if is_float else te.const(-qp.input_offset, x_t.dtype)
    src, pad = _padded(x, x_t, node, (OH, OW), (KH, KW), fill)
    kh = te.reduce_axis((0, KH), "kh")
    kw = te.reduce_axis((0, KW), "kw")

    def tap(n, h, w_, c):
        v = src[n, h * sh + kh * dh - (0 if pad is not None else node.attrs["padding"][0]),
                w_ * sw + kw * dw - (0 if pad is not None else node.attrs["padding"][1]), c]
        return v if is_float else v.astype(acc_dtype)

    # What the row intrinsics (conv2d.intrin) need.
    geometry = {"strides": (sh, sw), "dilation": (dh, dw)}
    if depthwise:
        mult = node.attrs["depth_multiplier"]
        acc = te.compute((N, OH, OW, O), lambda n, h, w_, o: te.sum(
            tap(n, h, w_, o if mult == 1 else o // mult) * w[0, kh, kw, o].astype(acc_dtype),
            axis=[kh, kw]), name="acc", attrs=geometry)
        macs = N * OH * OW * O * KH * KW
    else:
        rc = te.reduce_axis((0, C), "rc")
        acc = te.compute((N, OH, OW, O), lambda n, h, w_, o: te.sum(
            tap(n, h, w_, rc) * w[o, kh, kw, rc].astype(acc_dtype), axis=[kh, kw, rc]),
            name="acc", attrs=geometry)
        macs = N * OH * OW * O * KH * KW * C
    bias = fold_bias(ctx, node, b_t, None if is_float else qp.input_offset * weight_sums)
    stages = {"acc": acc} if pad is None else {"acc": acc, "pad": pad}
    if not depthwise and acc_dtype == "int32" and x_t.dtype == "int8":
        stages["dot_s8"] = acc  # the channel reduction is an int8 dot product
    if depthwise and acc_dtype == "int32" and x_t.dtype == "int8" and node.attrs[
            "depth_multiplier"] == 1:
        stages["depthwise_s8"] = acc  # channel-wise int8 products (see depthwise_conv2d.intrin)
    return acc, bias, qp, macs, stages


def fold_bias(ctx, node, b_t, correction):
    """The bias constant plus ``correction`` (the folded input offset), or None
    if both are absent or zero."""
    if b_t is None and (correction is None or not correction.any()):
        return None
    if correction is None:
        return ctx.const(f"{node.name}_bias", np.asarray(b_t.data))
    base = np.zeros(len(correction), np.int64) if b_t is None else np.asarray(b_t.data, np.int64)
    dtype = np.int64 if (b_t is not None and b_t.dtype == "int64") or ctx.quant(node).wide \
        else np.int32
    total = base + correction
    if dtype == np.int32:  # int32 accumulators wrap, as the reference's do
        total = ((total + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
    return ctx.const(f"{node.name}_bias", total.astype(dtype))


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
    fast = fast_requant_tables(ctx, node, qp) if y_t.dtype == "int8" and not qp.wide else None
    if fast is not None:
        return _fast_epilogue(acc, bias, qp, fast)
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


def fast_requant_tables(ctx, node, qp):
    """Per-channel constants of the one-rounding requantization
    (:func:`aot.kernels.common.one_rounding_rows`), or None.  Returns
    ``(table, offset)``: the per-channel rows ``(m, k_lo, k_hi, e - 1)`` as a
    constant or as four immediates (every channel the same), and the output
    offset left to add (0 when folded into ``k``)."""
    fast = one_rounding_rows(qp.multiplier, qp.shift, int(qp.output_offset))
    if fast is None:
        return None
    rows, offset = fast
    if (rows == rows[0]).all():
        return [te.const(int(v), "int32") for v in rows[0]], offset
    return ctx.const(f"{node.name}_requant", rows.astype(np.int32)), offset


def _fast_epilogue(acc, bias, qp, fast):
    """The requantizing epilogue with :func:`fast_requant_tables`' constants:
    per channel one row ``(m, k_lo, k_hi, e1)`` of a packed table (one pointer
    instead of four), or immediates when every channel agrees."""
    table, offset = fast

    def out(*idx):
        c = idx[-1]
        v = acc[idx]
        if bias is not None:
            v = v + bias[c]
        args = [table[c, j] for j in range(4)] if isinstance(table, te.Tensor) else table
        q = te.call_pure("int32", "aot_requant", v, *args)
        if offset:
            q = q + offset
        lo, hi = qp.clamp
        return te.call_pure("int32", "aot_clamp_s8", q, lo, hi).astype("int8")
    return te.compute(acc.shape, out, name="y")


#: The (multiplier, shift) a channel with all-zero weights takes instead of its
#: own (:func:`constant_channels`): the one-rounding form's, with a right shift of 1.
CONSTANT_CHANNEL = ((1 << 30) + 1, -1)


def constant_channels(node, qp, folded):
    """``(qp, folded)`` with each output channel whose weights are all zero and
    whose requantization is outside the one-rounding form (multiplier not
    above 2^30, or right shift above :data:`aot.kernels.common.MAX_FOLDED_SHIFT`) given
    :data:`CONSTANT_CHANNEL` and a bias with the same requantized value;
    ``folded`` is the kernel's int32 bias (:func:`folded_bias`).

    Such a channel's accumulator is 0 for every input, so its output is the
    constant ``MBQM(bias) + offset``; VWW's pointwise layers from 12x12x64 on
    have 4-234 of them (pruned, right shifts up to 31), which kept every
    channel of the layer off the folded, fused epilogue.  The new bias is
    ``4 * v`` for the value ``v`` (clipped to +-512, which the int8 clamp
    cannot tell apart from larger values), checked by evaluating it at
    compile time; a channel where that does not give ``v`` back keeps its own."""
    w = np.asarray(node.inputs[1].data, np.int64)
    channels = w.shape[0]
    m = np.broadcast_to(np.asarray(qp.multiplier, np.int64).reshape(-1), (channels,))
    shift = np.broadcast_to(np.asarray(qp.shift, np.int64).reshape(-1), (channels,))
    dead = (np.abs(w).reshape(channels, -1).sum(axis=1) == 0) & (
        (m <= (1 << 30)) | (-shift > MAX_FOLDED_SHIFT))
    if not dead.any():
        return qp, folded
    value = np.asarray(multiply_by_quantized_multiplier(folded.astype(np.int32), m, shift),
                       np.int64)
    value = np.clip(value, -512, 512)
    cm, cs = CONSTANT_CHANNEL
    again = np.asarray(multiply_by_quantized_multiplier((4 * value).astype(np.int32), cm, cs),
                       np.int64)
    dead &= again == value
    if not dead.any():
        return qp, folded
    qp = dataclasses.replace(qp, multiplier=np.where(dead, cm, m).astype(np.int32),
                             shift=np.where(dead, cs, shift).astype(np.int32))
    return qp, np.where(dead, 4 * value, folded)


def folded_bias(node, qp):
    """The kernel's int32 conv2d bias as numpy values: the input offset folded
    in, wrapped as the accumulators wrap (:func:`fold_bias`'s values)."""
    _, w_t, b_t = node.inputs
    weights = np.asarray(w_t.data)
    folded = (np.zeros(weights.shape[0], np.int64) if b_t is None
              else np.asarray(b_t.data, np.int64).reshape(-1))
    folded = folded + qp.input_offset * weights.astype(np.int64).sum(axis=(1, 2, 3))
    return ((folded + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


# the row helpers, and the blocked ones of the auto tuner's block sketch (conv2d.blocked)
@compute_rule("conv2d", headers=("aot_conv2d.h", "aot_block.h"))
def conv2d(ctx, node) -> Computed:
    acc, bias, qp, macs, stages = accumulate(ctx, node, depthwise=False)
    if qp is None or qp.wide or node.outputs[0].dtype != "int8":
        return Computed(epilogue(ctx, node, acc, bias, qp), stages, macs)
    folded = folded_bias(node, qp)
    qp2, folded2 = constant_channels(node, qp, folded)
    if qp2 is not qp:  # the replaced channels read their own bias
        qp, folded = qp2, folded2
        bias = ctx.const(f"{node.name}_cbias", folded.astype(np.int32))
    target = ctx.builder.target
    # the fused row requantizes from registers only on the DSP path (not
    # Helium); its fallback elsewhere recomputes a pixel's window per block
    # of channels after writing the first, which the overlap proof
    # (aot.kernels.overlap) does not allow for, and is no faster anyway
    if ("dot_s8" in stages and getattr(target, "has_dsp", False)
            and not getattr(target, "has_mve", False)):
        rows = conv_requant_rows(np.asarray(node.inputs[1].data), folded, qp.multiplier,
                                 qp.shift, qp.output_offset)
        if rows is not None:
            # the fused row helper's requantization (conv2d.fuse), read instead of
            # the bias and table when the schedule fuses the epilogue
            stages["conv_requant"] = ctx.const(f"{node.name}_cvq", rows)
    return Computed(epilogue(ctx, node, acc, bias, qp), stages, macs)
