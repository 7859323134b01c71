"""Elementwise and broadcast operators, alone or as epilogues of an anchor.

* add/sub (TFLM arithmetic): both inputs shifted left by 20 bits (15 for
  int16), rescaled to ``2 * max(s1, s2)`` with their own multipliers, summed,
  and requantized to the output; mul: one multiplier for the product.  The
  constants are those ``legalize_quantized`` folded.
* float32 add/sub/mul/maximum/minimum and relu/relu6/relu_n1_to_1; int8
  relu/relu6 as a table of the reference's arithmetic.
* quantize (float or integer in, integer out) and dequantize.
* comparisons (bool out; quantized operands on a common scale, as the
  reference's :mod:`aot.reference.ops.compare`), logical and/or/not, select.

Operands broadcast NumPy-style: an operand of lower rank or with size-1
axes is indexed with those axes dropped or pinned to 0.
"""

from __future__ import annotations

import numpy as np

from aot import te
from aot.kernels.activation import int8_table
from aot.kernels.common import float_activation, one_rounding_rows, requantize
from aot.kernels.conv2d.fuse import requant_rows, requant_value, row_of
from aot.kernels.kernel import KernelError
from aot.kernels.registry import Computed, compute_rule, strategy
from aot.quant.arith import (multiply_by_quantized_multiplier, qrange, quantize_multiplier,
                             round_half_away, wrap_int32)
from aot.quant.params import (ADD_N_LEFT_SHIFT, add_n_params_int8, f32,
                              squared_difference_params)
from aot.reference.ops.compare import LEFT_SHIFT as COMPARE_SHIFT
from aot.reference.ops.elementwise import RSQRT_SHIFT
from aot.tir import expr as E


def _broadcast(t: te.Tensor, idx):
    """``t`` read at output index ``idx`` with NumPy broadcasting."""
    rank = len(t.shape)
    picked = list(idx[len(idx) - rank:])
    for i, dim in enumerate(t.shape):
        if E.is_const_int(dim, 1) and rank:
            picked[i] = 0
    return t[tuple(picked)] if rank else t[0]


def _operands(ctx, node):
    shape = node.outputs[0].shape
    return [ctx.value(t) for t in node.inputs], shape


def _int_input(t: te.Tensor, idx, offset: int, left_shift: int, m: int, s: int):
    """One operand of an integer add/sub or comparison rescaled to the common scale:
    ``MBQM((v + offset) << left_shift, m, s)``, and the largest magnitude it
    takes (None when not known).  An int8 operand has 256 values, so the form
    is chosen by evaluating all of them at compile time with the reference's
    arithmetic: an affine function of ``v`` when it is one (a multiplier of
    2^30 with no shift halves an even value exactly: ResNet-8's conv
    operands, ``(v - z) * 2^19``), else the SMMLAR form ``aot_dw_requant``
    (:func:`aot.kernels.conv2d.fuse.requant_rows`: ``|x| < 2^30`` holds, the
    value is at most ``255 * 2^20``) when it agrees on every value, else the
    two-rounding ``aot_mbqm``."""
    raw = _broadcast(t, idx)
    x = te.call_pure("int32", "aot_shl32", raw.astype("int32") + offset, left_shift)
    if raw.dtype != "int8":
        return te.call_pure("int32", "aot_mbqm", x, m, s), None
    q = np.arange(-128, 128, dtype=np.int64)
    xs = wrap_int32((q + offset) << left_shift)
    want = np.asarray(multiply_by_quantized_multiplier(xs, m, s), np.int64)
    reach = int(np.abs(want).max())
    slope, at0 = int(want[129] - want[128]), int(want[128])
    if (want == slope * q + at0).all() and 128 * abs(slope) + abs(at0) < (1 << 31):
        return raw.astype("int32") * slope + at0, reach
    rows = requant_rows([np.abs(xs).max()], [0], m, s, 0)
    if rows is not None and (requant_value(xs, row_of(rows, 0)) == want).all():
        return _dw_requant(x, row_of(rows, 0)), reach
    return te.call_pure("int32", "aot_mbqm", x, m, s), reach


def _dw_requant(x, row):
    return te.call_pure("int32", "aot_dw_requant", x, *[E.const(v, "int32") for v in row])


