"""gemmlowp fixed-point arithmetic on int32 raw values (held in int64 arrays).

A value with ``I`` integer bits has raw ``r`` meaning ``r / 2**(31 - I)``.
Products use :func:`quant.srdhm` (integer bits add up); :func:`rescale`
moves between integer-bit counts with saturating/rounding power-of-two
multiplies.  These reproduce gemmlowp's ``exp_on_negative_values`` and
``one_over_one_plus_x_for_x_in_0_1``, which TFLM's int8 softmax, logistic
and tanh use.
"""

from __future__ import annotations

import numpy as np

from aot.quant.arith import (INT32_MAX, INT32_MIN, rounding_divide_by_pot,
                             saturating_rounding_multiply_by_pot, srdhm, wrap_int32)


def rescale(raw, src_bits: int, dst_bits: int):
    """``gemmlowp::Rescale``: change the number of integer bits."""
    return saturating_rounding_multiply_by_pot(raw, src_bits - dst_bits)


def one(bits: int) -> int:
    """Raw value of 1.0 (the largest raw value when there are no integer bits)."""
    return INT32_MAX if bits == 0 else 1 << (31 - bits)


def exp_on_interval_between_negative_one_quarter_and_0_excl(a):
    """exp(a) for F0 ``a`` in [-1/4, 0): Taylor expansion around -1/8."""
    constant_term = 1895147668          # exp(-1/8) in Q0.31
    constant_1_over_3 = 715827883       # 1/3 in Q0.31
    x = a + (1 << 28)
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = saturating_rounding_multiply_by_pot(x4, -2)
    poly = saturating_rounding_multiply_by_pot(
        srdhm(x4_over_4 + x3, constant_1_over_3) + x2, -1)
    return constant_term + srdhm(constant_term, x + poly)


# exp(-2**k) in Q0.31 for the barrel shifter, k = -2 .. 4.
_EXP_BARREL = [(-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
               (2, 39332535), (3, 720401), (4, 242)]


def exp_on_negative_values(a, integer_bits: int):
    """exp(a) for a <= 0 given with ``integer_bits``; result in F0 (Q0.31)."""
    a = np.asarray(a, dtype=np.int64)
    frac = 31 - integer_bits
    one_quarter = 1 << (frac - 2)
    mask = one_quarter - 1
    a_mod = (a & mask) - one_quarter
    result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        rescale(a_mod, integer_bits, 0))
    remainder = wrap_int32(a_mod - a)
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent:
            bit = 1 << (frac + exponent)
            result = np.where(remainder & bit, srdhm(result, multiplier), result)
    if integer_bits > 5:
        clamp = -(1 << (36 - integer_bits))
        result = np.where(a < clamp, 0, result)
    return np.where(a == 0, one(0), result)


def rounding_half_sum(a, b):
    """``RoundingHalfSum``: (a + b) / 2 rounded away from zero."""
    s = np.asarray(a, dtype=np.int64) + b
    sign = np.where(s >= 0, 1, -1)
    t = s + sign
    return np.where(t >= 0, t // 2, -((-t) // 2))


def one_over_one_plus_x_for_x_in_0_1(a):
    """1 / (1 + a) for F0 ``a`` in [0, 1): three Newton-Raphson steps, result F0."""
    half_denominator = rounding_half_sum(a, one(0))
    x = 1515870810 + srdhm(half_denominator, -1010580540)    # 48/17 - 32/17 d, in F2
    for _ in range(3):
        half_denominator_times_x = srdhm(half_denominator, x)
        one_minus = one(2) - half_denominator_times_x
        x = x + rescale(srdhm(x, one_minus), 4, 2)
    # ExactMulByPot<-1> reinterprets x (F2) as F1 without touching the raw value.
    return rescale(x, 1, 0)


def one_minus_x_over_one_plus_x_for_x_in_0_1(a):
    """(1 - a) / (1 + a) for F0 ``a`` in [0, 1) (gemmlowp, used by tanh), result F0."""
    half_denominator = rounding_half_sum(a, one(0))
    x = 1515870810 + srdhm(half_denominator, -1010580540)
    for _ in range(3):
        half_denominator_times_x = srdhm(half_denominator, x)
        one_minus = one(2) - half_denominator_times_x
        x = x + rescale(srdhm(x, one_minus), 4, 2)
    # (1 - a)/(1 + a) = 2/(1 + a) - 1 = x - 1 with x in F2
    return rescale(x - one(2), 2, 0)


def count_leading_zeros32(x):
    """Leading zeros of ``x`` as a uint32 (32 for 0)."""
    x = np.asarray(x, dtype=np.int64) & 0xFFFFFFFF
    n = np.full(x.shape, 32, dtype=np.int64)
    nz = x > 0
    n[nz] = 31 - np.floor(np.log2(x[nz].astype(np.float64))).astype(np.int64)
    # log2 of values just below a power of two can round up; fix exactly.
    top = np.int64(1) << (31 - n)
    n = np.where(nz & (x < top), n + 1, n)
    return n


def get_reciprocal(x, x_integer_digits: int):
    """``GetReciprocal``: (1/x as F0 raw, num_bits_over_unit) for positive ``x``."""
    x = np.asarray(x, dtype=np.int64)
    headroom_plus_one = count_leading_zeros32(x)
    num_bits_over_unit = x_integer_digits - headroom_plus_one
    shifted_sum_minus_one = wrap_int32(((x << headroom_plus_one) & 0xFFFFFFFF) - (1 << 31))
    return one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one), num_bits_over_unit


