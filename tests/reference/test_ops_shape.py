"""CONCATENATION, PAD, STRIDED_SLICE, TRANSPOSE and MEAN against TFLM."""

from __future__ import annotations

import numpy as np
import pytest

from aot.reference.ops import shape
from aot.reference.ops.reduce import mean
from support.quant_cases import rand_int
from support.tflite_builder import ModelBuilder


def check(tflm, model, inputs, got):
    want = tflm.run1(model, *inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        diff = np.abs(got.astype(np.int64) - want)
        assert diff.max() == 0, f"{np.count_nonzero(diff)} values differ, max {diff.max()}"


def _data(rng, shp, dtype):
    if dtype == "float32":
        return rng.standard_normal(shp).astype(np.float32)
    return rand_int(rng, shp, dtype)


def _q(dtype, scale=0.05, zp=3):
    if dtype == "float32":
        return {}
    return dict(scale=scale, zero_point=zp if dtype == "int8" else 0)


DTYPES = ["int8", "int16", "float32"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, 3, -1])
def test_concatenation(tflm, dtype, axis):
    rng = np.random.default_rng(axis + 5)
    a, b = _data(rng, (2, 3, 4, 5), dtype), _data(rng, (2, 3, 4, 5), dtype)
    got = shape.concatenation([a, b, a], axis=axis)
    mb = ModelBuilder()
    ai = mb.input("a", a.shape, dtype, **_q(dtype))
    bi = mb.input("b", b.shape, dtype, **_q(dtype))
    yi = mb.output("y", got.shape, dtype, **_q(dtype))
    mb.op("CONCATENATION", [ai, bi, ai], [yi], axis=axis)
    check(tflm, mb.finish(), [a, b], got)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pads", [[[0, 0], [1, 1], [2, 0], [0, 0]],
                                  [[0, 1], [0, 0], [1, 2], [3, 0]]])
def test_pad(tflm, dtype, pads):
    rng = np.random.default_rng(3)
    x = _data(rng, (1, 3, 4, 2), dtype)
    q = _q(dtype)
    got = shape.pad(x, pads, pad_value=q.get("zero_point", 0))
    mb = ModelBuilder()
    xi = mb.input("x", x.shape, dtype, **q)
    pi = mb.const("p", np.array(pads, dtype=np.int32))
    yi = mb.output("y", got.shape, dtype, **q)
    mb.op("PAD", [xi, pi], [yi])
    check(tflm, mb.finish(), [x], got)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("perm", [(0, 2, 1, 3), (3, 2, 1, 0), (0, 3, 1, 2)])
def test_transpose(tflm, dtype, perm):
    rng = np.random.default_rng(4)
    x = _data(rng, (2, 3, 4, 5), dtype)
    got = shape.transpose(x, perm)
    mb = ModelBuilder()
    xi = mb.input("x", x.shape, dtype, **_q(dtype))
    pi = mb.const("perm", np.array(perm, dtype=np.int32))
    yi = mb.output("y", got.shape, dtype, **_q(dtype))
    mb.op("TRANSPOSE", [xi, pi], [yi])
    check(tflm, mb.finish(), [x], got)


SLICES = [
    dict(begin=[0, 1, 0, 0], end=[1, 3, 4, 5], strides=[1, 1, 1, 1]),
    dict(begin=[0, 0, 1, 0], end=[2, 3, 4, 5], strides=[1, 2, 2, 3]),
    dict(begin=[0, -1, 0, 4], end=[2, 0, 4, 0], strides=[1, -1, 1, -2]),
    dict(begin=[1, 5, 0, 0], end=[0, 2, 2, 0], strides=[1, 1, 1, 1], begin_mask=0b0010,
         end_mask=0b1001),
    dict(begin=[1, 0, 2, 0], end=[2, 3, 3, 5], strides=[1, 1, 1, 1], shrink_axis_mask=0b0101),
    dict(begin=[-2, -3, -100, 0], end=[100, -1, 100, -1], strides=[1, 1, 1, 1]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(SLICES)))
def test_strided_slice(tflm, dtype, case):
    c = dict(SLICES[case])
    rng = np.random.default_rng(case)
    x = _data(rng, (2, 3, 4, 5), dtype)
    begin, end, strides = c.pop("begin"), c.pop("end"), c.pop("strides")
    got = shape.strided_slice(x, begin, end, strides, **c)
    mb = ModelBuilder()
    xi = mb.input("x", x.shape, dtype, **_q(dtype))
    ins = [mb.const(n, np.array(v, dtype=np.int32)) for n, v in
           (("begin", begin), ("end", end), ("strides", strides))]
    yi = mb.output("y", got.shape, dtype, **_q(dtype))
    mb.op("STRIDED_SLICE", [xi, *ins], [yi], **c)
    check(tflm, mb.finish(), [x], got)


MEANS = [
    dict(axis=[1, 2], keep_dims=True),
    dict(axis=[1, 2], keep_dims=False),
    dict(axis=[3], keep_dims=False),
    dict(axis=[1], keep_dims=True),
    dict(axis=[-1, 0], keep_dims=False),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("requant", [False, True])
@pytest.mark.parametrize("case", range(len(MEANS)))
def test_mean(tflm, dtype, requant, case):
    c = MEANS[case]
    rng = np.random.default_rng(case)
    x = _data(rng, (2, 5, 7, 3), dtype)
    qx = _q(dtype, 0.05, 3)
    qy = _q(dtype, 0.031, -7) if requant else dict(qx)
    kw = {}
    if qx:
        kw = dict(x_scale=qx["scale"], x_zero_point=qx["zero_point"], y_scale=qy["scale"],
                  y_zero_point=qy["zero_point"])
    got = mean(x, c["axis"], keep_dims=c["keep_dims"], **kw)
    mb = ModelBuilder()
    xi = mb.input("x", x.shape, dtype, **qx)
    ai = mb.const("axis", np.array(c["axis"], dtype=np.int32))
    yi = mb.output("y", got.shape, dtype, **qy)
    mb.op("MEAN", [xi, ai], [yi], keep_dims=c["keep_dims"])
    check(tflm, mb.finish(), [x], got)


def test_strided_slice_offset_refused():
    # TFLM ignores the offset flag, so the kernel refuses it.
    with pytest.raises(NotImplementedError, match="offset"):
        shape.strided_slice(np.zeros((2, 3)), [0, 0], [1, 1], [1, 1], offset=True)