def requant_s8(raw, reach, m: int, s: int, output_offset: int, clamp):
    """``clamp(MBQM(raw, m, s) + output_offset)`` as int8, with ``|raw| <=
    reach`` (None: unknown): the SMMLAR form ``aot_dw_requant`` (offset folded
    into ``kh``) when :func:`aot.kernels.conv2d.fuse.requant_rows` accepts the
    bound, else the one-rounding ``aot_requant`` (exact for every int32
    ``raw``, :func:`aot.kernels.common.one_rounding_rows`), then SSAT; else
    :func:`aot.kernels.common.requantize`."""
    rows = None if reach is None else requant_rows([reach], [0], m, s, output_offset)
    if rows is not None:
        q = _dw_requant(raw, row_of(rows, 0))
    else:
        fast = one_rounding_rows([m], [s], output_offset)
        if fast is None:
            return requantize(raw, m, s, output_offset, clamp, "int8")
        table, rest = fast
        q = te.call_pure("int32", "aot_requant", raw,
                         *[E.const(int(c), "int32") for c in table[0]])
        if rest:
            q = q + rest
    return te.call_pure("int32", "aot_clamp_s8", q, clamp[0], clamp[1]).astype("int8")


def _float_only(node):
    if node.outputs[0].dtype != "float32":
        raise KernelError(f"{node.op} ({node.name}) on {node.outputs[0].dtype}: not supported "
                          "yet (float32 only)")


def _arith(ctx, node) -> Computed:
    (a, b), shape = _operands(ctx, node)
    y_t = node.outputs[0]
    act = node.attrs.get("activation", "none")
    if y_t.dtype == "float32":
        fn = {"add": lambda u, v: u + v, "sub": lambda u, v: u - v,
              "mul": lambda u, v: u * v}[node.op]
        out = te.compute(shape, lambda *i: float_activation(
            fn(_broadcast(a, i), _broadcast(b, i)), act), name="y")
        return Computed(out)
    if y_t.dtype == "int32":
        return _arith_int32(node, a, b, shape, act)
    if y_t.dtype not in ("int8", "int16"):
        raise KernelError(f"{node.op} ({node.name}) on {y_t.dtype}: not supported yet")
    qp = ctx.quant(node)
    mo, so = int(qp.multiplier[0]), int(qp.shift[0])
    if node.op == "mul":
        off2 = qp.extra["input2_offset"]

        def body(*i):
            prod = ((_broadcast(a, i).astype("int32") + qp.input_offset)
                    * (_broadcast(b, i).astype("int32") + off2))
            return requantize(prod, mo, so, qp.output_offset, qp.clamp, y_t.dtype)
        return Computed(te.compute(shape, body, name="y"))
    ls = qp.extra["left_shift"]
    (m1, s1), (m2, s2) = qp.extra["input1"], qp.extra["input2"]

    # Helium's residual epilogue row (aot.kernels.conv2d.helium.residual_pattern)
    # matches TFLM's two-rounding form and runs it four outputs per vector step,
    # faster there than the scalar one-rounding forms: keep that form on arm_mve
    tflm_form = "arm_mve" in ctx.target_keys()

    def body(*i):
        if tflm_form:
            u = te.call_pure("int32", "aot_mbqm", te.call_pure(
                "int32", "aot_shl32", _broadcast(a, i).astype("int32") + qp.input_offset, ls),
                m1, s1)
            v = te.call_pure("int32", "aot_mbqm", te.call_pure(
                "int32", "aot_shl32",
                _broadcast(b, i).astype("int32") + qp.extra["input2_offset"], ls), m2, s2)
            return requantize(u + v if node.op == "add" else u - v, mo, so, qp.output_offset,
                              qp.clamp, y_t.dtype)
        u, u_reach = _int_input(a, i, qp.input_offset, ls, m1, s1)
        v, v_reach = _int_input(b, i, qp.extra["input2_offset"], ls, m2, s2)
        raw = u + v if node.op == "add" else u - v
        if y_t.dtype == "int8":
            reach = None if None in (u_reach, v_reach) else u_reach + v_reach
            return requant_s8(raw, reach, mo, so, qp.output_offset, qp.clamp)
        return requantize(raw, mo, so, qp.output_offset, qp.clamp, y_t.dtype)
    return Computed(te.compute(shape, body, name="y"))


#: The clamp of a fused activation on int32 results (CalculateActivationRange).
_INT32_ACT = {"none": None, "relu": (0, None), "relu6": (0, 6), "relu_n1_to_1": (-1, 1)}


