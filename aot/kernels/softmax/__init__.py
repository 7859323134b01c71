"""SOFTMAX over the last axis: int8 (int8 or int16 out), int16 and float32.

All three are tensor expressions with one row at a time: the row maximum,
the exponentials (kept in a row-sized stack buffer), their sum, and the
normalized output.

* int8 (TFLM, gemmlowp fixed point): ``d = x - max``; taps with
  ``d < diff_min`` give the output minimum; otherwise
  ``e = exp_on_negative_values(SRDHM(d << left_shift, M))`` in Q0.31 with
  5 integer bits for ``d``, looked up in a 256-entry int32 table of the
  reference's values (``d`` is in [-255, 0]; 1 KB of flash per node);
  ``sum = sum(RoundingDivideByPOT(e, 12))``;
  ``y = RoundingDivideByPOT(SRDHM(1/sum, e), bits_over_unit + 31 - out_bits)
  + out_min``.  ``M``, ``left_shift`` and ``diff_min`` come from the input
  scale and ``beta`` at compile time.
* int16 (TFLM ``SoftmaxInt16``): two 513-entry tables (exp on [-10, 0] and
  1/(1+x) on [0, 1]) generated at compile time, indexed with 9 bits and
  interpolated with 7.
* float32: ``exp(beta * (x - max)) / sum`` with ``expf``.

LOG_SOFTMAX (``(x - max) - logf(sum of expf(x - max))``; int8 with TFLM's
fixed-point exp and log) and L2_NORMALIZATION (``x / max(sqrtf(sum of
x^2), 1e-6)``; int8 with its fixed-point inverse square root) share the row
structure; their float sums run left to right as TFLite's.
"""

from __future__ import annotations

import numpy as np

from aot import te
from aot.kernels.kernel import KernelError
from aot.kernels.registry import Computed, compute_rule, strategy
from aot.quant import lut
from aot.quant.arith import qrange
from aot.quant.params import log_softmax_params_int8, softmax_params_int16
from aot.reference.ops.softmax import L2_EPSILON, softmax_exp_int8
from aot.tir import expr as E

_SCALED_DIFF_BITS = 5
_ACCUM_BITS = 12


def _rows(ctx, node):
    x_t = node.inputs[0]
    depth = x_t.shape[-1]
    rows = x_t.type.size // depth
    x = ctx.value(x_t, (rows, depth))
    k = te.reduce_axis((0, depth), "k")
    mx = te.compute((rows,), lambda r: te.max(x[r, k], axis=k), name="row_max")
    return x, rows, depth, mx


def _i32(v) -> E.PrimExpr:
    return E.const(int(v), "int32")


def _softmax_int8(ctx, node) -> Computed:
    x, rows, depth, mx = _rows(ctx, node)
    y_t = node.outputs[0]
    lo, hi = qrange(y_t.dtype)
    out_bits = 8 if y_t.dtype == "int8" else 16

    # e of every difference x - max in [-255, 0], from the reference's arithmetic
    x_scale, beta = node.inputs[0].quant.scale[0], node.attrs["beta"]
    exp_table = ctx.const("exp_table", softmax_exp_int8(np.arange(-255, 1), x_scale, beta)
                          .astype(np.int32), dtype="int32")

    def exp_of(r, i):
        return exp_table[x[r, i].astype("int32") - mx[r].astype("int32") + 255]
    e = te.compute((rows, depth), exp_of, name="exps")
    k = te.reduce_axis((0, depth), "k")
    total = te.compute((rows,), lambda r: te.sum(
        te.call_pure("int32", "aot_rdbpot", e[r, k], _i32(_ACCUM_BITS)), axis=k), name="exp_sum")

    # 1/sum (a Newton iteration) and its exponent packed in one int64, computed
    # once per row rather than once per output
    recip = te.compute((rows,), lambda r: te.call_pure(
        "int64", "aot_reciprocal_packed", total[r], _i32(_ACCUM_BITS)), name="recip")

    def out(r, i):
        bits = te.call_pure("int32", "aot_hi32", recip[r]) + (31 - out_bits)
        unsat = te.call_pure("int32", "aot_rdbpot_wide", te.call_pure(
            "int32", "aot_srdhm", te.call_pure("int32", "aot_lo32", recip[r]), e[r, i]), bits)
        # Taps below diff_min have e = 0, which gives out_min like the reference's
        # explicit test, so the row maximum is not needed here.
        return te.clamp(unsat + lo, lo, hi).astype(y_t.dtype)
    y = te.compute((rows, depth), out, name="y")
    return Computed(y, {"max": mx, "exps": e, "sum": total, "recip": recip}, rows * depth)


def _lookup(table, value):
    """``generic_int16_table_lookup`` on an int32 ``value`` in [-32768, 32767]."""
    index = (value >> 7) + 256
    offset = value & 0x7F
    base = table[index].astype("int32")
    slope = table[index + 1].astype("int32") - base
    return base + ((slope * offset + 64) >> 7)


