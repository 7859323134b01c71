"""Fixed-point helpers with TFLite Micro's exact integer semantics.

All functions take numpy arrays (or scalars) and compute in int64, so every
int32 intermediate of the C code is represented exactly; where the C code
relies on int32 wrap-around the result is wrapped explicitly with
:func:`wrap_int32`.  Multipliers are derived from the float32 scales stored in
the model, widened to double, exactly as TFLM's ``Prepare`` functions do.

Names follow the C functions they reproduce (``QuantizeMultiplier`` ->
:func:`quantize_multiplier`, ...); docs/reference.md states the arithmetic.
"""

from __future__ import annotations

import math

import numpy as np

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1

# Integer range of every quantized dtype the kernels handle.
QRANGE = {
    "int8": (-128, 127),
    "uint8": (0, 255),
    "int16": (-32768, 32767),
    "int32": (INT32_MIN, INT32_MAX),
}


def qrange(dtype) -> tuple[int, int]:
    """(min, max) of an integer dtype given by name or numpy dtype."""
    return QRANGE[np.dtype(dtype).name]


def round_half_away(x):
    """C's ``round``: halves go away from zero (numpy's ``round`` goes to even)."""
    x = np.asarray(x)
    return np.sign(x) * np.floor(np.abs(x) + x.dtype.type(0.5))


def wrap_int32(x):
    """Wrap int64 values to int32 two's complement (C's int32 overflow in practice)."""
    x = np.asarray(x, dtype=np.int64)
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def quantize_multiplier(real) -> tuple[int, int]:
    """``QuantizeMultiplier``: a double as a Q31 multiplier and a power-of-two shift.

    Returns ``(multiplier, shift)`` with ``real ~= multiplier * 2**(shift - 31)``;
    positive shifts are left shifts.  ``frexp`` gives the mantissa in [0.5, 1),
    scaled by 2**31 and rounded half away from zero; a mantissa that rounds up
    to 2**31 is halved with the shift bumped, and shifts below -31 flush to 0.
    """
    real = float(real)
    if real == 0.0:
        return 0, 0
    q, shift = math.frexp(real)
    q_fixed = int(round_half_away(np.float64(q * (1 << 31))))
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if shift < -31:
        shift, q_fixed = 0, 0
    return q_fixed, shift


def quantize_multipliers(reals) -> tuple[np.ndarray, np.ndarray]:
    """:func:`quantize_multiplier` over an array; returns int64 arrays (mult, shift)."""
    pairs = [quantize_multiplier(r) for r in np.atleast_1d(np.asarray(reals, dtype=np.float64))]
    return (np.array([p[0] for p in pairs], dtype=np.int64),
            np.array([p[1] for p in pairs], dtype=np.int64))


def _trunc_div_pow2(v, n: int):
    """C integer division of int64 ``v`` by 2**n (rounds toward zero)."""
    return np.where(v >= 0, v >> n, -((-v) >> n))


