"""LOG_SOFTMAX and L2_NORMALIZATION (float32): imported, run by the reference
and compiled to C on the host, bit for bit as TFLM runs them; their int8
variants are refused at import (not supported yet)."""

from __future__ import annotations

import numpy as np
import pytest

from aot.frontend import load_model
from aot.frontend.errors import ModelError
from support.fixtures import tflm  # noqa: F401  (pytest fixture)
from support.parity import assert_matches_tflm
from support.tflite_builder import ModelBuilder


@pytest.mark.parametrize("op", ["LOG_SOFTMAX", "L2_NORMALIZATION"])
@pytest.mark.parametrize("shape", [(3, 10), (2, 4, 7), (1, 1, 1, 33)])
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


@pytest.mark.parametrize("op", ["LOG_SOFTMAX", "L2_NORMALIZATION"])
def test_int8_is_refused_at_import(op, tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [2, 4], "int8", scale=0.1)
    y = mb.output("y", [2, 4], "int8", scale=1 / 128)
    mb.op(op, [x], [y])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=rf"operator 0 \({op}\): int8 input: not supported yet "
                                         r"\(float32 only\)"):
        load_model(path)
