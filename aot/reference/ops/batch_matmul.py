"""BATCH_MATMUL (TFLM reference arithmetic).

``y[..., i, j] = sum_k a[..., i, k] b[..., k, j]`` with ``a``, ``b`` the
operands after the optional transposes of their last two axes and the
leading axes broadcast.  float32 adds the products one at a time, ``k``
ascending, from 0 (TFLM's order).  int8:
``acc = sum (a - zp_a)(b - zp_b)`` in int32, int16 in int64 (zero points
0), then ``MultiplyByQuantizedMultiplier(acc, QM(s_a s_b / s_y)) + zp_y``
(the int64 variant for int16), clamped to the type.
"""

from __future__ import annotations

import numpy as np

from aot.quant import arith as quant
from aot.quant.params import f32


def _operand(x, adj: bool):
    x = np.asarray(x)
    return np.swapaxes(x, -1, -2) if adj else x


def batch_matmul(lhs, rhs, *, adj_x=False, adj_y=False, lhs_scale=1.0, lhs_zero_point=0,
                 rhs_scale=1.0, rhs_zero_point=0, y_scale=1.0, y_zero_point=0):
    a, b = _operand(lhs, adj_x), _operand(rhs, adj_y)
    dtype = a.dtype
    if dtype == np.float32:
        shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
        acc = np.zeros(shape, np.float32)
        for k in range(a.shape[-1]):
            acc = acc + a[..., :, k:k + 1] * b[..., k:k + 1, :]
        return acc
    wide = dtype == np.int16
    acc = np.matmul(a.astype(np.int64) - int(lhs_zero_point),
                    b.astype(np.int64) - int(rhs_zero_point))
    mult, shift = quant.quantize_multiplier(f32(lhs_scale) * f32(rhs_scale) / f32(y_scale))
    if wide:
        y = quant.multiply_by_quantized_multiplier_int64(acc, mult, shift)
    else:
        y = quant.multiply_by_quantized_multiplier(quant.wrap_int32(acc), mult, shift)
    lo, hi = quant.qrange(dtype)
    return quant.clamp_cast(y + int(y_zero_point), lo, hi, dtype)