def _arith_int32(node, a, b, shape, act) -> Computed:
    """int32 ADD, SUB, MUL as TFLM: the plain result, wrapping, then the
    fused activation's clamp, which TFLM's int32 ADD leaves out
    (quantization is ignored)."""
    helper = {"add": "aot_add32", "sub": "aot_sub32", "mul": "aot_mul32"}[node.op]
    bounds = None if node.op == "add" else _INT32_ACT[act]

    def body(*i):
        v = te.call_pure("int32", helper, _broadcast(a, i), _broadcast(b, i))
        if bounds is not None:
            v = E.max_(v, E.const(bounds[0], "int32"))
            if bounds[1] is not None:
                v = E.min_(v, E.const(bounds[1], "int32"))
        return v
    return Computed(te.compute(shape, body, name="y"))


for _op in ("add", "sub", "mul"):
    compute_rule(_op)(_arith)


def _minmax(ctx, node) -> Computed:
    (a, b), shape = _operands(ctx, node)
    fn = E.max_ if node.op == "maximum" else E.min_
    return Computed(te.compute(shape, lambda *i: fn(_broadcast(a, i), _broadcast(b, i)),
                               name="y"))


for _op in ("maximum", "minimum"):
    compute_rule(_op)(_minmax)

_COMPARE_CODES = {"equal": "eq", "not_equal": "ne", "greater": "gt", "greater_equal": "ge",
                  "less": "lt", "less_equal": "le"}


def _compare(ctx, node) -> Computed:
    """Float, int32 and bool operands as they are; quantized ones each scaled
    to a common scale first (:mod:`aot.reference.ops.compare`)."""
    (a, b), shape = _operands(ctx, node)
    code = _COMPARE_CODES[node.op]
    x1, x2 = node.inputs
    if x1.quant is None:
        return Computed(te.compute(shape, lambda *i: E.binary(
            code, _broadcast(a, i), _broadcast(b, i)), name="y"))
    if x1.quant.is_per_axis or x2.quant.is_per_axis:
        raise KernelError(f"{node.op} ({node.name}): per-axis quantized operands: not supported")
    ops = []
    for t in (x1, x2):
        m, s = quantize_multiplier(float(f32(t.quant.scale[0])))
        ops.append((-int(t.quant.zero_point[0]), m, s))

    def body(*i):
        u, _ = _int_input(a, i, ops[0][0], COMPARE_SHIFT, ops[0][1], ops[0][2])
        v, _ = _int_input(b, i, ops[1][0], COMPARE_SHIFT, ops[1][1], ops[1][2])
        return E.binary(code, u, v)
    return Computed(te.compute(shape, body, name="y"))


for _op in _COMPARE_CODES:
    compute_rule(_op)(_compare)


def _logical(ctx, node) -> Computed:
    xs, shape = _operands(ctx, node)
    if node.op == "logical_not":
        return Computed(te.compute(shape, lambda *i: E.Not(xs[0][i]), name="y"))
    code = "and" if node.op == "logical_and" else "or"
    return Computed(te.compute(shape, lambda *i: E.binary(
        code, _broadcast(xs[0], i), _broadcast(xs[1], i)), name="y"))


for _op in ("logical_and", "logical_or", "logical_not"):
    compute_rule(_op)(_logical)


_FLOAT_UNARY = {
    "abs": te.abs, "neg": lambda v: v * E.const(-1.0, "float32"), "floor": te.floor,
    "ceil": te.ceil, "round": lambda v: _round_to_nearest(v), "sqrt": te.sqrt,
    "rsqrt": lambda v: E.const(1.0, "float32") / te.sqrt(v), "exp": te.exp, "log": te.log,
    "sin": te.sin, "cos": te.cos, "square": lambda v: v * v, "erf": te.erf,
}


def _round_to_nearest(v):
    """TFLM's ROUND (see :func:`aot.reference.ops.elementwise.round_to_nearest`)."""
    f = te.floor(v)
    d = v - f
    half, two = E.const(0.5, "float32"), E.const(2.0, "float32")
    even = (f - two * te.floor(f / two)).equal(E.const(0.0, "float32"))
    down = E.binary("or", d < half, E.binary("and", d.equal(half), even))
    return te.if_then_else(down, f, f + E.const(1.0, "float32"))


def _float_unary(ctx, node) -> Computed:
    """C's float functions (libm for exp/log/sin/cos/erf, exact ones elsewhere);
    NEG multiplies by -1 so that 0 becomes -0 as with C's unary minus."""
    _float_only(node)
    x = ctx.value(node.inputs[0])
    fn = _FLOAT_UNARY[node.op]
    return Computed(te.compute(x.shape, lambda *i: fn(x[i]), name="y"))


