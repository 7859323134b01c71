"""QUANTIZE and DEQUANTIZE (TFLM reference arithmetic).

* float -> int: ``clamp(round_half_away(x / scale) + zero_point)``, the
  division in float32.
* int -> int (requantize): ``clamp(MultiplyByQuantizedMultiplier(x - zp_in,
  QM(s_in / s_out)) + zp_out)`` (TFLM's top-bit flip for int8 <-> uint8
  with equal scales gives the same values).
* DEQUANTIZE: ``float32(double(scale) * (x - zero_point))``.
"""

from __future__ import annotations

import numpy as np

from aot.quant import arith as quant
from aot.quant.params import f32


def quantize(x, *, y_scale, y_zero_point=0, out_dtype="int8", x_scale=None, x_zero_point=0):
    """QUANTIZE ``x`` (float32, or an integer tensor with ``x_scale`` given) to ``out_dtype``."""
    x = np.asarray(x)
    out_dtype = np.dtype(out_dtype)
    lo, hi = quant.qrange(out_dtype)
    if x.dtype == np.float32:
        q = quant.round_half_away(x / np.float32(y_scale)).astype(np.int64) + int(y_zero_point)
        return quant.clamp_cast(q, lo, hi, out_dtype)
    m, s = quant.quantize_multiplier(f32(x_scale) / f32(y_scale))
    y = quant.multiply_by_quantized_multiplier(x.astype(np.int64) - int(x_zero_point), m, s)
    return quant.clamp_cast(y + int(y_zero_point), lo, hi, out_dtype)


def dequantize(x, *, x_scale, x_zero_point=0):
    """DEQUANTIZE an integer tensor to float32."""
    x = np.asarray(x).astype(np.int64)
    return (f32(x_scale) * (x - int(x_zero_point)).astype(np.float64)).astype(np.float32)