def _softmax_int16(ctx, node) -> Computed:
    x, rows, depth, mx = _rows(ctx, node)
    mult, shift = softmax_params_int16(node.inputs[0].quant.scale[0], node.attrs["beta"])
    exp_table = ctx.const("exp_lut", lut.exp_lut_int16(), dtype="int16")
    recip_table = ctx.const("recip_lut", lut.one_over_one_plus_x_lut_int16(), dtype="int16")

    def exp_of(r, i):
        d = x[r, i].astype("int32") - mx[r].astype("int32")
        scaled = te.call_pure("int32", "aot_mbqm", d, _i32(mult), _i32(shift))
        return _lookup(exp_table, te.clamp(scaled + 32767, -32768, 32767))
    e = te.compute((rows, depth), exp_of, name="exps")
    k = te.reduce_axis((0, depth), "k")
    total = te.compute((rows,), lambda r: te.sum(e[r, k], axis=k), name="exp_sum")

    def out(r, i):
        t = total[r]
        hp1 = te.call_pure("int32", "aot_clz32", t)
        shifted = ((t.astype("int64") << (hp1 - 1).astype("int64")) + (1 << 13)) >> 14
        sym = te.clamp(shifted - ((1 << 15) + (1 << 16)), -32768, 32767).astype("int32")
        recip = _lookup(recip_table, sym).astype("int64")
        rs = (31 - hp1).astype("int64")
        v = (e[r, i].astype("int64") * recip + (E.const(1, "int64") << (rs - 1))) >> rs
        return te.clamp(v, 0, 32767).astype("int16")
    y = te.compute((rows, depth), out, name="y")
    return Computed(y, {"max": mx, "exps": e, "sum": total}, rows * depth)


def _softmax_float(ctx, node) -> Computed:
    x, rows, depth, mx = _rows(ctx, node)
    beta = E.const(float(node.attrs["beta"]), "float32")
    e = te.compute((rows, depth), lambda r, i: te.exp((x[r, i] - mx[r]) * beta), name="exps")
    k = te.reduce_axis((0, depth), "k")
    total = te.compute((rows,), lambda r: te.sum(e[r, k], axis=k), name="exp_sum")
    y = te.compute((rows, depth), lambda r, i: e[r, i] / total[r], name="y")
    return Computed(y, {"max": mx, "exps": e, "sum": total}, rows * depth)


@compute_rule("softmax")
def softmax(ctx, node) -> Computed:
    x_t, y_t = node.inputs[0], node.outputs[0]
    if x_t.dtype == "float32":
        return _softmax_float(ctx, node)
    if x_t.dtype == "int8" and y_t.dtype in ("int8", "int16"):
        return _softmax_int8(ctx, node)
    if x_t.dtype == "int16" and y_t.dtype == "int16":
        return _softmax_int16(ctx, node)
    raise KernelError(f"softmax ({node.name}) from {x_t.dtype} to {y_t.dtype}: not supported yet")


def _log_softmax_int8(ctx, node) -> Computed:
    """TFLM's int8 LOG_SOFTMAX: the softmax's Q5.26 differences and Q12 sum
    of exponentials (taps below ``diff_min`` add nothing), ``aot_log_x_ge_1``
    of the sum in Q5.26 once per row, then ``RoundingDivideByPOT(d - log, 22)
    + 127`` where ``d`` exceeds ``max(diff_min - 1, (log - 2^31)`` scaled
    back by the reverse multiplier), else -128."""
    x, rows, depth, mx = _rows(ctx, node)
    mult, left, diff_min, rev_div, rev_shift = log_softmax_params_int8(
        node.inputs[0].quant.scale[0])

    def diff(r, i):
        return x[r, i].astype("int32") - mx[r].astype("int32")

    def in_q5(d):
        return te.call_pure("int32", "aot_mbqm", d, _i32(mult), _i32(left))

    def term(r, i):
        d = diff(r, i)
        e = te.call_pure("int32", "aot_exp_on_negative_values", in_q5(d), _i32(_SCALED_DIFF_BITS))
        return te.if_then_else(d >= diff_min, te.call_pure("int32", "aot_rdbpot", e,
                                                           _i32(_ACCUM_BITS)), _i32(0))
    k = te.reduce_axis((0, depth), "k")
    total = te.compute((rows,), lambda r: te.sum(term(r, k), axis=k), name="exp_sum")
    log = te.compute((rows,), lambda r: te.call_pure(
        "int32", "aot_log_x_ge_1", total[r], _i32(_ACCUM_BITS), _i32(_SCALED_DIFF_BITS)),
        name="log_sum")

    def out(r, i):
        d = diff(r, i)
        back = te.call_pure("int32", "aot_mbqm",
                            te.call_pure("int32", "aot_add32", log[r], _i32(-(1 << 31))),
                            _i32(rev_div), _i32(rev_shift))
        adjusted = E.max_(_i32(diff_min - 1), back)
        v = te.call_pure("int32", "aot_rdbpot",
                         te.call_pure("int32", "aot_add32", in_q5(d), -log[r]),
                         _i32(31 - _SCALED_DIFF_BITS - 4)) + 127
        return te.if_then_else(d > adjusted, te.clamp(v, -128, 127), _i32(-128)).astype("int8")
    y = te.compute((rows, depth), out, name="y")
    return Computed(y, {"max": mx, "sum": total, "log": log}, rows * depth)