for _op in _FLOAT_UNARY:
    if _op not in ("rsqrt", "abs"):
        compute_rule(_op)(_float_unary)


def _table_lookup(ctx, node, x) -> Computed:
    """An int8 operator as its 256-entry table (:func:`aot.kernels.activation.
    int8_table`: the reference's arithmetic for this node), one load per element."""
    table = ctx.const(f"{node.name}_table", int8_table(node))
    return Computed(te.compute(x.shape, lambda *i: table[x[i].astype("int32") + 128],
                               name="y"))


@compute_rule("abs")
def abs_(ctx, node) -> Computed:
    """float32: ``fabsf``; int8: a 256-entry table of the reference's
    arithmetic for this node; int16: ``|x - zp|`` requantized per element as
    :func:`aot.reference.ops.elementwise.abs_quantized` (unquantized: C's abs)."""
    x_t, y_t = node.inputs[0], node.outputs[0]
    x = ctx.value(x_t)
    if x_t.dtype == "int8":
        return _table_lookup(ctx, node, x)
    if x_t.dtype != "int16":
        return _float_unary(ctx, node)
    if x_t.quant is None:
        return Computed(te.compute(x.shape, lambda *i: te.abs(x[i].astype("int32"))
                                   .astype("int16"), name="y"))
    zx, zy = int(x_t.quant.zero_point[0]), int(y_t.quant.zero_point[0])
    same = np.float32(x_t.quant.scale[0]) == np.float32(y_t.quant.scale[0])
    m, e = quantize_multiplier(f32(x_t.quant.scale[0]) / f32(y_t.quant.scale[0]))
    lo, hi = qrange("int16")

    def body(*i):
        v = te.abs(x[i].astype("int32") - zx)
        if same:
            return te.clamp(v + zy, lo, hi).astype("int16")
        return requantize(v, m, e, zy, (lo, hi), "int16")
    return Computed(te.compute(x.shape, body, name="y"))


@compute_rule("rsqrt")
def rsqrt(ctx, node) -> Computed:
    """float32: ``1 / sqrtf(x)``; int8: a 256-entry table of the reference's
    integer inverse square root for this node, one load per element; int16:
    that arithmetic per element (:func:`aot.reference.ops.elementwise.
    rsqrt_quantized`: ``aot_inv_sqrt_packed`` and two requantizations)."""
    x_t, y_t = node.inputs[0], node.outputs[0]
    x = ctx.value(x_t)
    if x_t.dtype == "int8":
        return _table_lookup(ctx, node, x)
    if x_t.dtype != "int16":
        return _float_unary(ctx, node)
    mult, shift = quantize_multiplier(
        1.0 / (np.sqrt(f32(x_t.quant.scale[0])) * f32(y_t.quant.scale[0])))
    zx, zy = int(x_t.quant.zero_point[0]), int(y_t.quant.zero_point[0])
    lo, hi = qrange("int16")

    def body(*i):
        v = x[i].astype("int32") - zx
        inv = te.call_pure("int64", "aot_inv_sqrt_packed", v)
        d = te.call_pure("int32", "aot_mbqm", E.const(1, "int32"),
                         te.call_pure("int32", "aot_lo32", inv),
                         te.call_pure("int32", "aot_hi32", inv) + RSQRT_SHIFT)
        y = te.call_pure("int32", "aot_mbqm", d, mult, shift - RSQRT_SHIFT) + zy
        return te.if_then_else(v > 0, te.clamp(y, lo, hi), E.const(hi, "int32")) \
            .astype("int16")
    return Computed(te.compute(x.shape, body, name="y"))


def _float_binary(ctx, node) -> Computed:
    """DIV, SQUARED_DIFFERENCE, FLOOR_DIV and FLOOR_MOD on float32 (as the
    reference's :func:`aot.reference.ops.elementwise.float_binary`)."""
    _float_only(node)
    (a, b), shape = _operands(ctx, node)
    act = node.attrs.get("activation", "none")
    zero = E.const(0.0, "float32")

    def body(*i):
        u, v = _broadcast(a, i), _broadcast(b, i)
        if node.op == "div":
            y = u / v
        elif node.op == "squared_difference":
            y = (u - v) * (u - v)
        elif node.op == "floor_div":
            y = te.floor(u / v)
        else:
            trunc = te.fmod(u, v)
            fix = E.binary("and", trunc.not_equal(zero), (v < zero).not_equal(trunc < zero))
            y = te.if_then_else(fix, trunc + v, trunc)
        return float_activation(y, act)
    return Computed(te.compute(shape, body, name="y"))


