"""int8 RELU and RELU6 as standalone operators: imported, run by the
reference and compiled to C on the host, bit for bit as TFLM runs them
(RELU requantizes to the output's scale; RELU6 clamps on the input's);
int16, without a kernel yet, is refused at import."""

from __future__ import annotations

import numpy as np
import pytest

from aot.frontend import load_model
from aot.frontend.errors import ModelError
from support.fixtures import tflm  # noqa: F401  (pytest fixture)
from support.parity import assert_matches_tflm
from support.tflite_builder import ModelBuilder


@pytest.mark.parametrize("op", ["RELU", "RELU6"])
@pytest.mark.parametrize("qx, qy", [((0.05, -10), (0.05, -10)), ((0.05, 3), (0.03, -128)),
                                    ((0.1, 127), (0.2, 0))])
def test_matches_tflm(op, qx, qy, tflm, tmp_path):  # noqa: F811
    mb = ModelBuilder()
    x = mb.input("x", [2, 128], "int8", scale=qx[0], zero_point=qx[1])
    y = mb.output("y", [2, 128], "int8", scale=qy[0], zero_point=qy[1])
    mb.op(op, [x], [y])
    xv = np.arange(-128, 128, dtype=np.int8).reshape(2, 128)  # every int8 value
    assert_matches_tflm(tflm, mb.finish(), [xv], tmp_path)


@pytest.mark.parametrize("op", ["LEAKY_RELU"])  # int16 RELU, RELU6: test_int16_layers.py
def test_int16_is_refused_at_import(op, tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [4], "int16", scale=0.1)
    y = mb.output("y", [4], "int16", scale=0.1)
    mb.op(op, [x], [y])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=rf"operator 0 \({op}\): int16 input: not supported yet "
                                         r"\(float32 and int8\)"):
        load_model(path)
