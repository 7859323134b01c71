"""Quantization parameters that TFLM's ``Prepare`` functions derive from a
model's scales: the one place the reference interpreter and the kernels get
them from, so the two cannot drift apart.
"""

from __future__ import annotations

import math

import numpy as np

from aot.quant import arith as quant

#: LSTM gates: the int16 pre-activations are Q3.12, sigmoid/tanh outputs Q0.15.
GATE_INPUT_SCALE = 2.0 ** -12
GATE_OUTPUT_SCALE = 2.0 ** -15

#: Integer bits of the scaled difference in the int8 softmax (gemmlowp).
SOFTMAX_DIFF_BITS = 5


def f32(v) -> float:
    """A scale as the model stores it (float32), widened to double."""
    return float(np.float32(v))


def log2_rounded(scale) -> tuple[int, bool]:
    """``CheckedLog2``: (round(log2(scale)), whether scale is a power of two), in float32."""
    v = np.float32(np.log(np.float32(scale))) * np.float32(1.0 / np.log(np.float32(2.0)))
    r = quant.round_half_away(np.float32(v))
    return int(r), bool(abs(np.float32(v - r)) < np.float32(1e-3))


def mean_multiplier(n: int, x_scale, y_scale) -> tuple[int, int]:
    """``(multiplier, shift)`` that turn the sum of ``n`` zero-point-shifted inputs
    into the mean in the output's scale: ``((M << k) // n, s - k)`` (module docstring)."""
    m, s = quant.quantize_multiplier(f32(x_scale) / f32(y_scale))
    k = min(n.bit_length() - 1, 32, 31 + s)
    return (m << k) // n, s - k


#: CUMSUM's int8 path: inputs scaled to Q(20) before they are added.
CUMSUM_LEFT_SHIFT = 20


def cumsum_params_int8(x_scale, y_scale) -> tuple[int, int, int, int]:
    """(input multiplier, input shift, output multiplier, output shift) of
    the int8 CUMSUM: the input halved (its scale over twice itself), the sum
    brought from ``2 s_in / 2**20`` to the output's scale."""
    twice = 2 * f32(x_scale)
    im, ishift = quant.quantize_multiplier(f32(x_scale) / twice)
    om, oshift = quant.quantize_multiplier(twice / ((1 << CUMSUM_LEFT_SHIFT) * f32(y_scale)))
    return im, ishift, om, oshift


def softmax_params_int8(x_scale: float, beta: float = 1.0):
    """(input_multiplier, input_left_shift, diff_min) as TFLM's Prepare computes them."""
    real = min(float(beta) * f32(x_scale) * (1 << (31 - SOFTMAX_DIFF_BITS)), (1 << 31) - 1.0)
    mult, shift = quant.quantize_multiplier(real)
    max_input_rescaled = (1.0 * ((1 << SOFTMAX_DIFF_BITS) - 1)
                          * (1 << (31 - SOFTMAX_DIFF_BITS)) / (1 << shift))
    return mult, shift, -math.floor(max_input_rescaled)


def log_softmax_params_int8(x_scale: float) -> tuple[int, int, int, int, int]:
    """(input_multiplier, input_left_shift, diff_min, reverse_scaling_divisor,
    reverse_scaling_shift) of TFLM's int8 LOG_SOFTMAX: the softmax's scaling
    (beta 1) plus its inverse, ``2^(31 - left_shift) / multiplier``, as a
    multiplier and a (non-positive) shift."""
    mult, shift, diff_min = softmax_params_int8(x_scale, 1.0)
    rev_div, rev_shift = quant.quantize_multiplier((1 << (31 - shift)) / float(mult))
    return mult, shift, diff_min, rev_div, rev_shift


def softmax_params_int16(x_scale: float, beta: float = 1.0):
    """(input_multiplier, input_left_shift) of the int16 softmax: the input
    difference is scaled so that [-65535, 0] covers [-10, 0]."""
    real = f32(x_scale) * float(beta) / (10.0 / 65535.0)
    return quant.quantize_multiplier(real)


def squared_difference_params(x1_scale, x2_scale, y_scale, dtype: str):
    """The integer SQUARED_DIFFERENCE's constants, as TFLM's Prepare derives
    them: ``(left_shift, (m1, e1), (m2, e2), (mo, eo))``.  Each operand is
    shifted left (7 bits for int8, whose square then still fits int32; none
    for int16) and scaled to half the larger input scale; the square of the
    difference is brought from ``(2 max / 2**L)**2`` to the output's scale."""
    left_shift = 7 if dtype == "int8" else 0
    s1, s2, so = f32(x1_scale), f32(x2_scale), f32(y_scale)
    twice_max = 2.0 * max(s1, s2)
    m1 = quant.quantize_multiplier(s1 / twice_max)
    m2 = quant.quantize_multiplier(s2 / twice_max)
    mo = quant.quantize_multiplier(twice_max * twice_max / ((1 << (2 * left_shift)) * so))
    return left_shift, m1, m2, mo


#: ADD_N's int8 path: inputs shifted left 20 bits before they are rescaled.
ADD_N_LEFT_SHIFT = 20


def add_n_params_int8(x_scale, y_scale) -> tuple[tuple[int, int], tuple[int, int]]:
    """TFLM's int8 ADD_N constants (all inputs share one scale): each input
    rescaled to twice its scale, ``QM(1/2)``, the sum brought from
    ``2 s_x / 2**20`` to the output's scale."""
    twice = 2.0 * f32(x_scale)
    return (quant.quantize_multiplier(f32(x_scale) / twice),
            quant.quantize_multiplier(twice / ((1 << ADD_N_LEFT_SHIFT) * f32(y_scale))))