@compute_rule("log_softmax")
def log_softmax(ctx, node) -> Computed:
    if node.inputs[0].dtype == "int8":
        return _log_softmax_int8(ctx, node)
    x, rows, depth, mx = _rows(ctx, node)
    k = te.reduce_axis((0, depth), "k")
    total = te.compute((rows,), lambda r: te.sum(te.exp(x[r, k] - mx[r]), axis=k),
                       name="exp_sum")
    y = te.compute((rows, depth), lambda r, i: (x[r, i] - mx[r]) - te.log(total[r]), name="y")
    return Computed(y, {"max": mx, "sum": total}, rows * depth)


@compute_rule("l2_normalization")
def l2_normalization(ctx, node) -> Computed:
    x_t = node.inputs[0]
    depth = x_t.shape[-1]
    rows = x_t.type.size // depth
    x = ctx.value(x_t, (rows, depth))
    k = te.reduce_axis((0, depth), "k")
    if x_t.dtype == "int8":
        return _l2_normalization_int8(node, x, rows, depth, k)
    total = te.compute((rows,), lambda r: te.sum(x[r, k] * x[r, k], axis=k), name="sq_sum")
    eps = E.const(float(L2_EPSILON), "float32")
    y = te.compute((rows, depth), lambda r, i: x[r, i] / E.max_(te.sqrt(total[r]), eps),
                   name="y")
    return Computed(y, {"sum": total}, rows * depth)


def _l2_normalization_int8(node, x, rows, depth, k) -> Computed:
    """TFLM's int8 path: ``acc = sum (x - zp)^2`` per row, its inverse square
    root as a multiplier and shift (``aot_inv_sqrt_packed``, once per row), then
    ``clamp(MultiplyByQuantizedMultiplier(x - zp, M, s + 7))``."""
    zp = int(node.inputs[0].quant.zero_point[0])

    def diff(r, i):
        return x[r, i].astype("int32") - zp
    total = te.compute((rows,), lambda r: te.sum(diff(r, k) * diff(r, k), axis=k),
                       name="sq_sum")
    # multiplier and shift packed in one int64, so each row computes them once
    inv = te.compute((rows,), lambda r: te.call_pure("int64", "aot_inv_sqrt_packed", total[r]),
                     name="inv_sqrt")

    def out(r, i):
        mult = te.call_pure("int32", "aot_lo32", inv[r])
        shift = te.call_pure("int32", "aot_hi32", inv[r])
        v = te.call_pure("int32", "aot_mbqm", diff(r, i), mult, shift + 7)
        return te.clamp(v, -128, 127).astype("int8")
    y = te.compute((rows, depth), out, name="y")
    return Computed(y, {"sum": total, "inv": inv}, rows * depth)


@strategy("log_softmax")
def schedule_log_softmax_generic(s, final, stages) -> None:
    """Row by row: the maximum and the sum (int8: inside the row's log) in the row loop."""
    row = final.op.axis[0]
    if "log" in stages:
        s[stages["log"]].compute_at(s[final], row)
        s[stages["sum"]].compute_at(s[stages["log"]], stages["log"].op.axis[0])
    else:
        s[stages["sum"]].compute_at(s[final], row)
    s[stages["max"]].compute_at(s[final], row)


@strategy("l2_normalization")
def schedule_l2_normalization_generic(s, final, stages) -> None:
    """Row by row: the sum of squares (and for int8 its inverse square root)
    inside the row loop."""
    row = final.op.axis[0]
    if "inv" in stages:
        s[stages["inv"]].compute_at(s[final], row)
        s[stages["sum"]].compute_at(s[stages["inv"]], stages["inv"].op.axis[0])
    else:
        s[stages["sum"]].compute_at(s[final], row)


@strategy("softmax")
def schedule_softmax_generic(s, final, stages) -> None:
    """Row by row: the maximum, the exponentials (a row-sized stack buffer) and
    their sum are computed inside the row loop, then the row is written."""
    row = final.op.axis[0]
    exps = stages["exps"]
    s[exps].compute_at(s[final], row)
    if "recip" in stages:  # int8: 1/sum and its exponent once per row
        recip = stages["recip"]
        s[recip].compute_at(s[final], row)
        s[stages["sum"]].compute_at(s[recip], recip.op.axis[0])
    else:
        s[stages["sum"]].compute_at(s[final], row)
    s[stages["max"]].compute_at(s[exps], exps.op.axis[0])
