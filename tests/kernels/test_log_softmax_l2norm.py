"""LOG_SOFTMAX and L2_NORMALIZATION (float32 and int8, TFLM's fixed-point
exp, log and inverse square root): imported, run by the reference and
compiled to C on the host, bit for bit as TFLM runs them; int8 outputs
quantized otherwise than TFLM requires are refused at import."""

from __future__ import annotations

import numpy as np
import pytest

from aot.frontend import load_model
from aot.frontend.errors import ModelError
from support.parity import assert_matches_tflm
from support.tflite_builder import ModelBuilder


@pytest.mark.parametrize("op", ["LOG_SOFTMAX", "L2_NORMALIZATION"])
@pytest.mark.parametrize("shape", [(3, 10), (2, 4, 7), (1, 1, 1, 33)])
@pytest.mark.one_fast
def test_matches_tflm(op, shape, tflm, tmp_path):  # noqa: F811
    mb = ModelBuilder()
    x = mb.input("x", list(shape), "float32")
    y = mb.output("y", list(shape), "float32")
    mb.op(op, [x], [y])
    xv = (np.random.default_rng(5).normal(size=shape) * 3).astype(np.float32)
    assert_matches_tflm(tflm, mb.finish(), [xv], tmp_path)


def test_l2_normalization_of_zeros_divides_by_epsilon(tflm, tmp_path):  # noqa: F811
    mb = ModelBuilder()
    x = mb.input("x", [2, 3], "float32")
    y = mb.output("y", [2, 3], "float32")
    mb.op("L2_NORMALIZATION", [x], [y])
    xv = np.array([[0, 0, 0], [1e-8, 0, -2e-8]], np.float32)
    assert_matches_tflm(tflm, mb.finish(), [xv], tmp_path)


@pytest.mark.parametrize("shape, zp, spread", [
    ((3, 10), 5, 128), ((2, 4, 7), -20, 128), ((1, 33), 0, 2),  # sums of 0 and 1 included
    ((4, 300), 1, 128),                                       # sums of 2^22 and more
])
@pytest.mark.one_fast
def test_l2_normalization_int8_matches_tflm(shape, zp, spread, tflm, tmp_path):  # noqa: F811
    mb = ModelBuilder()
    x = mb.input("x", list(shape), "int8", scale=0.07, zero_point=zp)
    y = mb.output("y", list(shape), "int8", scale=1 / 128, zero_point=0)
    mb.op("L2_NORMALIZATION", [x], [y])
    rng = np.random.default_rng(8)
    xv = np.clip(zp + rng.integers(-spread, spread, shape), -128, 127).astype(np.int8)
    xv.reshape(-1, shape[-1])[0] = zp  # a row of zeros
    assert_matches_tflm(tflm, mb.finish(), [xv], tmp_path)


@pytest.mark.parametrize("shape, scale, zp, spread", [
    ((3, 10), 0.1, 5, 128), ((2, 4, 7), 0.02, -20, 128), ((1, 40), 0.5, 0, 128),
    ((2, 5), 0.05, 3, 2),                    # near-equal rows: large sums of exponentials
    ((1, 1, 1, 300), 0.08, -1, 128),
])
@pytest.mark.one_fast
def test_log_softmax_int8_matches_tflm(shape, scale, zp, spread, tflm, tmp_path):  # noqa: F811
    mb = ModelBuilder()
    x = mb.input("x", list(shape), "int8", scale=scale, zero_point=zp)
    y = mb.output("y", list(shape), "int8", scale=16 / 256, zero_point=127)
    mb.op("LOG_SOFTMAX", [x], [y])
    rng = np.random.default_rng(9)
    xv = np.clip(zp + rng.integers(-spread, spread, shape), -128, 127).astype(np.int8)
    assert_matches_tflm(tflm, mb.finish(), [xv], tmp_path)


def test_int8_log_softmax_needs_tflms_output_quantization(tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [2, 4], "int8", scale=0.1)
    y = mb.output("y", [2, 4], "int8", scale=1 / 256, zero_point=-128)
    mb.op("LOG_SOFTMAX", [x], [y])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=r"operator 0 \(LOG_SOFTMAX\): an int8 output needs "
                                         r"scale 16/256 and zero point 127"):
        load_model(path)


def test_int8_l2_normalization_needs_tflms_output_scale(tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [2, 4], "int8", scale=0.1)
    y = mb.output("y", [2, 4], "int8", scale=0.01)
    mb.op("L2_NORMALIZATION", [x], [y])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=r"operator 0 \(L2_NORMALIZATION\): an int8 output "
                                         r"needs scale 1/128 and zero point 0"):
        load_model(path)