#: 1/sqrt(2) as an F0 raw value.
_HALF_SQRT_2 = 1518500250


def inv_sqrt_multiplier_exp(acc: int, reverse_shift: int) -> tuple[int, int]:
    """``GetInvSqrtQuantizedMultiplierExp``: ``1/sqrt(acc)`` as a multiplier and
    a shift (times ``reverse_shift``) for ``acc >= 0``.

    ``acc`` is scaled by powers of four into [2^26, 2^29) (the shift counts
    them from 11), then five Newton steps ``x <- 3/2 x - acc/2 x^3`` in F3
    from x = 1, a multiply by 1/sqrt(2), and a negative shift folded into the
    multiplier.  0 and 1 give the largest multiplier and shift 0."""
    acc = int(acc)
    if acc <= 1:
        return INT32_MAX, 0
    shift = 11
    while acc >= 1 << 29:
        acc //= 4
        shift += 1
    pairs = (int(count_leading_zeros32(acc)) - 1) // 2 - 1
    shift -= pairs
    acc <<= 2 * pairs
    half_input = int(rounding_divide_by_pot(acc >> 1, 1))
    half_three = (1 << 28) + (1 << 27)
    x = 1 << 28
    for _ in range(5):
        x3 = int(rescale(srdhm(srdhm(x, x), x), 9, 3))
        x = int(rescale(wrap_int32(int(srdhm(half_three, x)) - int(srdhm(half_input, x3))), 6, 3))
    x = int(srdhm(x, _HALF_SQRT_2))
    if shift < 0:
        x = int(wrap_int32(x << -shift))
        shift = 0
    return x, shift * reverse_shift


def _sat32(v: int) -> int:
    return max(INT32_MIN, min(INT32_MAX, int(v)))


def log_x_for_x_greater_than_or_equal_to_1(raw: int, input_bits: int, output_bits: int) -> int:
    """``log(x)`` for a fixed-point ``x >= 1`` with ``input_bits`` integer bits,
    as a raw value with ``output_bits`` (TFLite's
    ``log_x_for_x_greater_than_or_equal_to_1``).

    ``x = 2^z * r``: the exponent ``z`` and mantissa ``r`` come two ways (from
    ``x`` and from ``x / sqrt 2``) and the pair with the smaller mantissa is
    kept (``z`` adjusted by a quarter); ``log r`` is a rational approximation
    around ``sqrt(sqrt(1/2))``; the sum ``z log 2 + log r`` is accumulated
    with one more integer bit than the output."""
    acc_bits = output_bits + 1
    log_2, sqrt_sqrt_half, sqrt_half = 1488522236, 1805811301, 1518500250
    alpha_n, alpha_d, alpha_i, alpha_f = 117049297, 127690142, 1057819769, 638450708
    quarter = int(rescale(536870912, 0, acc_bits))

    def pot(v, e):
        return int(saturating_rounding_multiply_by_pot(int(v), int(e)))

    def mul(a, b):
        return int(srdhm(int(a), int(b)))

    def add(*vs):
        return int(wrap_int32(sum(int(v) for v in vs)))

    z_a = int(raw)
    za_head = int(count_leading_zeros32(z_a))
    r_a = pot(mul(pot(z_a, za_head - 1), sqrt_half), 1)
    za_adj = _sat32(pot(input_bits - za_head, 31 - acc_bits) + quarter)
    z_b = mul(z_a, sqrt_half)
    zb_head = int(count_leading_zeros32(z_b)) - 1
    r_b = pot(z_a, zb_head)
    zb_adj = _sat32(pot(input_bits - zb_head, 31 - acc_bits) - quarter)
    r = min(r_a, r_b)
    z_adj = max(za_adj, zb_adj)
    p = int(rounding_half_sum(r, sqrt_sqrt_half))
    q = add(r, -sqrt_sqrt_half)
    q = add(q, q)
    sq = mul(q, q)
    num = add(mul(q, r), mul(mul(q, sq), alpha_n))
    denom = add(mul(p, add(alpha_i, q, mul(alpha_d, sq))), mul(alpha_f, q))
    recip = int(one_over_one_plus_x_for_x_in_0_1(denom))
    total = add(mul(z_adj, log_2), mul(int(rescale(num, 0, acc_bits)), recip))
    return int(rescale(total, acc_bits, output_bits))
