"""ADD, SUB, MUL, MAXIMUM, MINIMUM with numpy broadcasting (TFLM arithmetic).

ADD/SUB (int8, and int16 with general rescaling): both inputs are brought
to a common scale ``2 * max(s1, s2)`` after a left shift of 20 bits (15 for
int16), in which the sum or difference is taken, then rescaled to the
output::

    a_i = MultiplyByQuantizedMultiplier((x_i - zp_i) << L, M_i, e_i)
    y   = MultiplyByQuantizedMultiplier(a_1 +/- a_2, M_o, e_o) + zp_o

with ``M_i = QM(s_i / (2 max))`` and ``M_o = QM(2 max / (2**L * s_o))``
(all in double, from the float32 scales).

MUL: ``y = MultiplyByQuantizedMultiplier((x1 - zp1) * (x2 - zp2), QM(s1 s2 / s_o)) + zp_o``.

int32 ADD, SUB, MUL: the plain result, wrapped to int32, then the fused
activation's integer clamp, except for ADD, whose activation TFLM leaves
out (any quantization is ignored, as TFLM does).

MAXIMUM/MINIMUM: on the raw integers (the inputs and output share a
quantization).  All results are clamped to the fused activation's range.
"""

from __future__ import annotations

import numpy as np

from aot.quant import arith as quant
from aot.quant import fixedpoint, libm
from aot.quant.params import ADD_N_LEFT_SHIFT, add_n_params_int8, f32, squared_difference_params


def _float_act(y, activation, clamp):
    lo, hi = clamp if clamp is not None else quant.activation_range_float(activation)
    return np.clip(y, lo, hi).astype(np.float32)


def _int32_act(y, activation):
    """int32 ADD/SUB/MUL: the result wrapped to int32 (as TFLM's C++ in
    practice), then the fused activation's integer clamp; quantization is
    ignored."""
    y = quant.wrap_int32(y)
    bounds = {None: None, "NONE": None, "RELU": (0, None), "RELU6": (0, 6),
              "RELU_N1_TO_1": (-1, 1)}[activation]
    if bounds is not None:
        y = np.maximum(y, bounds[0])
        if bounds[1] is not None:
            y = np.minimum(y, bounds[1])
    return np.asarray(y).astype(np.int32)


def _add_sub(x1, x2, sign, x1_scale, x1_zero_point, x2_scale, x2_zero_point,
             y_scale, y_zero_point, activation, clamp, out_dtype):
    x1 = np.asarray(x1)
    x2 = np.asarray(x2)
    if x1.dtype == np.float32:
        return _float_act(x1 + sign * x2, activation, clamp)
    if x1.dtype == np.int32:
        # TFLM's int32 ADD leaves out its fused activation; SUB applies it
        return _int32_act(x1.astype(np.int64) + sign * x2.astype(np.int64),
                          activation if sign < 0 else None)
    out_dtype = np.dtype(out_dtype or x1.dtype)
    left_shift = 15 if out_dtype == np.int16 else 20
    twice_max = 2.0 * max(f32(x1_scale), f32(x2_scale))
    m1, s1 = quant.quantize_multiplier(f32(x1_scale) / twice_max)
    m2, s2 = quant.quantize_multiplier(f32(x2_scale) / twice_max)
    mo, so = quant.quantize_multiplier(twice_max / ((1 << left_shift) * f32(y_scale)))
    a1 = quant.multiply_by_quantized_multiplier(
        (x1.astype(np.int64) - int(x1_zero_point)) << left_shift, m1, s1)
    a2 = quant.multiply_by_quantized_multiplier(
        (x2.astype(np.int64) - int(x2_zero_point)) << left_shift, m2, s2)
    raw = quant.wrap_int32(a1 + sign * a2)
    y = quant.multiply_by_quantized_multiplier(raw, mo, so) + int(y_zero_point)
    lo, hi = quant.out_range(activation, y_scale, y_zero_point, out_dtype, clamp)
    return quant.clamp_cast(y, lo, hi, out_dtype)


def add(x1, x2, *, x1_scale=1.0, x1_zero_point=0, x2_scale=1.0, x2_zero_point=0,
        y_scale=1.0, y_zero_point=0, activation=None, clamp=None, out_dtype=None):
    """ADD with broadcasting; int8, int16, int32 or float32 (see the module docstring)."""
    return _add_sub(x1, x2, 1, x1_scale, x1_zero_point, x2_scale, x2_zero_point,
                    y_scale, y_zero_point, activation, clamp, out_dtype)


def sub(x1, x2, *, x1_scale=1.0, x1_zero_point=0, x2_scale=1.0, x2_zero_point=0,
        y_scale=1.0, y_zero_point=0, activation=None, clamp=None, out_dtype=None):
    """SUB (x1 - x2) with broadcasting; arguments as :func:`add`."""
    return _add_sub(x1, x2, -1, x1_scale, x1_zero_point, x2_scale, x2_zero_point,
                    y_scale, y_zero_point, activation, clamp, out_dtype)


