"""EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL (TFLM arithmetic),
LOGICAL_AND/OR/NOT and SELECT_V2, with numpy broadcasting.

Float, int32 and bool operands are compared as they are.  Quantized (int8,
int16) operands are first brought to a common scale, each with a multiplier
for its own scale::

    v_i = MultiplyByQuantizedMultiplierSmallerThanOneExp((x_i - zp_i) << 8, QM(s_i))

(``QM`` from the float32 scale in double), and the ``v_i`` are compared.
"""

from __future__ import annotations

import operator

import numpy as np

from aot.quant import arith as quant

LEFT_SHIFT = 8

OPERATORS = {"equal": operator.eq, "not_equal": operator.ne, "greater": operator.gt,
             "greater_equal": operator.ge, "less": operator.lt, "less_equal": operator.le}


def scaled(x, scale: float, zero_point: int) -> np.ndarray:
    """A quantized operand on the comparisons' common scale."""
    m, shift = quant.quantize_multiplier(float(np.float32(scale)))
    v = (np.asarray(x).astype(np.int64) - int(zero_point)) * (1 << LEFT_SHIFT)
    return quant.multiply_by_quantized_multiplier(quant.wrap_int32(v), m, shift)


def compare(op: str, x1, x2, *, quant1=None, quant2=None) -> np.ndarray:
    """``x1 <op> x2``; ``quant1``/``quant2`` are ``(scale, zero_point)`` of
    quantized operands (None for float, int32 and bool)."""
    if quant1 is not None:
        x1 = scaled(x1, *quant1)
        x2 = scaled(x2, *quant2)
    return OPERATORS[op](np.asarray(x1), np.asarray(x2))


def select(condition, x1, x2) -> np.ndarray:
    """SELECT_V2: ``condition ? x1 : x2`` on raw values."""
    return np.where(np.asarray(condition, bool), x1, x2)
