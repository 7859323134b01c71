"""Expression helpers shared by the operator files: windows, requantization, clamps."""

from __future__ import annotations

import numpy as np

from aot import te
from aot.tir import expr as E

ACTIVATION_FLOAT = {"none": None, "relu": (0.0, None), "relu6": (0.0, 6.0),
                    "relu_n1_to_1": (-1.0, 1.0)}


def window_index(out, k, stride, dilation, pad_before):
    """Input coordinate read by output coordinate ``out`` at tap ``k``."""
    return out * stride + k * dilation - pad_before


def in_bounds(conds_for):
    """``te.all`` of (index, size, may_underflow, may_overflow) checks; None if none apply."""
    conds = []
    for idx, size, low, high in conds_for:
        if low:
            conds.append(idx >= 0)
        if high:
            conds.append(idx < size)
    return te.all(*conds) if conds else None


def needs_check(out_size, k, stride, dilation, pad_before, in_size):
    """(may read below 0, may read past the end) for one spatial axis."""
    last = (out_size - 1) * stride + (k - 1) * dilation - pad_before
    return pad_before > 0, last >= in_size


def channel_value(table: te.Tensor | None, values: np.ndarray, c):
    """``values[c]`` as an int32 expression: an immediate when all channels agree."""
    values = np.asarray(values).reshape(-1)
    if table is None or len(set(values.tolist())) == 1:
        return E.const(int(values[0]), "int32")
    return table[c]


def requantize(acc, mult, shift, output_offset: int, clamp, out_dtype: str, wide=False):
    """``clamp(MultiplyByQuantizedMultiplier(acc, mult, shift) + output_offset)`` cast
    to ``out_dtype``; ``wide`` uses the int64 (int16x8) variant."""
    if wide:
        v = te.call_pure("int64", "aot_mbqm64", acc, mult, shift) + E.const(output_offset, "int64")
        lo, hi = clamp
        return te.clamp(v, E.const(lo, "int64"), E.const(hi, "int64")).astype(out_dtype)
    v = te.call_pure("int32", "aot_mbqm", acc, mult, shift) + output_offset
    return te.clamp(v, clamp[0], clamp[1]).astype(out_dtype)


#: The largest right shift whose output offset folds into the one-rounding
#: table's 64-bit ``k`` (:func:`one_rounding_rows`; ``|x*m + k| < 2^63`` for
#: ``|offset| <= 128``).  Past it the epilogue adds the offset itself.
MAX_FOLDED_SHIFT = 23


def one_rounding_rows(multiplier, shift, output_offset: int = 0):
    """Per-channel constants of the one-rounding requantization, or None.

    For a multiplier ``m`` in ``(2^30, 2^31)`` and a right shift ``e >= 1``
    (what int8 conv and dense layers nearly always have), TFLM's two
    roundings ``RoundingDivideByPOT(SRDHM(x, m), e)`` equal
    ``floor((x*m + k - [x < 0] * 2^31) / 2^(31+e))`` with
    ``k = 2^30 + 2^(30+e)``: SRDHM is ``floor((x*m + 2^30) / 2^31)``, its
    sign is ``x``'s when ``m > 2^30``, and rounding half away from zero is
    ``floor((y + 2^(e-1) - [y < 0]) / 2^e)``; nested floors merge.  The C
    helper ``aot_requant`` then needs two SMLALs and a shift of the high word
    (checked against the reference on random and extreme values in
    tests/kernels/test_arm_cpu.py).  Returns ``(rows, offset)``: the int64
    rows ``(m, k_lo, k_hi, e - 1)``, one per channel (int32 bit patterns),
    with the output offset folded into ``k`` when that is exact (then
    ``offset`` is 0), or None when a channel is outside those ranges.
    """
    mult = np.asarray(multiplier, dtype=np.int64).reshape(-1)
    e = -np.asarray(shift, dtype=np.int64).reshape(-1)
    if not ((mult > (1 << 30)).all() and (mult < (1 << 31)).all() and (e >= 1).all()
            and (e <= 31).all()):
        return None
    k = (1 << 30) + np.left_shift(np.int64(1), e + 30)
    offset = int(output_offset)
    if e.max() <= MAX_FOLDED_SHIFT:
        # adding off * 2^(32 + e1) to q adds off to the result exactly, so the
        # epilogue has no separate add: |q| stays below 2^63 for e1 <= 22
        # (|x*m| < 2^62, |k| <= 2^30 + 2^53 + 128 * 2^54 < 2^62)
        k = k + np.left_shift(np.int64(offset), e + 31)
        offset = 0
    rows = np.stack([mult, k & 0xFFFFFFFF, k >> 32, e - 1], axis=1)
    return np.where(rows >= (1 << 31), rows - (1 << 32), rows), offset  # int32 bit patterns


def float_activation(v, activation: str):
    """The fused activation of a float result as min/max."""
    bounds = ACTIVATION_FLOAT[activation]
    if bounds is None:
        return v
    lo, hi = bounds
    v = E.max_(v, E.const(lo, "float32"))
    if hi is not None:
        v = E.min_(v, E.const(hi, "float32"))
    return v


def multiplier_tables(ctx, node, qp):
    """Constant tables for a node's multipliers and shifts (None for one that is
    the same for every channel: it becomes an immediate)."""
    mult = np.asarray(qp.multiplier, dtype=np.int64)
    shift = np.asarray(qp.shift, dtype=np.int64)

    def table(label, values):
        if len(set(values.tolist())) == 1:
            return None
        return ctx.const(f"{node.name}_{label}", values.astype(np.int32))
    return table("mult", mult), table("shift", shift), mult, shift