def mul(x1, x2, *, x1_scale=1.0, x1_zero_point=0, x2_scale=1.0, x2_zero_point=0,
        y_scale=1.0, y_zero_point=0, activation=None, clamp=None, out_dtype=None):
    """MUL with broadcasting; arguments as :func:`add`."""
    x1 = np.asarray(x1)
    x2 = np.asarray(x2)
    if x1.dtype == np.float32:
        return _float_act(x1 * x2, activation, clamp)
    if x1.dtype == np.int32:
        return _int32_act(x1.astype(np.int64) * x2.astype(np.int64), activation)
    out_dtype = np.dtype(out_dtype or x1.dtype)
    m, s = quant.quantize_multiplier(f32(x1_scale) * f32(x2_scale) / f32(y_scale))
    prod = (x1.astype(np.int64) - int(x1_zero_point)) * (x2.astype(np.int64) - int(x2_zero_point))
    y = quant.multiply_by_quantized_multiplier(quant.wrap_int32(prod), m, s) + int(y_zero_point)
    lo, hi = quant.out_range(activation, y_scale, y_zero_point, out_dtype, clamp)
    return quant.clamp_cast(y, lo, hi, out_dtype)


def squared_difference(x1, x2, *, x1_scale=1.0, x1_zero_point=0, x2_scale=1.0,
                       x2_zero_point=0, y_scale=1.0, y_zero_point=0):
    """SQUARED_DIFFERENCE with broadcasting.  float32: ``(x1 - x2)**2``; int32:
    the same, wrapped to int32.  int8 and int16 (zero points 0), as TFLM::

        a_i = MultiplyByQuantizedMultiplier((x_i - zp_i) << L, M_i, e_i)
        y   = MultiplyByQuantizedMultiplier((a_1 - a_2)**2, M_o, e_o) + zp_o

    with the constants of :func:`aot.quant.params.squared_difference_params`,
    clamped to the type (no fused activation)."""
    x1 = np.asarray(x1)
    x2 = np.asarray(x2)
    if x1.dtype == np.float32:
        return float_binary("squared_difference", x1, x2)
    if x1.dtype == np.int32:
        d = quant.wrap_int32(x1.astype(np.int64) - x2.astype(np.int64))
        return quant.wrap_int32(d * d).astype(np.int32)
    ls, (m1, e1), (m2, e2), (mo, eo) = squared_difference_params(
        x1_scale, x2_scale, y_scale, x1.dtype.name)
    a1 = quant.multiply_by_quantized_multiplier(
        (x1.astype(np.int64) - int(x1_zero_point)) << ls, m1, e1)
    a2 = quant.multiply_by_quantized_multiplier(
        (x2.astype(np.int64) - int(x2_zero_point)) << ls, m2, e2)
    d = np.asarray(a1, np.int64) - np.asarray(a2, np.int64)
    y = quant.multiply_by_quantized_multiplier(quant.wrap_int32(d * d), mo, eo) \
        + int(y_zero_point)
    lo, hi = quant.qrange(x1.dtype)
    return quant.clamp_cast(y, lo, hi, x1.dtype)


def add_n_int8(xs, *, x_scale, x_zero_point, y_scale, y_zero_point) -> np.ndarray:
    """TFLM's int8 ADD_N (every input quantized alike): ``a(v) = MBQM((v - zp_x)
    << 20, QM(1/2))`` per input, summed in int32 from TFLM's start ``a(0)``
    (the rescaled offset ``-zp_x``, not 0), then ``MBQM(sum, QM(2 s_x /
    (2**20 s_y))) + zp_y``, clamped."""
    (mi, ei), (mo, eo) = add_n_params_int8(x_scale, y_scale)
    total = quant.multiply_by_quantized_multiplier(
        (0 - int(x_zero_point)) << ADD_N_LEFT_SHIFT, mi, ei)
    for x in xs:
        total = quant.wrap_int32(np.asarray(total, np.int64) + np.asarray(
            quant.multiply_by_quantized_multiplier(
                (np.asarray(x).astype(np.int64) - int(x_zero_point)) << ADD_N_LEFT_SHIFT,
                mi, ei), np.int64))
    y = quant.multiply_by_quantized_multiplier(total, mo, eo) + int(y_zero_point)
    return quant.clamp_cast(y, -128, 127, np.int8)


def maximum(x1, x2):
    """MAXIMUM with broadcasting on raw values (inputs and output share quantization)."""
    return np.maximum(np.asarray(x1), np.asarray(x2))


def minimum(x1, x2):
    """MINIMUM with broadcasting on raw values (inputs and output share quantization)."""
    return np.minimum(np.asarray(x1), np.asarray(x2))


