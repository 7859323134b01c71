"""int32 ADD, SUB and MUL (index arithmetic in models): imported, run by the
reference and compiled to C on the host, bit for bit as TFLM runs them,
with broadcasting, wrap-around and fused activations (which TFLM's int32
ADD leaves out)."""

from __future__ import annotations

import numpy as np
import pytest

from support.parity import assert_matches_tflm
from support.tflite_builder import ModelBuilder


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("act", ["NONE", "RELU", "RELU6"])
@pytest.mark.one_fast
def test_matches_tflm(op, act, tflm, tmp_path):  # noqa: F811
    mb = ModelBuilder()
    a = mb.input("a", [3, 4], "int32")
    b = mb.input("b", [4], "int32")
    y = mb.output("y", [3, 4], "int32")
    mb.op(op, [a, b], [y], fused_activation_function=act)
    rng = np.random.default_rng(4)
    av = rng.integers(-20, 20, (3, 4)).astype(np.int32)
    av[0, 0] = 2**31 - 1  # wraps
    av[1, 1] = 2**30      # MUL by 3 wraps
    bv = rng.integers(-9, 9, 4).astype(np.int32)
    bv[0] = 3
    assert_matches_tflm(tflm, mb.finish(), [av, bv], tmp_path)
