"""Unary activations: LOGISTIC, TANH, LEAKY_RELU, HARD_SWISH, ELU and GELU
(aot's extension: TFLM has none); PRELU.

* int8: every one of the 256 inputs is mapped through the reference
  interpreter's own arithmetic for this node (:mod:`aot.reference.ops.activations`,
  bit-exact with TFLM) at compile time, and the kernel is a table lookup
  ``y = table[x + 128]``: bit-exact by construction, one load per element,
  256 bytes of flash per node, whatever the arithmetic it replaces.
* float32: ``1 / (1 + expf(-x))``, ``tanhf(x)``, ``x >= 0 ? x : alpha * x``,
  ``x * min(max(x + 3, 0), 6) / 6`` (within 1e-5 of the reference) and
  GELU with ``erff`` or ``tanhf`` in the reference's operation order.
* int16 LOGISTIC and TANH: TFLM's 16x8 formulation, computed per element: the
  input is rescaled by the Prepare's integer multiplier (or ``3 << shift`` for a
  power-of-two scale), its magnitude indexes the 256-entry sigmoid table
  (:mod:`aot.quant.sigmoid_table`, 1 KB of flash shared by the nodes of a kernel),
  the two neighbouring entries are interpolated and the sign folded back in, as
  :func:`aot.reference.ops.activations.logistic_int16_raw` and ``tanh_int16_raw``.
* int16 LEAKY_RELU: the reference's two requantizations per element.
  The other int16 activations (65,536-entry tables would not fit a
  microcontroller's flash; TFLM runs HARD_SWISH and ELU in int8 only) are not
  supported.

They run alone or as the elementwise tail of a fused group.
"""

from __future__ import annotations

import numpy as np

from aot import te
from aot.kernels.common import requantize
from aot.kernels.kernel import KernelError
from aot.kernels.registry import Computed, compute_rule
from aot.quant.arith import quantize_multiplier
from aot.quant.sigmoid_table import SIGMOID_TABLE_UINT16
from aot.reference.interpreter import evaluate
from aot.reference.ops.activations import (GELU_CUBIC, GELU_SQRT_HALF, GELU_TANH_SCALE,
                                           int16_sigmoid_params)
from aot.tir import expr as E


def _float(node, x):
    zero = E.const(0.0, "float32")
    if node.op == "logistic":
        one = E.const(1.0, "float32")
        return lambda *i: one / (one + te.exp(zero - x[i]))
    if node.op == "tanh":
        return lambda *i: te.tanh(x[i])
    if node.op == "leaky_relu":
        alpha = E.const(float(np.float32(node.attrs["alpha"])), "float32")
        return lambda *i: te.if_then_else(x[i] >= zero, x[i], alpha * x[i])
    if node.op == "elu":
        return lambda *i: te.if_then_else(x[i] < zero, te.expm1(x[i]), x[i])
    if node.op == "gelu":
        return _gelu_float(x, node.attrs["approximate"])
    three, six = E.const(3.0, "float32"), E.const(6.0, "float32")
    return lambda *i: x[i] * E.min_(E.max_(x[i] + three, zero), six) / six


def _gelu_float(x, approximate: bool):
    """:func:`aot.reference.ops.activations.gelu_float`, operation for operation."""
    half, one = E.const(0.5, "float32"), E.const(1.0, "float32")
    if approximate:
        scale = E.const(float(GELU_TANH_SCALE), "float32")
        cubic = E.const(float(GELU_CUBIC), "float32")
        return lambda *i: half * x[i] * (one + te.tanh(
            scale * (x[i] + cubic * x[i] * x[i] * x[i])))
    root_half = E.const(float(GELU_SQRT_HALF), "float32")
    return lambda *i: half * x[i] * (one + te.erf(x[i] * root_half))


def int8_table(node) -> np.ndarray:
    """The node's output for every int8 input, -128..127, from the reference
    interpreter (so the kernel cannot drift from it)."""
    (table,) = evaluate(node, [np.arange(-128, 128, dtype=np.int8)])
    return np.asarray(table, dtype=np.int8).reshape(256)


def _i32(v) -> E.PrimExpr:
    return E.const(int(v), "int32")


def _sigmoid_like_int16(ctx, node, x) -> Computed:
    """int16 LOGISTIC (Q0.15 out of a 9-bit table step) and TANH (an 8-bit
    step, the table's sigmoid moved to [-1, 1]); every intermediate fits int32."""
    is_tanh = node.op == "tanh"
    mult, shift = int16_sigmoid_params(node.inputs[0].quant.scale[0], allow_shift_one=is_tanh)
    if mult == 0:
        mult, shift = 3 << shift, 0
    rnd = (1 << (shift - 1)) if shift > 0 else 0
    table = ctx.const("sigmoid_table", SIGMOID_TABLE_UINT16.astype(np.int32), dtype="int32")
    step = 8 if is_tanh else 9

    def body(*i):
        v = (x[i].astype("int32") * _i32(mult) + _i32(rnd)) >> _i32(shift)
        a = te.if_then_else(v < 0, _i32(0) - v, v)
        uh = a >> _i32(step)
        idx = E.min_(uh, _i32(254))
        ua, ub = table[idx], table[idx + 1]
        frac = a & _i32((1 << step) - 1)
        top = 0xFFFF << 8 if is_tanh else 0x7FFF << 10
        res = te.if_then_else(uh >= 255, _i32(top), (ua << _i32(step)) + frac * (ub - ua))
        if is_tanh:
            out = te.if_then_else(v >= 0, res - _i32((1 << 23) - (1 << 7)),
                                  _i32((1 << 23) + (1 << 7) - 1) - res) >> _i32(8)
        else:
            out = te.if_then_else(v >= 0, res + _i32(1 << 9),
                                  _i32((1 << 25) + (1 << 9) - 1) - res) >> _i32(10)
        return out.astype("int16")
    return Computed(te.compute(x.shape, body, name="y"))


