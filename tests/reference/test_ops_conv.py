"""CONV_2D and DEPTHWISE_CONV_2D against TFLM, bit for bit (float: 1e-5 relative)."""

from __future__ import annotations

import numpy as np
import pytest

from aot.reference.ops.conv import conv2d, depthwise_conv2d
from support.quant_cases import bias_scale, rand_int, weight_scales
from support.tflite_builder import ModelBuilder

ACTS = [None, "RELU", "RELU6", "RELU_N1_TO_1"]


def _out_hw(h, w, k, stride, dilation, padding):
    eff = [(k[i] - 1) * dilation[i] + 1 for i in range(2)]
    if padding == "SAME":
        return -(-h // stride[0]), -(-w // stride[1])
    return (h - eff[0]) // stride[0] + 1, (w - eff[1]) // stride[1] + 1


def _case(seed, *, depthwise, dtype="int8", c=3, m=2, o=4, k=(3, 3), hw=(7, 6),
          stride=(1, 1), dilation=(1, 1), padding="SAME", act=None, per_channel=True,
          bias_dtype=None, with_bias=True):
    rng = np.random.default_rng(seed)
    oc = c * m if depthwise else o
    oh, ow = _out_hw(*hw, k, stride, dilation, padding)
    mb = ModelBuilder()
    attrs = dict(padding=padding, stride_h=stride[0], stride_w=stride[1],
                 dilation_h_factor=dilation[0], dilation_w_factor=dilation[1],
                 fused_activation_function=act or "NONE")
    if dtype == "float32":
        x = rng.standard_normal((1, *hw, c)).astype(np.float32)
        wshape = (1, *k, oc) if depthwise else (o, *k, c)
        w = rng.standard_normal(wshape).astype(np.float32)
        b = rng.standard_normal(oc).astype(np.float32)
        xi = mb.input("x", x.shape, "float32")
        wi = mb.const("w", w)
        bi = mb.const("b", b)
        yi = mb.output("y", (1, oh, ow, oc), "float32")
        kw = {}
    else:
        x_scale, y_scale = np.float32(rng.uniform(0.01, 0.1)), np.float32(rng.uniform(0.05, 0.5))
        x_zp = int(rng.integers(-20, 20)) if dtype == "int8" else 0
        y_zp = int(rng.integers(-20, 20)) if dtype == "int8" else 0
        x = rand_int(rng, (1, *hw, c), dtype)
        wshape = (1, *k, oc) if depthwise else (o, *k, c)
        w = rand_int(rng, wshape, "int8", edges=False)
        w[w == -128] = -127
        w_scale = weight_scales(rng, oc, per_channel)
        bias_dtype = bias_dtype or ("int32" if dtype == "int8" else "int64")
        bmax = 2000 if dtype == "int8" else 200000
        b = rng.integers(-bmax, bmax, size=oc).astype(bias_dtype)
        axis = 3 if depthwise else 0
        xi = mb.input("x", x.shape, dtype, scale=x_scale, zero_point=x_zp)
        wi = mb.const("w", w, scale=w_scale, zero_point=0, axis=axis)
        bi = mb.const("b", b, scale=bias_scale(x_scale, w_scale), zero_point=0)
        yi = mb.output("y", (1, oh, ow, oc), dtype, scale=y_scale, zero_point=y_zp)
        kw = dict(x_zero_point=x_zp, x_scale=x_scale, w_scale=w_scale, y_scale=y_scale,
                  y_zero_point=y_zp)
    if not with_bias:
        bi, b = -1, None
    if depthwise:
        mb.op("DEPTHWISE_CONV_2D", [xi, wi, bi], [yi], depth_multiplier=m, **attrs)
        got = depthwise_conv2d(x, w, b, stride=stride, dilation=dilation, padding=padding,
                               activation=act, **kw)
    else:
        mb.op("CONV_2D", [xi, wi, bi], [yi], **attrs)
        got = conv2d(x, w, b, stride=stride, dilation=dilation, padding=padding,
                     activation=act, **kw)
    return mb.finish(), x, got


VARIANTS = [
    dict(),
    dict(padding="VALID"),
    dict(stride=(2, 2)),
    dict(stride=(2, 1), padding="VALID", k=(3, 2)),
    dict(dilation=(2, 2)),
    dict(dilation=(1, 2), padding="VALID"),
    dict(k=(1, 1)),
    dict(hw=(8, 8), stride=(2, 2), k=(4, 4)),
    dict(per_channel=False),
    *[dict(act=a) for a in ACTS[1:]],
]


def _check(tflm, model, x, got):
    want = tflm.run1(model, x)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        diff = np.abs(got.astype(np.int64) - want)
        assert diff.max() == 0, f"{np.count_nonzero(diff)} values differ, max {diff.max()}"


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.parametrize("variant", range(len(VARIANTS)))
def test_conv2d(tflm, dtype, variant):
    _check(tflm, *_case(variant, depthwise=False, dtype=dtype, **VARIANTS[variant]))


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.parametrize("variant", range(len(VARIANTS)))
def test_depthwise_conv2d(tflm, dtype, variant):
    _check(tflm, *_case(100 + variant, depthwise=True, dtype=dtype, **VARIANTS[variant]))


@pytest.mark.parametrize("m", [1, 3])
def test_depthwise_multiplier(tflm, m):
    _check(tflm, *_case(7, depthwise=True, c=4, m=m))


def test_conv2d_int16_int32_bias(tflm):
    _check(tflm, *_case(3, depthwise=False, dtype="int16", bias_dtype="int32"))


# Only CONV_2D: the pinned TFLM segfaults on a DEPTHWISE_CONV_2D without bias.
@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
def test_conv2d_without_bias(tflm, dtype):
    _check(tflm, *_case(9, depthwise=False, dtype=dtype, with_bias=False))


def test_oracle_survives_a_tflm_crash(tflm):
    """TFLM segfaults on a bias-less DEPTHWISE_CONV_2D: the oracle reports it
    as OracleCrash and serves the next request from a fresh worker."""
    from support.oracle import OracleCrash

    model, x, _ = _case(9, depthwise=True, with_bias=False)
    with pytest.raises(OracleCrash):
        tflm.run1(model, x)
    _check(tflm, *_case(9, depthwise=True))
