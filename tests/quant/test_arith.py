"""The fixed-point helpers on hand-checked values (the oracle tests cover them end to end)."""

from __future__ import annotations

import numpy as np
import pytest

from aot.quant import arith as quant
from aot.quant import fixedpoint


@pytest.mark.parametrize("real, expected", [
    (0.0, (0, 0)),
    (0.5, (1 << 30, 0)),
    (1.0, (1 << 30, 1)),
    (0.75, (3 << 29, 0)),
    (2.0 ** -40, (0, 0)),                      # below 2**-31: flushed to zero
    (1.0 - 2.0 ** -33, (1 << 30, 1)),          # mantissa rounds up to 2**31: renormalized
])
def test_quantize_multiplier(real, expected):
    assert quant.quantize_multiplier(real) == expected


def test_srdhm_rounds_ties_up_and_saturates():
    assert quant.srdhm(1, 1 << 30) == 1               # 0.5 -> 1
    assert quant.srdhm(-1, 1 << 30) == 0              # -0.5 -> 0
    assert quant.srdhm(-3, 1 << 30) == -1             # -1.5 -> -1
    assert quant.srdhm(quant.INT32_MIN, quant.INT32_MIN) == quant.INT32_MAX


@pytest.mark.parametrize("x, e, expected", [(5, 1, 3), (-5, 1, -3), (6, 2, 2), (-6, 2, -2),
                                            (7, 0, 7), (-7, 2, -2)])
def test_rounding_divide_by_pot(x, e, expected):
    assert quant.rounding_divide_by_pot(x, e) == expected


def test_multiply_by_quantized_multiplier_paths():
    m, s = quant.quantize_multiplier(0.3)
    x = np.arange(-1000, 1000)
    y32 = quant.multiply_by_quantized_multiplier(x, m, s)
    y64 = quant.multiply_by_quantized_multiplier_int64(x, m, s)
    assert np.abs(y32 - np.round(x * 0.3)).max() <= 1
    assert np.abs(y64 - np.round(x * 0.3)).max() <= 1
    assert not np.array_equal(y32, y64)  # double vs single rounding differ somewhere


def test_activation_range_quantized():
    assert quant.activation_range_quantized(None, 0.1, 5, "int8") == (-128, 127)
    assert quant.activation_range_quantized("RELU", 0.1, 5, "int8") == (5, 127)
    assert quant.activation_range_quantized("RELU6", 0.1, 5, "int8") == (5, 65)
    assert quant.activation_range_quantized("RELU_N1_TO_1", 0.1, 5, "int8") == (-5, 15)


def test_exp_on_negative_values_tracks_exp():
    xs = np.linspace(-15, 0, 200)
    raw = np.round(xs * 2 ** 26).astype(np.int64)   # 5 integer bits
    got = fixedpoint.exp_on_negative_values(raw, 5) / 2.0 ** 31
    np.testing.assert_allclose(got, np.exp(raw / 2 ** 26), atol=2e-7)


def test_reciprocal_tracks_one_over_x():
    x = np.array([1 << 19, 3 << 19, 1000 << 19, 123456789])   # 12 integer bits
    recip, bits = fixedpoint.get_reciprocal(x, 12)
    got = recip / 2.0 ** 31 / 2.0 ** bits
    np.testing.assert_allclose(got, 2.0 ** 19 / x, rtol=1e-6)


def test_count_leading_zeros32():
    edges = [0, 1, 2, 3] + [v for k in range(1, 33) for v in ((1 << k) - 1, 1 << (k - 1))]
    xs = np.array(edges + list(np.random.default_rng(0).integers(0, 1 << 32, 1000)), dtype=np.int64)
    want = [32 - int(v).bit_length() for v in xs]
    assert fixedpoint.count_leading_zeros32(xs).tolist() == want