def _leaky_relu_int16(node, x) -> Computed:
    """``x - zp`` requantized by the identity's multiplier where it is >= 0 and
    by alpha's below, plus the output's zero point, saturated (as
    :func:`aot.reference.ops.activations.leaky_relu`)."""
    x_t, y_t = node.inputs[0], node.outputs[0]
    xs, ys = np.float32(x_t.quant.scale[0]), np.float32(y_t.quant.scale[0])
    alpha = np.float32(node.attrs["alpha"])
    m_id, s_id = quantize_multiplier(float(xs / ys))
    m_a, s_a = quantize_multiplier(float(np.float32(xs * alpha) / ys))
    x_zp, y_zp = int(x_t.quant.zero_point[0]), int(y_t.quant.zero_point[0])

    def body(*i):
        v = x[i].astype("int32") - x_zp
        return te.if_then_else(v >= 0, requantize(v, m_id, s_id, y_zp, (-32768, 32767), "int16"),
                               requantize(v, m_a, s_a, y_zp, (-32768, 32767), "int16"))
    return Computed(te.compute(x.shape, body, name="y"))


def _activation(ctx, node) -> Computed:
    x_t, y_t = node.inputs[0], node.outputs[0]
    x = ctx.value(x_t)
    if y_t.dtype == "float32":
        return Computed(te.compute(x.shape, _float(node, x), name="y"))
    if node.op in ("logistic", "tanh") and (x_t.dtype, y_t.dtype) == ("int16", "int16"):
        return _sigmoid_like_int16(ctx, node, x)
    if node.op == "leaky_relu" and (x_t.dtype, y_t.dtype) == ("int16", "int16"):
        return _leaky_relu_int16(node, x)
    if (x_t.dtype, y_t.dtype) != ("int8", "int8"):
        raise KernelError(f"{node.op} ({node.name}) from {x_t.dtype} to {y_t.dtype}: not "
                          "supported yet (int8 and float32; int16 LOGISTIC, TANH and LEAKY_RELU)")
    table = ctx.const(f"{node.name}_table", int8_table(node))
    return Computed(te.compute(x.shape, lambda *i: table[x[i].astype("int32") + 128],
                               name="y"))


for _op in ("logistic", "tanh", "leaky_relu", "hard_swish", "elu", "gelu"):
    compute_rule(_op)(_activation)


@compute_rule("prelu")
def prelu(ctx, node) -> Computed:
    """``x >= 0 ? x : alpha * x``; int8 as the reference's
    :func:`aot.reference.ops.activations.prelu` (two multipliers)."""
    x_t, a_t = node.inputs
    y_t = node.outputs[0]
    x, a = ctx.value(x_t), ctx.value(a_t)
    shape = tuple(y_t.shape)
    lead = len(shape) - len(a_t.shape)

    def alpha(i):
        return a[tuple(0 if int(d) == 1 else i[lead + k] for k, d in enumerate(a_t.shape))]
    if y_t.dtype == "float32":
        zero = E.const(0.0, "float32")
        return Computed(te.compute(shape, lambda *i: te.if_then_else(
            x[i] >= zero, x[i], x[i] * alpha(i)), name="y"))
    if (x_t.dtype, y_t.dtype) != ("int8", "int8") or any(
            t.quant is None or t.quant.is_per_axis for t in (x_t, a_t, y_t)):
        raise KernelError(f"prelu ({node.name}): int8 with per-tensor quantization and float32 "
                          "only")
    m1, s1 = quantize_multiplier(float(x_t.quant.scale[0]) / float(y_t.quant.scale[0]))
    m2, s2 = quantize_multiplier(float(x_t.quant.scale[0]) * float(a_t.quant.scale[0])
                                 / float(y_t.quant.scale[0]))
    x_zp, a_zp = int(x_t.quant.zero_point[0]), int(a_t.quant.zero_point[0])
    y_zp = int(y_t.quant.zero_point[0])

    def body(*i):
        v = x[i].astype("int32") - x_zp
        neg = v * (alpha(i).astype("int32") - a_zp)
        return te.if_then_else(v >= 0, requantize(v, m1, s1, y_zp, (-128, 127), "int8"),
                               requantize(neg, m2, s2, y_zp, (-128, 127), "int8"))
    return Computed(te.compute(shape, body, name="y"))