def srdhm(a, b):
    """``SaturatingRoundingDoublingHighMul`` on int32 values: round(a*b / 2**31).

    The nudge is 2**30 for non-negative products and 1 - 2**30 otherwise,
    before a division that truncates toward zero: ties round toward +infinity
    (0.5 -> 1, -0.5 -> 0, -1.5 -> -1).  The one overflowing case
    INT32_MIN * INT32_MIN saturates to INT32_MAX.
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    res = _trunc_div_pow2(ab + nudge, 31)
    return np.where((a == INT32_MIN) & (b == INT32_MIN), INT32_MAX, res)


def rounding_divide_by_pot(x, exponent):
    """``RoundingDivideByPOT``: x / 2**exponent rounded to nearest, ties away from zero."""
    x = np.asarray(x, dtype=np.int64)
    exponent = np.asarray(exponent, dtype=np.int64)
    mask = (np.int64(1) << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def saturating_rounding_multiply_by_pot(x, exponent: int):
    """gemmlowp ``SaturatingRoundingMultiplyByPOT``: saturating x*2**e, or rounding x/2**-e."""
    x = np.asarray(x, dtype=np.int64)
    if exponent == 0:
        return x
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    threshold = (1 << (31 - exponent)) - 1
    res = x << exponent
    res = np.where(x > threshold, INT32_MAX, res)
    return np.where(x < -threshold, INT32_MIN, res)


def multiply_by_quantized_multiplier(x, multiplier, shift):
    """``MultiplyByQuantizedMultiplier`` for int32 ``x`` (the int8 path).

    ``RoundingDivideByPOT(SRDHM(x * 2**max(shift,0), multiplier), max(-shift,0))``:
    two roundings, as gemmlowp does.  ``multiplier``/``shift`` broadcast
    against ``x`` (per-channel requantization).
    """
    shift = np.asarray(shift, dtype=np.int64)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    x = wrap_int32(np.asarray(x, dtype=np.int64) << left)
    return rounding_divide_by_pot(srdhm(x, multiplier), right)


def multiply_by_quantized_multiplier_int64(x, multiplier, shift):
    """``MultiplyByQuantizedMultiplier`` for int64 ``x`` (the int16x8 path).

    The Q31 multiplier is first reduced to Q15 (rounded, capped at 0x7FFF),
    then ``(x * reduced + 2**(14 - shift)) >> (15 - shift)``: a single rounding,
    ties toward +infinity.
    """
    x = np.asarray(x, dtype=np.int64)
    multiplier = np.asarray(multiplier, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    reduced = np.where(multiplier < 0x7FFF0000, (multiplier + (1 << 15)) >> 16, 0x7FFF)
    total_shift = 15 - shift
    rnd = np.int64(1) << (total_shift - 1)
    return (x * reduced + rnd) >> total_shift


def multiply_by_quantized_multiplier_gt_one(x, multiplier, left_shift):
    """``MultiplyByQuantizedMultiplierGreaterThanOne``: SRDHM(x * 2**left_shift, m)."""
    x = wrap_int32(np.asarray(x, dtype=np.int64) << np.int64(left_shift))
    return srdhm(x, multiplier)


def activation_range_quantized(activation: str | None, scale: float, zero_point: int,
                               dtype) -> tuple[int, int]:
    """``CalculateActivationRangeQuantized``: clamp bounds of a fused activation.

    ``activation`` is one of None/"NONE", "RELU", "RELU6", "RELU_N1_TO_1".
    Bounds are ``zero_point + round(f / scale)`` computed in float32, as in TFLM.
    """
    qmin, qmax = qrange(dtype)

    def q(f: float) -> int:
        return int(zero_point) + int(round_half_away(np.float32(f) / np.float32(scale)))

    act = activation or "NONE"
    if act == "NONE":
        return qmin, qmax
    if act == "RELU":
        return max(qmin, q(0.0)), qmax
    if act == "RELU6":
        return max(qmin, q(0.0)), min(qmax, q(6.0))
    if act == "RELU_N1_TO_1":
        return max(qmin, q(-1.0)), min(qmax, q(1.0))
    raise ValueError(f"unsupported fused activation {activation!r}")


def activation_range_float(activation: str | None) -> tuple[float, float]:
    """Float clamp bounds of a fused activation (``CalculateActivationRange``)."""
    act = activation or "NONE"
    bounds = {"NONE": (-np.inf, np.inf), "RELU": (0.0, np.inf), "RELU6": (0.0, 6.0),
              "RELU_N1_TO_1": (-1.0, 1.0)}
    if act not in bounds:
        raise ValueError(f"unsupported fused activation {activation!r}")
    return bounds[act]


def clamp_cast(x, lo, hi, dtype):
    """Clamp to [lo, hi] and cast to ``dtype``."""
    return np.clip(x, lo, hi).astype(dtype)


def out_range(activation, scale, zero_point, dtype, clamp=None):
    """The clamp range a kernel applies: ``clamp`` if given, else the fused activation's."""
    if clamp is not None:
        return int(clamp[0]), int(clamp[1])
    return activation_range_quantized(activation, scale, zero_point, dtype)