def round_to_nearest(x) -> np.ndarray:
    """TFLM's ROUND: halves to even, computed as ``floor(x)`` plus 0 or 1, so a
    value in [-0.5, 0) rounds to +0 (C's ``rintf`` would give -0)."""
    f = np.floor(x)
    d = x - f
    even = (f - np.float32(2) * np.floor(f / np.float32(2))) == 0
    return np.where((d < 0.5) | ((d == 0.5) & even), f, f + np.float32(1)).astype(np.float32)


def float_unary(op: str, x) -> np.ndarray:
    """ABS, NEG, FLOOR, CEIL, ROUND (half to even), SQRT, RSQRT (1 / sqrt),
    EXP, LOG, SIN, COS, SQUARE on float32, as TFLM's float kernels compute
    them, and ERF (ONNX's; TFLite has none) (the transcendental ones through
    C's libm, :mod:`aot.quant.libm`)."""
    x = np.asarray(x, dtype=np.float32)
    exact = {"abs": np.abs, "neg": np.negative, "floor": np.floor, "ceil": np.ceil,
             "round": round_to_nearest, "sqrt": np.sqrt, "square": np.square,
             "rsqrt": lambda v: np.float32(1) / np.sqrt(v)}
    if op in exact:
        with np.errstate(invalid="ignore", divide="ignore"):
            return exact[op](x).astype(np.float32)
    return libm.call(op + "f", x)


def abs_quantized(x, *, x_scale, x_zero_point, y_scale, y_zero_point, quantized=True):
    """TFLM's int8 and int16 ABS: ``v = |x - zp_x|``, then ``v + zp_y`` when
    the two scales are equal (as float32), else ``MBQM(v, QM(s_x / s_y)) +
    zp_y``, clamped to the type.  An unquantized int16 (``quantized``
    False) is C's ``abs`` cast back (so -32768 stays -32768)."""
    x = np.asarray(x)
    v = np.abs(x.astype(np.int64) - int(x_zero_point))
    if not quantized:
        return v.astype(np.int16)
    if np.float32(x_scale) != np.float32(y_scale):
        m, e = quant.quantize_multiplier(f32(x_scale) / f32(y_scale))
        v = np.asarray(quant.multiply_by_quantized_multiplier(v, m, e), np.int64)
    lo, hi = quant.qrange(x.dtype)
    return quant.clamp_cast(v + int(y_zero_point), lo, hi, x.dtype)


#: Integer RSQRT keeps 1/sqrt(value) with 20 fraction bits between its two steps.
RSQRT_SHIFT = 20


def rsqrt_quantized(x, *, x_scale, x_zero_point, y_scale, y_zero_point) -> np.ndarray:
    """TFLM's int8 and int16 RSQRT: ``v = x - zp_x``; 0 gives the type's
    maximum; otherwise ``1/sqrt(v)`` from ``GetInvSqrtQuantizedMultiplierExp(v,
    -1)`` as ``d = MBQM(1, m, e + 20)``, then ``MBQM(d, M, E - 20) + zp_y``
    with ``(M, E) = QuantizeMultiplier(1 / (sqrt(s_x) s_y))`` (in double),
    clamped to the type.  TFLM fails the invocation for ``v < 0`` ("only
    defined for positive values"); a compiled model cannot, and gives the
    maximum there as for 0."""
    x = np.asarray(x)
    lo, hi = quant.qrange(x.dtype)
    mult, shift = quant.quantize_multiplier(
        1.0 / (np.sqrt(f32(x_scale)) * f32(y_scale)))
    out = np.empty(x.shape, np.int64)
    flat = out.reshape(-1)
    for i, v in enumerate(x.reshape(-1).astype(np.int64) - int(x_zero_point)):
        if v <= 0:
            flat[i] = hi
            continue
        m, e = fixedpoint.inv_sqrt_multiplier_exp(int(v), -1)
        d = quant.multiply_by_quantized_multiplier(1, m, e + RSQRT_SHIFT)
        flat[i] = int(quant.multiply_by_quantized_multiplier(d, mult, shift - RSQRT_SHIFT)) \
            + int(y_zero_point)
    return quant.clamp_cast(out, lo, hi, x.dtype)


def float_binary(op: str, x1, x2, activation=None) -> np.ndarray:
    """DIV, SQUARED_DIFFERENCE, FLOOR_DIV (``floor(x1 / x2)``) and FLOOR_MOD
    (C's ``fmodf`` moved to the divisor's sign) on float32."""
    x1 = np.asarray(x1, dtype=np.float32)
    x2 = np.asarray(x2, dtype=np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        if op == "div":
            y = x1 / x2
        elif op == "squared_difference":
            y = (x1 - x2) * (x1 - x2)
        elif op == "floor_div":
            y = np.floor(x1 / x2)
        else:
            trunc = np.fmod(x1, x2)
            y = np.where((trunc != 0) & ((x2 < 0) != (trunc < 0)), trunc + x2, trunc)
    y = np.asarray(y, dtype=np.float32)
    if activation not in (None, "none"):
        y = _float_act(y, activation, None)
    return y
