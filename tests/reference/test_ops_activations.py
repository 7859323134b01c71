"""Activations, QUANTIZE and DEQUANTIZE against TFLM."""

from __future__ import annotations

import numpy as np
import pytest

from aot.frontend.tflite import parse_tflite
from aot.reference.interpreter import run
from aot.reference.ops import activations
from aot.reference.ops.quantize import dequantize, quantize
from support.tflite_builder import ModelBuilder


def check(tflm, model, inputs, got):
    want = tflm.run1(model, *inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        diff = np.abs(got.astype(np.int64) - want)
        assert diff.max() == 0, f"{np.count_nonzero(diff)} values differ, max {diff.max()}"


def all_values(dtype):
    """Every int8 value (or a spread of int16 values), shaped [1, n]."""
    info = np.iinfo(dtype)
    if dtype == "int8":
        return np.arange(info.min, info.max + 1, dtype=np.int64).astype(dtype)[None]
    rng = np.random.default_rng(0)
    v = rng.integers(info.min, info.max + 1, 500)
    v[:3] = [info.min, info.max, 0]
    return v.astype(dtype)[None]


def _unary(op, dtype, x, xq, yq, fn, **opts):
    mb = ModelBuilder()
    xi = mb.input("x", x.shape, dtype, **xq)
    yi = mb.output("y", x.shape, yq.pop("dtype", dtype), **yq)
    mb.op(op, [xi], [yi], **opts)
    return mb.finish(), [x], fn(x)


SCALES = [(0.05, 3, 0.05, 3), (0.02, -10, 0.03, -128), (0.1, 0, 0.01, 5)]


# RELU_N1_TO_1 as a standalone operator is not registered in TFLM; its
# clamp is covered as a fused activation (test_ops_softmax_add).
@pytest.mark.parametrize("dtype", ["int8", "int16"])
@pytest.mark.parametrize("op", ["RELU"])
@pytest.mark.parametrize("scales", range(len(SCALES)))
def test_relu(tflm, dtype, op, scales):
    xs, xz, ys, yz = SCALES[scales]
    if dtype == "int16":
        xz = yz = 0
    x = all_values(dtype)
    fn = activations.relu if op == "RELU" else activations.relu_n1_to_1
    check(tflm, *_unary(op, dtype, x, dict(scale=xs, zero_point=xz), dict(scale=ys, zero_point=yz),
                        lambda v: fn(v, x_scale=xs, x_zero_point=xz, y_scale=ys, y_zero_point=yz)))


@pytest.mark.parametrize("dtype", ["int8"])
@pytest.mark.parametrize("scales", [(0.05, 3), (0.02, -100), (0.1, 0)])
def test_relu6(tflm, dtype, scales):
    xs, xz = scales
    x = all_values(dtype)
    q = dict(scale=xs, zero_point=xz)
    check(tflm, *_unary("RELU6", dtype, x, dict(q), dict(q),
                        lambda v: activations.relu6(v, x_scale=xs, x_zero_point=xz)))


@pytest.mark.parametrize("dtype", ["int8", "int16"])
@pytest.mark.parametrize("alpha", [0.2, 0.01, 1.5])
@pytest.mark.parametrize("scales", range(len(SCALES)))
def test_leaky_relu(tflm, dtype, alpha, scales):
    xs, xz, ys, yz = SCALES[scales]
    if dtype == "int16":
        xz = yz = 0
    x = all_values(dtype)
    check(tflm, *_unary("LEAKY_RELU", dtype, x, dict(scale=xs, zero_point=xz),
                        dict(scale=ys, zero_point=yz),
                        lambda v: activations.leaky_relu(v, alpha=alpha, x_scale=xs,
                                                         x_zero_point=xz, y_scale=ys,
                                                         y_zero_point=yz),
                        alpha=alpha))


@pytest.mark.parametrize("scales", [(0.05, 3, 0.05, 3), (0.02, -10, 0.03, -128), (0.1, 0, 0.01, 5),
                                    (0.2, 20, 0.5, -100), (0.001, 0, 0.002, 0)])
def test_hard_swish(tflm, scales):
    xs, xz, ys, yz = scales
    x = all_values("int8")
    check(tflm, *_unary("HARD_SWISH", "int8", x, dict(scale=xs, zero_point=xz),
                        dict(scale=ys, zero_point=yz),
                        lambda v: activations.hard_swish(v, x_scale=xs, x_zero_point=xz,
                                                         y_scale=ys, y_zero_point=yz)))


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
@pytest.mark.parametrize("xq", [(0.05, 3), (0.1, -128), (0.01, 0), (0.2, 40)])
def test_logistic_tanh_int8(tflm, op, xq):
    xs, xz = xq
    ys, yz = (1 / 256, -128) if op == "LOGISTIC" else (1 / 128, 0)
    fn = activations.logistic if op == "LOGISTIC" else activations.tanh
    x = all_values("int8")
    check(tflm, *_unary(op, "int8", x, dict(scale=xs, zero_point=xz), dict(scale=ys, zero_point=yz),
                        lambda v: fn(v, x_scale=xs, x_zero_point=xz)))


@pytest.mark.parametrize("op", ["RELU", "RELU6", "LEAKY_RELU", "HARD_SWISH",
                                "LOGISTIC", "TANH"])
def test_float(tflm, op):
    x = (np.random.default_rng(1).standard_normal((2, 50)) * 4).astype(np.float32)
    fns = dict(RELU=activations.relu, RELU6=activations.relu6,
               RELU_N1_TO_1=activations.relu_n1_to_1,
               LEAKY_RELU=lambda v: activations.leaky_relu(v, alpha=0.2),
               HARD_SWISH=activations.hard_swish, LOGISTIC=activations.logistic,
               TANH=activations.tanh)
    opts = dict(alpha=0.2) if op == "LEAKY_RELU" else {}
    check(tflm, *_unary(op, "float32", x, {}, {}, fns[op], **opts))


@pytest.mark.parametrize("out", [("int8", 0.05, 3), ("int8", 0.013, -128), ("int16", 0.001, 0)])
def test_quantize_float(tflm, out):
    dtype, s, z = out
    x = (np.random.default_rng(2).standard_normal((3, 40)) * 3).astype(np.float32)
    x[0, :4] = [0.025, -0.025, 1e6, -1e6]  # ties and saturation
    check(tflm, *_unary("QUANTIZE", "float32", x, {}, dict(scale=s, zero_point=z, dtype=dtype),
                        lambda v: quantize(v, y_scale=s, y_zero_point=z, out_dtype=dtype)))


REQUANT = [("int8", 0.05, 3, "int8", 0.03, -7), ("int16", 0.001, 0, "int8", 0.05, 2),
           ("int8", 0.05, 3, "int16", 0.0005, 0), ("int16", 0.001, 0, "int16", 0.0007, 0)]


@pytest.mark.parametrize("case", range(len(REQUANT)))
def test_requantize(tflm, case):
    di, si, zi, do, so, zo = REQUANT[case]
    x = all_values(di)
    check(tflm, *_unary("QUANTIZE", di, x, dict(scale=si, zero_point=zi),
                        dict(scale=so, zero_point=zo, dtype=do),
                        lambda v: quantize(v, x_scale=si, x_zero_point=zi, y_scale=so,
                                           y_zero_point=zo, out_dtype=do)))


@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_dequantize(tflm, dtype):
    x = all_values(dtype)
    s, z = (0.0371, -5) if dtype == "int8" else (0.00123, 0)
    check(tflm, *_unary("DEQUANTIZE", dtype, x, dict(scale=s, zero_point=z), dict(dtype="float32"),
                        lambda v: dequantize(v, x_scale=s, x_zero_point=z)))


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
@pytest.mark.parametrize("xs", [2.0 ** -12, 2.0 ** -11, 2.0 ** -10, 0.0003, 0.001])
def test_logistic_tanh_int16(tflm, op, xs):
    fn = activations.logistic if op == "LOGISTIC" else activations.tanh
    x = np.arange(-32768, 32768, 7, dtype=np.int64).astype(np.int16)[None]
    x[0, -1] = 32767
    model, inputs, got = _unary(op, "int16", x, dict(scale=xs, zero_point=0),
                                dict(scale=1 / 32768, zero_point=0), lambda v: fn(v, x_scale=xs))
    check(tflm, model, inputs, got)
    # the whole interpreter, as `aot interpret` runs a standalone int16 operator
    (whole,) = run(parse_tflite(model), inputs)
    np.testing.assert_array_equal(whole, got)


def test_sigmoid_table_entries(tflm):
    """Every entry of the int16 sigmoid table, read back through TANH.

    With this input scale the kernel's rescaled input is exactly 2x, so the
    input 128 * i lands on table entry i with no interpolation.
    """
    from aot.quant.sigmoid_table import SIGMOID_TABLE_UINT16

    scale = np.nextafter(np.float32(2 / 12288), np.float32(1))
    x = (128 * np.arange(255)).astype(np.int16)[None]
    model, inputs, got = _unary("TANH", "int16", x, dict(scale=scale, zero_point=0),
                                dict(scale=1 / 32768, zero_point=0),
                                lambda v: activations.tanh(v, x_scale=scale))
    want = tflm.run1(model, *inputs)
    np.testing.assert_array_equal(want[0].astype(np.int64) + 32768, SIGMOID_TABLE_UINT16[:255])
    np.testing.assert_array_equal(got, want)
