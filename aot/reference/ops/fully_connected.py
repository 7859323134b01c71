"""FULLY_CONNECTED (TFLM reference arithmetic).

``x`` is flattened to ``[batches, in]`` with ``in = w.shape[1]``; ``w`` is
``[out, in]`` as TFLite stores it.  int8:
``acc = sum((w - w_zero_point) * (x - x_zero_point)) + bias`` (int32), then
``y = clamp(MultiplyByQuantizedMultiplier(acc, M, s) + y_zero_point)`` with
``(M, s) = QuantizeMultiplier(double(x_scale) * double(w_scale) / double(y_scale))``
(per tensor, or per output channel when ``w_scale`` is an array).  int16x8
uses the int64 accumulator as conv does (see :mod:`aot.reference.ops.conv`).
"""

from __future__ import annotations

import numpy as np

from aot.quant import arith as quant
from aot.reference.ops.common import requantize


def fully_connected(x, w, bias=None, *, keep_num_dims=False, x_zero_point=0,
                    x_scale=1.0, w_zero_point=0, w_scale=1.0, y_scale=1.0,
                    y_zero_point=0, activation=None, clamp=None, out_dtype=None):
    """FULLY_CONNECTED: returns ``[batches, out]``, or ``x.shape[:-1] + (out,)``
    when ``keep_num_dims``.  Other arguments as :func:`aot.reference.ops.conv.conv2d`."""
    x = np.asarray(x)
    w = np.asarray(w)
    units, depth = w.shape
    shape = x.shape[:-1] + (units,) if keep_num_dims else (x.size // depth, units)
    x2 = x.reshape(-1, depth)
    if x.dtype == np.float32:
        y = (x2.astype(np.float64) @ w.T.astype(np.float64)).astype(np.float32)
        if bias is not None:
            y = y + np.asarray(bias, dtype=np.float32)
        lo, hi = clamp if clamp is not None else quant.activation_range_float(activation)
        return np.clip(y, lo, hi).astype(np.float32).reshape(shape)
    acc = (x2.astype(np.int64) - int(x_zero_point)) @ (w.astype(np.int64) - int(w_zero_point)).T
    if bias is not None:
        acc = acc + np.asarray(bias, dtype=np.int64)
    wide = x.dtype == np.int16 and (bias is None or np.asarray(bias).dtype == np.int64)
    if not wide:
        acc = quant.wrap_int32(acc)
    out_dtype = np.dtype(out_dtype or x.dtype)
    y = requantize(acc, x_scale, w_scale, y_scale, units, wide) + int(y_zero_point)
    lo, hi = quant.out_range(activation, y_scale, y_zero_point, out_dtype, clamp)
    return quant.clamp_cast(y, lo, hi, out_dtype).reshape(shape)
