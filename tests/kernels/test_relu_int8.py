"""int8 RELU and RELU6 as standalone operators: imported, run by the
reference and compiled to C on the host, bit for bit as TFLM runs them
(RELU requantizes to the output's scale; RELU6 clamps on the input's).
int16: tests/kernels/test_int16_layers.py."""

from __future__ import annotations

import numpy as np
import pytest
from support.parity import assert_matches_tflm
from support.tflite_builder import ModelBuilder


@pytest.mark.parametrize("op", ["RELU", "RELU6"])
@pytest.mark.parametrize("qx, qy", [((0.05, -10), (0.05, -10)), ((0.05, 3), (0.03, -128)),
                                    ((0.1, 127), (0.2, 0))])
@pytest.mark.one_fast
def test_matches_tflm(op, qx, qy, tflm, tmp_path):  # noqa: F811
    mb = ModelBuilder()
    x = mb.input("x", [2, 128], "int8", scale=qx[0], zero_point=qx[1])
    y = mb.output("y", [2, 128], "int8", scale=qy[0], zero_point=qy[1])
    mb.op(op, [x], [y])
    xv = np.arange(-128, 128, dtype=np.int8).reshape(2, 128)  # every int8 value
    assert_matches_tflm(tflm, mb.finish(), [xv], tmp_path)

