"""RESIZE_BILINEAR: imported, run by the reference and compiled to C on the
host, bit for bit as TFLM runs it: float32 (TFLite's float32 taps and
order of additions) and int8 (TFLite's Q10 taps and Q20 rounding), up and
down, with align_corners and with half_pixel_centers."""

from __future__ import annotations

import numpy as np
import pytest

from aot.frontend import load_model
from aot.frontend.errors import ModelError
from support.parity import assert_matches_tflm
from support.tflite_builder import ModelBuilder

Q = {"scale": 0.1, "zero_point": -7}


def _model(dtype, in_hw, out_hw, align, half, c=3):
    q = Q if dtype == "int8" else {}
    mb = ModelBuilder()
    x = mb.input("x", [2, *in_hw, c], dtype, **q)
    y = mb.output("y", [2, *out_hw, c], dtype, **q)
    mb.op("RESIZE_BILINEAR", [x, mb.const("size", np.array(out_hw), "int32")], [y],
          align_corners=align, half_pixel_centers=half)
    return mb.finish()


@pytest.mark.parametrize("in_hw, out_hw", [((4, 5), (8, 10)), ((5, 3), (7, 11)),
                                           ((9, 8), (4, 3)), ((3, 3), (3, 3))])
@pytest.mark.parametrize("align, half", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.one_fast
def test_matches_tflm(in_hw, out_hw, align, half, dtype, tflm, tmp_path):  # noqa: F811
    rng = np.random.default_rng(4)
    shape = (2, *in_hw, 3)
    if dtype == "int8":
        x = rng.integers(-128, 128, shape).astype(np.int8)
    else:
        x = rng.normal(size=shape).astype(np.float32)
    assert_matches_tflm(tflm, _model(dtype, in_hw, out_hw, align, half), [x], tmp_path)


def test_int16_is_refused_at_import(tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [1, 2, 2, 1], "int16", scale=0.1)
    y = mb.output("y", [1, 4, 4, 1], "int16", scale=0.1)
    mb.op("RESIZE_BILINEAR", [x, mb.const("size", np.array([4, 4]), "int32")], [y])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=r"operator 0 \(RESIZE_BILINEAR\): int16 data: not "
                                         r"supported \(TFLM resizes float32 and int8\)"):
        load_model(path)
