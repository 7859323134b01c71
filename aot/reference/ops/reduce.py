"""MEAN and SUM (TFLM reference arithmetic).

Quantized: ``acc = sum(x - zp_in)`` over the reduced axes (int32), then with
``n`` elements, ``(M, s) = QM(s_in / s_out)``, ``k = min(floor(log2 n), 32, 31 + s)``
and ``y = MultiplyByQuantizedMultiplier(acc, (M << k) // n, s - k) + zp_out``,
clamped (also when input and output share their quantization).
Float: the sum divided by ``n``.

SUM: float32 adds the elements one at a time in the input's order (so the
rounding is TFLM's); quantized ``y = MultiplyByQuantizedMultiplier(acc,
QM(s_in / s_out)) + zp_out``, clamped.
"""

from __future__ import annotations

import numpy as np

from aot.quant import arith as quant
from aot.quant.params import CUMSUM_LEFT_SHIFT, cumsum_params_int8, f32, mean_multiplier


def mean(x, axis, *, keep_dims=False, x_scale=1.0, x_zero_point=0, y_scale=1.0,
         y_zero_point=0):
    """MEAN over ``axis`` (an int or a sequence; negative counts from the end)."""
    x = np.asarray(x)
    axes = tuple(sorted({int(a) % x.ndim for a in np.atleast_1d(axis)}))
    n = int(np.prod([x.shape[a] for a in axes]))
    if x.dtype == np.float32:
        return (x.sum(axis=axes, keepdims=keep_dims, dtype=np.float64) / n).astype(np.float32)
    lo, hi = quant.qrange(x.dtype)
    acc = (x.astype(np.int64) - int(x_zero_point)).sum(axis=axes, keepdims=keep_dims)
    mult, shift = mean_multiplier(n, x_scale, y_scale)
    y = quant.multiply_by_quantized_multiplier(quant.wrap_int32(acc), mult, shift)
    return quant.clamp_cast(y + int(y_zero_point), lo, hi, x.dtype)


def reduce_sum(x, axis, *, keep_dims=False, x_scale=1.0, x_zero_point=0, y_scale=1.0,
               y_zero_point=0):
    """SUM over ``axis`` (an int or a sequence; negative counts from the end)."""
    x = np.asarray(x)
    axes = tuple(sorted({int(a) % x.ndim for a in np.atleast_1d(axis)}))
    kept = [a for a in range(x.ndim) if a not in axes]
    out_shape = [1 if a in axes else d for a, d in enumerate(x.shape)]
    # reduced axes last, in their order: row k of `flat` is the k-th element
    # each output receives when the input is read in memory order
    flat = x.transpose(kept + list(axes)).reshape(
        [x.shape[a] for a in kept] + [-1])
    if x.dtype == np.float32:
        acc = np.zeros(flat.shape[:-1], np.float32)
        for k in range(flat.shape[-1]):
            acc = acc + flat[..., k]
        y = acc
    else:
        lo, hi = quant.qrange(x.dtype)
        acc = (flat.astype(np.int64) - int(x_zero_point)).sum(axis=-1)
        mult, shift = quant.quantize_multiplier(f32(x_scale) / f32(y_scale))
        y = quant.multiply_by_quantized_multiplier(quant.wrap_int32(acc), mult, shift)
        y = quant.clamp_cast(y + int(y_zero_point), lo, hi, x.dtype)
    y = np.asarray(y).reshape([x.shape[a] for a in kept])
    return y.reshape(out_shape) if keep_dims else y


def cumsum(x, axis: int, *, exclusive=False, reverse=False, x_scale=1.0, x_zero_point=0,
           y_scale=1.0, y_zero_point=0):
    """CUMSUM along ``axis``, element by element in TFLM's order.

    int8: each ``x - zp_in`` is shifted left by 20 and halved (one
    multiplier), the running int32 sum starts from the scaled ``-zp_in``
    (TFLM's starting value), and each sum is requantized to the output."""
    x = np.asarray(x)
    axis %= x.ndim
    order = range(x.shape[axis] - 1, -1, -1) if reverse else range(x.shape[axis])
    out = np.empty(x.shape, x.dtype)
    quantized = x.dtype != np.float32
    if quantized:
        im, ishift, om, oshift = cumsum_params_int8(x_scale, y_scale)

        def scaled(v):
            shifted = quant.wrap_int32(np.asarray(v, np.int64) << CUMSUM_LEFT_SHIFT)
            return quant.multiply_by_quantized_multiplier(shifted, im, ishift)
        start = scaled(-int(x_zero_point))
    rest = x.shape[:axis] + x.shape[axis + 1:]
    acc = np.full(rest, start, np.int64) if quantized else np.zeros(rest, np.float32)
    for k in order:
        v = np.take(x, k, axis=axis)
        term = scaled(v.astype(np.int64) - int(x_zero_point)) if quantized else v
        before = acc
        acc = quant.wrap_int32(acc + term) if quantized else acc + term
        res = before if exclusive else acc
        if quantized:
            y = quant.multiply_by_quantized_multiplier(res, om, oshift) + int(y_zero_point)
            res = np.clip(y, -128, 127)
        idx = [slice(None)] * x.ndim
        idx[axis] = k
        out[tuple(idx)] = res
    return out