for _op in ("div", "floor_div", "floor_mod"):
    compute_rule(_op)(_float_binary)


@compute_rule("squared_difference")
def squared_difference(ctx, node) -> Computed:
    """float32 as :func:`_float_binary`; int32 wrapping; int8 and int16 as the
    reference's :func:`aot.reference.ops.elementwise.squared_difference`:
    each int8 operand rescaled by :func:`_int_input` (an affine function of
    the value when the constants make it one: LayerNorm's operands share a
    scale, which halves exactly), the square requantized by
    :func:`requant_s8` with its bound known."""
    y_t = node.outputs[0]
    if y_t.dtype == "float32":
        return _float_binary(ctx, node)
    (a, b), shape = _operands(ctx, node)
    if y_t.dtype == "int32":
        def body32(*i):
            d = te.call_pure("int32", "aot_sub32", _broadcast(a, i), _broadcast(b, i))
            return te.call_pure("int32", "aot_mul32", d, d)
        return Computed(te.compute(shape, body32, name="y"))
    x1, x2 = node.inputs
    ls, (m1, e1), (m2, e2), (mo, eo) = squared_difference_params(
        x1.quant.scale[0], x2.quant.scale[0], y_t.quant.scale[0], y_t.dtype)
    zp1, zp2 = int(x1.quant.zero_point[0]), int(x2.quant.zero_point[0])
    zpo = int(y_t.quant.zero_point[0])
    clamp = qrange(y_t.dtype)

    def body(*i):
        u, u_reach = _int_input(a, i, -zp1, ls, m1, e1)
        v, v_reach = _int_input(b, i, -zp2, ls, m2, e2)
        d = u - v
        if y_t.dtype == "int8":
            reach = None if None in (u_reach, v_reach) else (u_reach + v_reach) ** 2
            return requant_s8(d * d, reach, mo, eo, zpo, clamp)
        return requantize(d * d, mo, eo, zpo, clamp, y_t.dtype)
    return Computed(te.compute(shape, body, name="y"))


@compute_rule("cast")
def cast(ctx, node) -> Computed:
    """C's conversion (truncation toward zero, wrap-around, nonzero is true)."""
    x = ctx.value(node.inputs[0])
    dtype = node.outputs[0].dtype
    return Computed(te.compute(x.shape, lambda *i: x[i].astype(dtype), name="y"))


@compute_rule("zeros_like")
def zeros_like(ctx, node) -> Computed:
    y_t = node.outputs[0]
    zero = E.const(0.0 if y_t.dtype == "float32" else 0, y_t.dtype)
    return Computed(te.compute(tuple(y_t.shape), lambda *i: zero, name="y"))


@compute_rule("add_n")
def add_n(ctx, node) -> Computed:
    """The inputs summed left to right (float32); int8 as the reference's
    :func:`aot.reference.ops.elementwise.add_n_int8`, each input rescaled by
    :func:`_int_input` (affine where exact), the sum by :func:`requant_s8`."""
    xs, shape = _operands(ctx, node)
    x_t, y_t = node.inputs[0], node.outputs[0]
    if y_t.dtype == "int8":
        (mi, ei), (mo, eo) = add_n_params_int8(x_t.quant.scale[0], y_t.quant.scale[0])
        zx, zy = int(x_t.quant.zero_point[0]), int(y_t.quant.zero_point[0])

        # TFLM's sum starts from the rescaled offset -zp_x, not from 0
        start = int(multiply_by_quantized_multiplier(-zx << ADD_N_LEFT_SHIFT, mi, ei))

        def qbody(*i):
            parts = [_int_input(x, i, -zx, ADD_N_LEFT_SHIFT, mi, ei) for x in xs]
            total = E.const(start, "int32")
            for v, _ in parts:
                total = te.call_pure("int32", "aot_add32", total, v)
            reaches = [r for _, r in parts]
            reach = None if None in reaches else sum(reaches) + abs(start)
            if reach is not None and reach >= 1 << 31:
                reach = None
            return requant_s8(total, reach, mo, eo, zy, qrange("int8"))
        return Computed(te.compute(shape, qbody, name="y"))
    _float_only(node)

    def body(*i):
        total = xs[0][i]
        for x in xs[1:]:
            total = total + x[i]
        return total
    return Computed(te.compute(shape, body, name="y"))


