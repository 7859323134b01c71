"""CONV_2D and DEPTHWISE_CONV_2D (TFLM reference arithmetic).

Layouts as TFLite stores them: activations NHWC, conv weights OHWI,
depthwise weights ``[1, KH, KW, C * depth_multiplier]``.

Integer paths (``x`` int8 or int16):

* int8: ``acc = sum(w * (x - x_zero_point)) + bias`` in int32; weights are
  symmetric (zero point 0), padded positions contribute nothing.
  ``y = clamp(MultiplyByQuantizedMultiplier(acc, M[c], s[c]) + y_zero_point)``
  with ``(M[c], s[c]) = QuantizeMultiplier(x_scale * w_scale[c] / y_scale)``
  (double rounding, gemmlowp style).
* int16x8 (``x`` int16, int8 weights, zero points 0): int64 accumulator; with
  an int64 bias the single-rounding int64 ``MultiplyByQuantizedMultiplier``
  is used, with an int32 bias the int32 (double rounding) one.

Float path (``x`` float32): plain convolution, then the fused activation.
"""

from __future__ import annotations

import numpy as np

from aot.quant import arith as quant
from aot.reference.ops.common import requantize, spatial_pads, windows


def _finish_int(acc, bias, x, x_scale, w_scale, y_scale, y_zero_point,
                activation, clamp, out_dtype, channels):
    if bias is not None:
        acc = acc + np.asarray(bias, dtype=np.int64)
    out_dtype = np.dtype(out_dtype or x.dtype)
    wide = x.dtype == np.int16 and (bias is None or np.asarray(bias).dtype == np.int64)
    if not wide:
        acc = quant.wrap_int32(acc)
    y = requantize(acc, x_scale, w_scale, y_scale, channels, wide) + int(y_zero_point)
    lo, hi = quant.out_range(activation, y_scale, y_zero_point, out_dtype, clamp)
    return quant.clamp_cast(y, lo, hi, out_dtype)


def _finish_float(y, bias, activation, clamp):
    if bias is not None:
        y = y + np.asarray(bias, dtype=np.float32)
    lo, hi = clamp if clamp is not None else quant.activation_range_float(activation)
    return np.clip(y, lo, hi).astype(np.float32)


def conv2d(x, w, bias=None, *, stride=(1, 1), dilation=(1, 1), padding="SAME",
           x_zero_point=0, x_scale=1.0, w_scale=1.0, y_scale=1.0, y_zero_point=0,
           activation=None, clamp=None, out_dtype=None):
    """CONV_2D: ``x`` [N,H,W,C], ``w`` [O,KH,KW,C] (OHWI), ``bias`` [O] or None.

    ``stride``/``dilation`` are (h, w); ``padding`` is "SAME", "VALID" or
    ``((top, bottom), (left, right))``.  ``w_scale`` is a scalar or a per-output
    channel array.  ``activation`` is a fused activation name (None, "RELU",
    "RELU6", "RELU_N1_TO_1"); ``clamp=(lo, hi)`` overrides it with explicit
    integer (or float) bounds.  Returns [N, OH, OW, O] of ``out_dtype``
    (default: the dtype of ``x``).  Scales and zero points are ignored for float.
    """
    x = np.asarray(x)
    w = np.asarray(w)
    o, kh, kw, _ = w.shape
    out_hw, pads = spatial_pads(x.shape, kh, kw, stride, dilation, padding)
    if x.dtype == np.float32:
        p = windows(x, kh, kw, stride, dilation, out_hw, pads, 0.0)
        y = np.einsum("nhwijc,oijc->nhwo", p.astype(np.float64), w.astype(np.float64))
        return _finish_float(y.astype(np.float32), bias, activation, clamp)
    zp = int(x_zero_point)
    p = windows(x.astype(np.int64), kh, kw, stride, dilation, out_hw, pads, zp) - zp
    acc = np.einsum("nhwijc,oijc->nhwo", p, w.astype(np.int64))
    return _finish_int(acc, bias, x, x_scale, w_scale, y_scale, y_zero_point,
                       activation, clamp, out_dtype, o)


