"""AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D (TFLM reference arithmetic).

Quantized pooling does not requantize: input and output share scale and zero
point; only the fused activation's clamp uses the output quantization.
Padded positions are not part of a window: the average divides by the
number of input pixels actually covered.  The integer average rounds half
away from zero: ``(sum + n/2) / n`` for positive sums, ``(sum - n/2) / n``
otherwise, with C's truncating division.
"""

from __future__ import annotations

import numpy as np

from aot.quant import arith as quant
from aot.reference.ops.common import pair, spatial_pads, windows


def _pool_windows(x, filter_hw, stride, padding):
    kh, kw = pair(filter_hw)
    out_hw, pads = spatial_pads(x.shape, kh, kw, stride, (1, 1), padding)
    # Mark padded positions with a validity plane gathered the same way.
    valid = windows(np.ones(x.shape[:3] + (1,), dtype=np.int8), kh, kw, stride, (1, 1),
                    out_hw, pads, 0).astype(bool)
    return windows(x, kh, kw, stride, (1, 1), out_hw, pads, 0), valid


def _range(x, activation, clamp, scale, zero_point):
    if x.dtype == np.float32:
        return clamp if clamp is not None else quant.activation_range_float(activation)
    return quant.out_range(activation, scale, zero_point, x.dtype, clamp)


def average_pool2d(x, filter_hw, *, stride=(1, 1), padding="VALID", activation=None,
                   clamp=None, y_scale=1.0, y_zero_point=0):
    """AVERAGE_POOL_2D on NHWC ``x`` (int8, int16 or float32); ``filter_hw``
    is (h, w).  ``y_scale``/``y_zero_point`` only place the activation clamp."""
    x = np.asarray(x)
    p, valid = _pool_windows(x, filter_hw, stride, padding)
    count = valid.sum(axis=(3, 4, 5))[..., None]
    lo, hi = _range(x, activation, clamp, y_scale, y_zero_point)
    if x.dtype == np.float32:
        total = np.where(valid, p, 0).astype(np.float32).sum(axis=(3, 4), dtype=np.float32)
        return np.clip(total / count.astype(np.float32), lo, hi).astype(np.float32)
    total = np.where(valid, p.astype(np.int64), 0).sum(axis=(3, 4))
    half = count // 2
    num = np.where(total > 0, total + half, total - half)
    avg = np.sign(num) * (np.abs(num) // count)  # C division truncates toward zero
    return quant.clamp_cast(avg, lo, hi, x.dtype)


def max_pool2d(x, filter_hw, *, stride=(1, 1), padding="VALID", activation=None,
               clamp=None, y_scale=1.0, y_zero_point=0):
    """MAX_POOL_2D on NHWC ``x``; arguments as :func:`average_pool2d`."""
    x = np.asarray(x)
    p, valid = _pool_windows(x, filter_hw, stride, padding)
    lo, hi = _range(x, activation, clamp, y_scale, y_zero_point)
    if x.dtype == np.float32:
        m = np.where(valid, p, -np.inf).max(axis=(3, 4))
    else:
        m = np.where(valid, p.astype(np.int64), np.iinfo(np.int64).min).max(axis=(3, 4))
    return np.clip(m, lo, hi).astype(x.dtype)


def l2_pool2d(x, filter_hw, *, stride=(1, 1), padding="VALID", activation=None, clamp=None):
    """L2_POOL_2D on float32 NHWC ``x``: the squares of each window's covered
    pixels added row by row in float32, divided by their count, square root,
    then the activation's clamp (TFLM's order)."""
    x = np.asarray(x)
    p, valid = _pool_windows(x, filter_hw, stride, padding)
    count = valid.sum(axis=(3, 4, 5))[..., None].astype(np.float32)
    acc = np.zeros(p.shape[:3] + p.shape[5:], np.float32)
    for i in range(p.shape[3]):
        for j in range(p.shape[4]):
            acc = acc + np.where(valid[:, :, :, i, j], p[:, :, :, i, j] * p[:, :, :, i, j],
                                 np.float32(0))
    lo, hi = _range(x, activation, clamp, 1.0, 0)
    return np.clip(np.sqrt(acc / count), lo, hi).astype(np.float32)