@compute_rule("select")
def select(ctx, node) -> Computed:
    """``condition ? lhs : rhs`` on raw values (as TFLM: no requantization)."""
    (c, a, b), shape = _operands(ctx, node)
    return Computed(te.compute(shape, lambda *i: te.if_then_else(
        _broadcast(c, i), _broadcast(a, i), _broadcast(b, i)), name="y"))


def _relu_int16(node, x) -> Computed:
    """RELU requantizes ``x - zp`` to the output and clamps below at the output's
    zero (``zp + round(0 / scale)``); RELU6 clamps raw values to ``[zp, zp +
    round(6 / scale)]`` on the input's scale, as :mod:`aot.reference.ops.activations`."""
    x_t, y_t = node.inputs[0], node.outputs[0]
    lo_t, hi_t = qrange("int16")
    x_zp = int(x_t.quant.zero_point[0])
    if node.op == "relu6":
        six = min(hi_t, max(lo_t, int(round_half_away(f32(6.0) / f32(x_t.quant.scale[0])))
                            + x_zp))
        return Computed(te.compute(x.shape, lambda *i: te.clamp(
            x[i].astype("int32"), x_zp, six).astype("int16"), name="y"))
    m, s = quantize_multiplier(f32(x_t.quant.scale[0]) / f32(y_t.quant.scale[0]))
    y_zp = int(y_t.quant.zero_point[0])
    return Computed(te.compute(x.shape, lambda *i: requantize(
        x[i].astype("int32") - x_zp, m, s, y_zp, (max(lo_t, y_zp), hi_t), "int16"), name="y"))


def _relu(ctx, node) -> Computed:
    """float32: a clamp. int8: a 256-entry table of the reference's
    arithmetic for this node (RELU requantizes, RELU6 clamps on the input's
    scale as TFLM does), one load per element; int16: that arithmetic per
    element."""
    x = ctx.value(node.inputs[0])
    if (node.inputs[0].dtype, node.outputs[0].dtype) == ("int8", "int8"):
        return _table_lookup(ctx, node, x)
    if (node.inputs[0].dtype, node.outputs[0].dtype) == ("int16", "int16"):
        return _relu_int16(node, x)
    _float_only(node)
    return Computed(te.compute(x.shape, lambda *i: float_activation(x[i], node.op),
                               name="y"))


for _op in ("relu", "relu6"):
    compute_rule(_op)(_relu)


@compute_rule("quantize")
def quantize(ctx, node) -> Computed:
    """float -> int: ``clamp(roundf(x / scale) + zp)``; int -> int: requantize."""
    x_t, y_t = node.inputs[0], node.outputs[0]
    x = ctx.value(x_t)
    yq = y_t.quant
    if yq is None or yq.is_per_axis:
        raise KernelError(f"quantize ({node.name}): the output needs per-tensor quantization")
    lo, hi = qrange(y_t.dtype)
    zp = int(yq.zero_point[0])
    if x_t.dtype == "float32":
        scale = E.const(f32(yq.scale[0]), "float32")

        def body(*i):
            r = te.round(x[i] / scale)
            r = E.min_(E.max_(r, E.const(float(lo - zp), "float32")),
                       E.const(float(hi - zp), "float32"))
            return (r.astype("int32") + zp).astype(y_t.dtype)
        return Computed(te.compute(x.shape, body, name="y"))
    m, s = quantize_multiplier(f32(x_t.quant.scale[0]) / f32(yq.scale[0]))
    x_zp = int(x_t.quant.zero_point[0])
    return Computed(te.compute(x.shape, lambda *i: requantize(
        x[i].astype("int32") - x_zp, m, s, zp, (lo, hi), y_t.dtype), name="y"))


@compute_rule("dequantize")
def dequantize(ctx, node) -> Computed:
    """``scale * (x - zp)`` in float32 (exact: one rounding, as the reference's double)."""
    x_t = node.inputs[0]
    x = ctx.value(x_t)
    scale = E.const(f32(x_t.quant.scale[0]), "float32")
    zp = int(x_t.quant.zero_point[0])
    return Computed(te.compute(x.shape, lambda *i: scale * (x[i].astype("int32") - zp)
                               .astype("float32"), name="y"))


@strategy("elementwise")
def schedule_elementwise_generic(s, final, stages) -> None:
    """One flat loop nest over the output; every producer is inlined."""
    del s, final, stages


