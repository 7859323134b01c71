"""SOFTMAX, ADD, SUB, MUL, MAXIMUM, MINIMUM against TFLM."""

from __future__ import annotations

import numpy as np
import pytest

from aot.reference.ops import elementwise
from aot.reference.ops.softmax import softmax
from support.quant_cases import rand_int
from support.tflite_builder import ModelBuilder

OUT_Q = {"int8": (1 / 256, -128), "int16": (1 / 32768, 0)}


def check(tflm, model, inputs, got):
    want = tflm.run1(model, *inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        diff = np.abs(got.astype(np.int64) - want)
        assert diff.max() == 0, f"{np.count_nonzero(diff)} values differ, max {diff.max()}"


def _softmax_case(seed, dtype, shape=(3, 10), beta=1.0, x_scale=None, out_dtype=None):
    rng = np.random.default_rng(seed)
    out_dtype = out_dtype or dtype
    mb = ModelBuilder()
    if dtype == "float32":
        x = (rng.standard_normal(shape) * 3).astype(np.float32)
        xi = mb.input("x", shape, dtype)
        yi = mb.output("y", shape, dtype)
        kw = {}
    else:
        x_scale = np.float32(x_scale or rng.uniform(0.02, 0.2))
        x_zp = int(rng.integers(-20, 20)) if dtype == "int8" else 0
        x = rand_int(rng, shape, dtype)
        s, z = (OUT_Q[out_dtype] if not (dtype == "int8" and out_dtype == "int16")
                else (1 / 65536, -32768))
        xi = mb.input("x", shape, dtype, scale=x_scale, zero_point=x_zp)
        yi = mb.output("y", shape, out_dtype, scale=s, zero_point=z)
        kw = dict(x_scale=x_scale, x_zero_point=x_zp, out_dtype=out_dtype)
    mb.op("SOFTMAX", [xi], [yi], beta=beta)
    return mb.finish(), [x], softmax(x, beta=beta, **kw)


SOFTMAX_VARIANTS = [
    dict(),
    dict(shape=(1, 2)),
    dict(shape=(2, 3, 17)),
    dict(beta=0.5),
    dict(x_scale=1.0),          # steep: most entries underflow to the minimum
    dict(x_scale=0.001),        # flat: near-uniform output
    dict(shape=(4, 100)),
]


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("variant", range(len(SOFTMAX_VARIANTS)))
def test_softmax(tflm, dtype, variant):
    check(tflm, *_softmax_case(variant, dtype, **SOFTMAX_VARIANTS[variant]))


def test_softmax_int8_to_int16(tflm):
    check(tflm, *_softmax_case(11, "int8", out_dtype="int16"))


@pytest.mark.parametrize("variant", range(len(SOFTMAX_VARIANTS)))
def test_softmax_int16(tflm, variant):
    check(tflm, *_softmax_case(variant, "int16", **SOFTMAX_VARIANTS[variant]))


BINARY_SHAPES = [
    ((2, 3, 4), (2, 3, 4)),
    ((2, 3, 4), (1, 1, 4)),
    ((1, 3, 1), (2, 1, 4)),
    ((4,), (2, 3, 4)),
    ((1, 2, 3, 4), (1,)),
]


def _binary_case(seed, op, dtype, shapes, act=None, same_scale=False):
    rng = np.random.default_rng(seed)
    s1, s2 = shapes
    out_shape = np.broadcast_shapes(s1, s2)
    mb = ModelBuilder()
    opts = {} if op in ("MAXIMUM", "MINIMUM") else dict(fused_activation_function=act or "NONE")
    if dtype == "float32":
        a = rng.standard_normal(s1).astype(np.float32)
        b = rng.standard_normal(s2).astype(np.float32)
        qa = qb = qy = {}
        kw = {}
    else:
        sa, sb, sy = (np.float32(v) for v in rng.uniform(0.01, 0.2, 3))
        if same_scale:
            sb = sy = sa
        za, zb, zy = (int(v) for v in rng.integers(-30, 30, 3)) if dtype == "int8" else (0, 0, 0)
        if same_scale:
            zb = zy = za
        a = rand_int(rng, s1, dtype)
        b = rand_int(rng, s2, dtype)
        qa, qb, qy = (dict(scale=sa, zero_point=za), dict(scale=sb, zero_point=zb),
                      dict(scale=sy, zero_point=zy))
        kw = dict(x1_scale=sa, x1_zero_point=za, x2_scale=sb, x2_zero_point=zb,
                  y_scale=sy, y_zero_point=zy)
    ai = mb.input("a", s1, dtype, **qa)
    bi = mb.input("b", s2, dtype, **qb)
    yi = mb.output("y", out_shape, dtype, **qy)
    mb.op(op, [ai, bi], [yi], **opts)
    if op in ("MAXIMUM", "MINIMUM"):
        got = getattr(elementwise, op.lower())(a, b)
    else:
        got = getattr(elementwise, op.lower())(a, b, activation=act, **kw)
    return mb.finish(), [a, b], got


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.parametrize("shapes", range(len(BINARY_SHAPES)))
def test_arith(tflm, op, dtype, shapes):
    check(tflm, *_binary_case(shapes, op, dtype, BINARY_SHAPES[shapes]))


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("act", ["RELU", "RELU6", "RELU_N1_TO_1"])
def test_arith_fused_activation(tflm, op, act):
    check(tflm, *_binary_case(5, op, "int8", BINARY_SHAPES[1], act=act))


@pytest.mark.parametrize("op", ["MAXIMUM", "MINIMUM"])
@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.parametrize("shapes", [0, 2])
def test_max_min(tflm, op, dtype, shapes):
    check(tflm, *_binary_case(shapes, op, dtype, BINARY_SHAPES[shapes], same_scale=True))
