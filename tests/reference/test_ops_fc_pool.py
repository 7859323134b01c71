"""FULLY_CONNECTED, AVERAGE_POOL_2D and MAX_POOL_2D against TFLM."""

from __future__ import annotations

import numpy as np
import pytest

from aot.reference.ops.fully_connected import fully_connected
from aot.reference.ops.pool import average_pool2d, max_pool2d
from support.quant_cases import bias_scale, rand_int, weight_scales
from support.tflite_builder import ModelBuilder


def check(tflm, model, inputs, got):
    want = tflm.run1(model, *inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        diff = np.abs(got.astype(np.int64) - want)
        assert diff.max() == 0, f"{np.count_nonzero(diff)} values differ, max {diff.max()}"


FC_VARIANTS = [
    dict(),
    dict(act="RELU"),
    dict(act="RELU6"),
    dict(xshape=(3, 16)),
    dict(xshape=(2, 3, 16), keep_num_dims=True),
    dict(xshape=(1, 2, 2, 4)),
    dict(bias=False),
    dict(per_channel=True),
]


def _fc_case(seed, dtype, xshape=(1, 16), units=5, act=None, keep_num_dims=False,
             bias=True, per_channel=False):
    rng = np.random.default_rng(seed)
    depth = xshape[-1]
    yshape = xshape[:-1] + (units,) if keep_num_dims else (int(np.prod(xshape)) // depth, units)
    mb = ModelBuilder()
    if dtype == "float32":
        x = rng.standard_normal(xshape).astype(np.float32)
        w = rng.standard_normal((units, depth)).astype(np.float32)
        b = rng.standard_normal(units).astype(np.float32)
        xi = mb.input("x", xshape, dtype)
        wi = mb.const("w", w)
        bi = mb.const("b", b) if bias else -1
        yi = mb.output("y", yshape, dtype)
        kw = {}
    else:
        x_scale, y_scale = np.float32(rng.uniform(0.01, 0.1)), np.float32(rng.uniform(0.05, 0.5))
        x_zp = int(rng.integers(-20, 20)) if dtype == "int8" else 0
        y_zp = int(rng.integers(-20, 20)) if dtype == "int8" else 0
        x = rand_int(rng, xshape, dtype)
        w = rand_int(rng, (units, depth), "int8", edges=False)
        w[w == -128] = -127
        w_scale = weight_scales(rng, units, per_channel)
        b = rng.integers(-3000, 3000, size=units).astype("int32" if dtype == "int8" else "int64")
        xi = mb.input("x", xshape, dtype, scale=x_scale, zero_point=x_zp)
        wi = mb.const("w", w, scale=w_scale, zero_point=0)
        bi = mb.const("b", b, scale=bias_scale(x_scale, w_scale), zero_point=0) if bias else -1
        yi = mb.output("y", yshape, dtype, scale=y_scale, zero_point=y_zp)
        kw = dict(x_zero_point=x_zp, x_scale=x_scale, w_scale=w_scale, y_scale=y_scale,
                  y_zero_point=y_zp)
    mb.op("FULLY_CONNECTED", [xi, wi, bi], [yi], fused_activation_function=act or "NONE",
          keep_num_dims=keep_num_dims)
    got = fully_connected(x, w, b if bias else None, keep_num_dims=keep_num_dims,
                          activation=act, **kw)
    return mb.finish(), [x], got


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.parametrize("variant", range(len(FC_VARIANTS)))
def test_fully_connected(tflm, dtype, variant):
    check(tflm, *_fc_case(variant, dtype, **FC_VARIANTS[variant]))


POOL_VARIANTS = [
    dict(),
    dict(padding="SAME"),
    dict(stride=(1, 1), padding="SAME"),
    dict(filt=(3, 3), stride=(2, 2), padding="SAME"),
    dict(filt=(3, 2), stride=(1, 2)),
    dict(filt=(7, 6), stride=(1, 1), hw=(7, 6)),
    dict(act="RELU"),
    dict(act="RELU6", padding="SAME"),
]


def _pool_case(seed, op, dtype, hw=(7, 6), c=3, filt=(2, 2), stride=(2, 2), padding="VALID",
               act=None):
    rng = np.random.default_rng(seed)
    if padding == "SAME":
        oh, ow = -(-hw[0] // stride[0]), -(-hw[1] // stride[1])
    else:
        oh, ow = (hw[0] - filt[0]) // stride[0] + 1, (hw[1] - filt[1]) // stride[1] + 1
    mb = ModelBuilder()
    if dtype == "float32":
        x = rng.standard_normal((1, *hw, c)).astype(np.float32)
        q = {}
        kw = {}
    else:
        x = rand_int(rng, (1, *hw, c), dtype)
        scale = np.float32(rng.uniform(0.01, 0.1))
        zp = int(rng.integers(-20, 20)) if dtype == "int8" else 0
        q = dict(scale=scale, zero_point=zp)
        kw = dict(y_scale=scale, y_zero_point=zp)
    xi = mb.input("x", x.shape, dtype, **q)
    yi = mb.output("y", (1, oh, ow, c), dtype, **q)
    mb.op(op, [xi], [yi], padding=padding, stride_h=stride[0], stride_w=stride[1],
          filter_height=filt[0], filter_width=filt[1], fused_activation_function=act or "NONE")
    fn = average_pool2d if op == "AVERAGE_POOL_2D" else max_pool2d
    got = fn(x, filt, stride=stride, padding=padding, activation=act, **kw)
    return mb.finish(), [x], got


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.parametrize("variant", range(len(POOL_VARIANTS)))
def test_pool(tflm, op, dtype, variant):
    check(tflm, *_pool_case(variant, op, dtype, **POOL_VARIANTS[variant]))
