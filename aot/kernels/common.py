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