def depthwise_conv2d(x, w, bias=None, *, stride=(1, 1), dilation=(1, 1), padding="SAME",
                     depth_multiplier=None, x_zero_point=0, x_scale=1.0, w_scale=1.0,
                     y_scale=1.0, y_zero_point=0, activation=None, clamp=None,
                     out_dtype=None):
    """DEPTHWISE_CONV_2D: ``x`` [N,H,W,C], ``w`` [1,KH,KW,C*M], ``bias`` [C*M].

    Output channel ``oc`` reads input channel ``oc // M`` (M = depth
    multiplier, inferred from the shapes when not given).  Other arguments as
    :func:`conv2d`.  Returns [N, OH, OW, C*M].
    """
    x = np.asarray(x)
    w = np.asarray(w)
    _, kh, kw, oc = w.shape
    m = depth_multiplier or oc // x.shape[3]
    if x.shape[3] * m != oc:
        raise ValueError(f"depthwise: {oc} output channels != {x.shape[3]} x {m}")
    out_hw, pads = spatial_pads(x.shape, kh, kw, stride, dilation, padding)
    if x.dtype == np.float32:
        p = windows(x, kh, kw, stride, dilation, out_hw, pads, 0.0)
        p = np.repeat(p, m, axis=-1).astype(np.float64)
        y = np.einsum("nhwijc,ijc->nhwc", p, w[0].astype(np.float64))
        return _finish_float(y.astype(np.float32), bias, activation, clamp)
    zp = int(x_zero_point)
    p = windows(x.astype(np.int64), kh, kw, stride, dilation, out_hw, pads, zp) - zp
    acc = np.einsum("nhwijc,ijc->nhwc", np.repeat(p, m, axis=-1), w[0].astype(np.int64))
    return _finish_int(acc, bias, x, x_scale, w_scale, y_scale, y_zero_point,
                       activation, clamp, out_dtype, oc)


def transpose_conv2d(x, w, bias=None, *, stride=(1, 1), padding=(0, 0), output_size,
                     x_zero_point=0, x_scale=1.0, w_scale=1.0, y_scale=1.0, y_zero_point=0,
                     out_dtype=None):
    """TRANSPOSE_CONV: ``x`` [N,H,W,C], ``w`` [O,KH,KW,C], output [N, *output_size, O].

    TFLM's scatter: input element ``(y, x, c)``, in that order, adds
    ``x * w[o, ky, kx, c]`` to output ``(y s_h - pad_top + ky, x s_w - pad_left
    + kx, o)`` when that lies inside; then the bias.  float32 keeps this order
    (so it rounds as TFLM); int8 accumulates ``(x - zp) w`` in int32, int16
    ``x w`` in int64, requantized per channel as :func:`conv2d`."""
    x, w = np.asarray(x), np.asarray(w)
    n, ih, iw, ic = x.shape
    oc, kh, kw, _ = w.shape
    oh, ow = output_size
    (sh, sw), (pt, pl) = stride, padding
    is_float = x.dtype == np.float32
    acc_dtype = np.float32 if is_float else np.int64
    # accumulate on a canvas shifted by (by, bx) that holds every product, then crop
    by, bx = pt + kh, pl + kw
    acc = np.zeros((n, max(ih * sh + 2 * kh, by + oh), max(iw * sw + 2 * kw, bx + ow), oc),
                   acc_dtype)
    taps = np.transpose(w, (1, 2, 0, 3)).astype(acc_dtype)  # [KH, KW, O, C]
    xv = x.astype(acc_dtype) - (0 if is_float else int(x_zero_point))
    for y in range(ih):
        for xx in range(iw):
            for c in range(ic):
                oy, ox = y * sh - pt + by, xx * sw - pl + bx
                acc[:, oy:oy + kh, ox:ox + kw, :] += xv[:, y, xx, c, None, None, None] * \
                    taps[None, :, :, :, c]
    acc = acc[:, by:by + oh, bx:bx + ow, :]
    if is_float:
        return _finish_float(acc, bias, None, None)
    return _finish_int(acc, bias, x, x_scale, w_scale, y_scale, y_zero_point, None, None,
                       out_dtype, oc)
