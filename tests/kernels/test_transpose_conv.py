"""TRANSPOSE_CONV: imported, run by the reference and compiled to C on the
host, bit for bit as TFLM runs it: float32 (TFLM's order of additions),
int8 per channel with an input zero point, int16 with an int64 bias;
SAME and VALID padding, strides 1 to 3, with and without a bias."""

from __future__ import annotations

import numpy as np
import pytest

from aot.frontend import load_model
from aot.frontend.errors import ModelError
from support.parity import assert_matches_tflm
from support.tflite_builder import ModelBuilder


def _model(rng, dtype, in_hw, out_hw, k, stride, padding, cin=3, cout=4, bias=True,
           bias_type=None):
    mb = ModelBuilder()
    n = 1
    wv = rng.integers(-127, 128, (cout, k[0], k[1], cin)).astype(np.int8)
    if dtype == "float32":
        x = mb.input("x", [n, *in_hw, cin], "float32")
        w = mb.const("w", rng.normal(size=wv.shape).astype(np.float32))
        b = mb.const("b", rng.normal(size=cout).astype(np.float32)) if bias else -1
        y = mb.output("y", [n, *out_hw, cout], "float32")
    else:
        xq = {"scale": 0.05, "zero_point": 4 if dtype == "int8" else 0}
        ws = rng.uniform(0.002, 0.01, cout).astype(np.float32)
        x = mb.input("x", [n, *in_hw, cin], dtype, **xq)
        w = mb.const("w", wv, "int8", scale=ws, zero_point=0, axis=0)
        bt = bias_type or ("int32" if dtype == "int8" else "int64")
        b = mb.const("b", rng.integers(-3000, 3000, cout), bt, scale=0.05 * ws, zero_point=0,
                     axis=0) if bias else -1
        y = mb.output("y", [n, *out_hw, cout], dtype, scale=0.08,
                      zero_point=-3 if dtype == "int8" else 0)
    shape = mb.const("shape", np.array([n, *out_hw, cout]), "int32")
    inputs = [shape, w, x] + ([b] if bias else [])  # TFLM counts inputs: no -1 slot
    mb.op("TRANSPOSE_CONV", inputs, [y], padding=padding, stride_w=stride[1],
          stride_h=stride[0])
    return mb.finish()


@pytest.mark.parametrize("in_hw, out_hw, k, stride, padding", [
    ((4, 4), (8, 8), (3, 3), (2, 2), "SAME"),
    ((4, 3), (7, 5), (3, 3), (2, 2), "SAME"),
    ((3, 3), (7, 7), (3, 3), (2, 2), "VALID"),
    ((5, 4), (5, 4), (3, 2), (1, 1), "SAME"),
    ((3, 2), (9, 7), (4, 3), (3, 3), "VALID"),
])
@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.one_fast
def test_matches_tflm(in_hw, out_hw, k, stride, padding, dtype, bias, tflm,  # noqa: F811
                      tmp_path):
    rng = np.random.default_rng(21)
    model = _model(rng, dtype, in_hw, out_hw, k, stride, padding, bias=bias)
    shape = (1, *in_hw, 3)
    if dtype == "float32":
        x = rng.normal(size=shape).astype(np.float32)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max + 1, shape).astype(dtype)
    assert_matches_tflm(tflm, model, [x], tmp_path)


def test_fused_activation_is_refused_at_import(tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [1, 2, 2, 1], "float32")
    w = mb.const("w", np.ones((1, 3, 3, 1), np.float32))
    y = mb.output("y", [1, 4, 4, 1], "float32")
    mb.op("TRANSPOSE_CONV", [mb.const("s", np.array([1, 4, 4, 1]), "int32"), w, x], [y],
          padding="SAME", stride_w=2, stride_h=2, fused_activation_function="RELU")
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=r"operator 0 \(TRANSPOSE_CONV\): fused activation "
                                         r"relu: not supported yet"):
        load_model(path)


def test_int16_with_an_int16_bias_matches_tflm(tflm, tmp_path):  # noqa: F811
    rng = np.random.default_rng(22)
    model = _model(rng, "int16", (4, 4), (8, 8), (3, 3), (2, 2), "SAME", bias_type="int16")
    x = rng.integers(-32768, 32768, (1, 4, 4, 3)).astype(np.int16)
    assert_matches_tflm(tflm, model, [x], tmp_path)


def test_int16_with_an_int32_bias_is_refused_at_import(tmp_path):
    rng = np.random.default_rng(22)
    path = tmp_path / "m.tflite"
    path.write_bytes(_model(rng, "int16", (4, 4), (8, 8), (3, 3), (2, 2), "SAME",
                            bias_type="int32"))
    with pytest.raises(ModelError, match=r"operator 0 \(TRANSPOSE_CONV\): an int16 layer needs "
                                         r"an int64 \(or constant int16\) bias, got int32"):
        load_model(path)
