"""SOFTMAX over the last axis (TFLM reference arithmetic).

int8 input (int8 or int16 output): gemmlowp fixed point.  In Prepare,
``(M, left_shift) = QuantizeMultiplier(min(beta * x_scale * 2**26, 2**31 - 1))``
(5 integer bits for the scaled difference) and
``diff_min = -floor(31 * 2**26 / 2**left_shift)``.  Per row: ``d = x - max``;
entries with ``d < diff_min`` give the output minimum; otherwise
``e = exp_on_negative_values(SRDHM(d << left_shift, M))`` (Q0.31), the sum of
``e >> 12`` (rounded) is inverted with ``GetReciprocal`` and
``y = RoundingDivideByPOT(SRDHM(recip, e), bits_over_unit + 31 - bits(out)) + out_min``.
The output quantization is fixed by TFLite: scale 1/256, zero point -128
(int8) or 1/65536 (or 1/32768), -32768 (int16).

int16 input: look-up tables (:mod:`aot.quant.lut`) for exp on
[-10, 0] and 1/(1+x) on [0, 1], as TFLM's ``SoftmaxInt16``.

float32: ``exp(beta * (x - max)) / sum``.

LOG_SOFTMAX and L2_NORMALIZATION (float32) work on the same rows.
"""

from __future__ import annotations

import numpy as np

from aot.quant import arith as quant
from aot.quant import fixedpoint, libm, lut
from aot.quant.params import (SOFTMAX_DIFF_BITS, log_softmax_params_int8, softmax_params_int8,
                              softmax_params_int16)

_SCALED_DIFF_BITS = SOFTMAX_DIFF_BITS
_ACCUM_BITS = 12


def softmax(x, *, beta=1.0, x_scale=1.0, x_zero_point=0, y_scale=None, y_zero_point=None,
            out_dtype=None):
    """SOFTMAX of ``x`` (int8, int16 or float32) along the last axis.

    ``out_dtype`` defaults to the dtype of ``x``; int8 input may produce int16.
    The output scale/zero point are the fixed ones TFLite requires and are
    not used (the arguments exist so callers can pass them uniformly).
    """
    x = np.asarray(x)
    if x.dtype == np.float32:
        z = (x.astype(np.float32) - x.max(axis=-1, keepdims=True)) * np.float32(beta)
        e = np.exp(z.astype(np.float64))
        return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
    out_dtype = np.dtype(out_dtype or x.dtype)
    if x.dtype == np.int16:
        return _softmax_int16(x, beta, x_scale)
    xi = x.astype(np.int64)
    diff = xi - xi.max(axis=-1, keepdims=True)
    e = softmax_exp_int8(diff, x_scale, beta)
    keep = diff >= softmax_params_int8(x_scale, beta)[2]
    contrib = fixedpoint.rescale(e, 0, _ACCUM_BITS)
    sum_of_exps = quant.wrap_int32(np.where(keep, contrib, 0).sum(axis=-1, keepdims=True))
    recip, bits_over_unit = fixedpoint.get_reciprocal(sum_of_exps, _ACCUM_BITS)
    out_bits = out_dtype.itemsize * 8
    lo, hi = quant.qrange(out_dtype)
    unsat = quant.rounding_divide_by_pot(quant.srdhm(recip, e), bits_over_unit + 31 - out_bits)
    y = np.clip(unsat + lo, lo, hi)
    return np.where(keep, y, lo).astype(out_dtype)


def softmax_exp_int8(diff, x_scale, beta) -> np.ndarray:
    """The int8 softmax's ``e`` (Q0.31) of each ``diff = x - max <= 0``: 0
    below ``diff_min``, else ``exp_on_negative_values(SRDHM(diff <<
    left_shift, M))``.  An int8 row's ``diff`` takes at most 256 values, so
    the kernel looks ``e`` up in a table of this function."""
    mult, left_shift, diff_min = softmax_params_int8(x_scale, beta)
    diff = np.asarray(diff, np.int64)
    rescaled = quant.multiply_by_quantized_multiplier_gt_one(diff, mult, left_shift)
    e = fixedpoint.exp_on_negative_values(rescaled, _SCALED_DIFF_BITS)
    return np.where(diff >= diff_min, e, 0)


