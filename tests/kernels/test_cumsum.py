"""CUMSUM: imported, run by the reference and compiled to C on the host, bit
for bit as TFLM runs it (float32 running sums in TFLM's order, int8 through
TFLM's Q20 arithmetic and its starting value), forwards, reversed and
exclusive."""

from __future__ import annotations

import numpy as np
import pytest

from aot.frontend import load_model
from aot.frontend.errors import ModelError
from support.parity import assert_matches_tflm
from support.tflite_builder import ModelBuilder

_QUANT = {"int8": ({"scale": 0.05, "zero_point": -9}, {"scale": 0.3, "zero_point": 4}),
          "float32": ({}, {})}


@pytest.mark.parametrize("shape, axis", [((2, 7, 3), 1), ((5, 4), -1), ((9,), 0),
                                         ((3, 2, 4), 0)])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.one_fast
def test_matches_tflm(shape, axis, exclusive, reverse, dtype, tflm, tmp_path):  # noqa: F811
    qx, qy = _QUANT[dtype]
    mb = ModelBuilder()
    x = mb.input("x", list(shape), dtype, **qx)
    y = mb.output("y", list(shape), dtype, **qy)
    mb.op("CUMSUM", [x, mb.const("axis", np.array(axis, np.int32), "int32")], [y],
          exclusive=exclusive, reverse=reverse)
    rng = np.random.default_rng(3)
    if dtype == "int8":
        xv = rng.integers(-128, 128, shape).astype(np.int8)
    else:
        xv = (rng.normal(size=shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(np.float32)
    assert_matches_tflm(tflm, mb.finish(), [xv], tmp_path)


def test_int16_is_refused_at_import(tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [4], "int16", scale=0.1)
    y = mb.output("y", [4], "int16", scale=0.1)
    mb.op("CUMSUM", [x, mb.const("axis", np.array(0, np.int32), "int32")], [y])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=r"operator 0 \(CUMSUM\): int16 data: not supported "
                                         r"\(TFLM sums float32 and int8\)"):
        load_model(path)