def _softmax_int16(x, beta, x_scale):
    mult, shift = softmax_params_int16(x_scale, beta)
    exp_lut = lut.exp_lut_int16()
    recip_lut = lut.one_over_one_plus_x_lut_int16()
    xi = x.astype(np.int64)
    diff = xi - xi.max(axis=-1, keepdims=True)
    scaled = quant.multiply_by_quantized_multiplier(diff, mult, shift)
    sym = np.clip(scaled + 32767, -32768, 32767)
    e = lut.lookup_int16(sym, exp_lut)
    total = e.sum(axis=-1, keepdims=True)
    headroom_plus_one = fixedpoint.count_leading_zeros32(total)
    shifted_sum = ((total << (headroom_plus_one - 1)) + (1 << 13)) >> 14
    sym_sum = np.clip(shifted_sum - ((1 << 15) + (1 << 16)), -32768, 32767)
    recip = lut.lookup_int16(sym_sum, recip_lut)
    right_shift = 31 - headroom_plus_one
    y = (e * recip + (np.int64(1) << (right_shift - 1))) >> right_shift
    return np.clip(y, 0, 32767).astype(np.int16)


def _rows_of(x):
    x = np.asarray(x, np.float32)
    return x.reshape(-1, x.shape[-1]), x.shape


#: LOG_SOFTMAX int8: Q5.26 differences, a Q12 sum of exponentials, Q4 output bits.
_LOG_OUTPUT_BITS = 4


def log_softmax(x, *, x_scale=1.0):
    """LOG_SOFTMAX over the last axis, float32 as TFLite: per row the maximum,
    the sum of ``expf(x - max)`` added left to right, then
    ``(x - max) - logf(sum)``.  int8 as TFLM (output scale 16/256, zero
    point 127): the softmax's Q5.26 differences and Q12 sum of exponentials,
    its fixed-point log in Q5.26, then ``RoundingDivideByPOT(d - log, 22) +
    127`` for differences above ``max(diff_min - 1, log rescaled back)``,
    -128 below."""
    x = np.asarray(x)
    if x.dtype == np.int8:
        return _log_softmax_int8(x, x_scale)
    rows, shape = _rows_of(x)
    mx = rows.max(axis=1, keepdims=True)
    e = libm.call("expf", rows - mx)
    total = np.zeros((rows.shape[0], 1), np.float32)
    for c in range(rows.shape[1]):
        total = total + e[:, c:c + 1]
    return ((rows - mx) - libm.call("logf", total)).reshape(shape)


def _log_softmax_int8(x, x_scale):
    mult, left, diff_min, rev_div, rev_shift = log_softmax_params_int8(x_scale)
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64)
    out = np.empty(rows.shape, np.int64)
    for r, row in enumerate(rows):
        d = row - row.max()
        in_q5 = quant.multiply_by_quantized_multiplier(d, mult, left)
        e = quant.rounding_divide_by_pot(
            fixedpoint.exp_on_negative_values(in_q5, _SCALED_DIFF_BITS), _ACCUM_BITS)
        total = int(quant.wrap_int32(np.where(d >= diff_min, e, 0).sum()))
        log = fixedpoint.log_x_for_x_greater_than_or_equal_to_1(total, _ACCUM_BITS,
                                                                 _SCALED_DIFF_BITS)
        adjusted = max(diff_min - 1, int(quant.multiply_by_quantized_multiplier(
            quant.wrap_int32(log + quant.INT32_MIN), rev_div, rev_shift)))
        shift = 31 - _SCALED_DIFF_BITS - _LOG_OUTPUT_BITS
        y = quant.rounding_divide_by_pot(quant.wrap_int32(in_q5 - log), shift) + 127
        out[r] = np.where(d > adjusted, np.clip(y, -128, 127), -128)
    return out.astype(np.int8).reshape(x.shape)


L2_EPSILON = np.float32(1e-6)


def l2_normalization(x, *, x_zero_point=0):
    """L2_NORMALIZATION over the last axis, float32 as TFLite: the squares
    added left to right, ``sqrtf``, at least 1e-6, then each value divided.
    int8 as TFLM: ``acc = sum (x - zp)^2``, ``(M, s) =
    GetInvSqrtQuantizedMultiplierExp(acc, -1)``, ``y = clamp(
    MultiplyByQuantizedMultiplier(x - zp, M, s + 7))`` (output scale 1/128)."""
    x = np.asarray(x)
    if x.dtype == np.int8:
        d = x.reshape(-1, x.shape[-1]).astype(np.int64) - int(x_zero_point)
        out = np.empty(d.shape, np.int64)
        for r, row in enumerate(d):
            mult, shift = fixedpoint.inv_sqrt_multiplier_exp(int((row * row).sum()), -1)
            out[r] = quant.multiply_by_quantized_multiplier(row, mult, shift + 7)
        return quant.clamp_cast(out, -128, 127, np.int8).reshape(x.shape)
    rows, shape = _rows_of(x)
    total = np.zeros((rows.shape[0], 1), np.float32)
    for c in range(rows.shape[1]):
        total = total + rows[:, c:c + 1] * rows[:, c:c + 1]
    norm = np.maximum(np.sqrt(total), L2_EPSILON)
    return (rows / norm).reshape(shape)
