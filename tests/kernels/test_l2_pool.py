"""L2_POOL_2D: imported, run by the reference and compiled to C on the host,
bit for bit as TFLM runs it (float32, SAME windows at the border divide by
the covered pixels, fused activations); int8 is refused at import as TFLM
refuses it."""

from __future__ import annotations

import numpy as np
import pytest

from aot.frontend import load_model
from aot.frontend.errors import ModelError
from support.parity import assert_matches_tflm
from support.tflite_builder import ModelBuilder


def _out(size, k, s, padding):
    return (size + s - 1) // s if padding == "SAME" else (size - k + s) // s


@pytest.mark.parametrize("hw, k, s, padding, act", [
    ((6, 5), (2, 2), (2, 2), "VALID", "NONE"),
    ((7, 6), (3, 3), (2, 2), "SAME", "NONE"),
    ((5, 5), (3, 2), (1, 1), "SAME", "RELU6"),
])
@pytest.mark.one_fast
def test_matches_tflm(hw, k, s, padding, act, tflm, tmp_path):  # noqa: F811
    out = [_out(hw[0], k[0], s[0], padding), _out(hw[1], k[1], s[1], padding)]
    mb = ModelBuilder()
    x = mb.input("x", [2, *hw, 3], "float32")
    y = mb.output("y", [2, *out, 3], "float32")
    mb.op("L2_POOL_2D", [x], [y], padding=padding, stride_h=s[0], stride_w=s[1],
          filter_height=k[0], filter_width=k[1], fused_activation_function=act)
    xv = (np.random.default_rng(2).normal(size=(2, *hw, 3)) * 4).astype(np.float32)
    assert_matches_tflm(tflm, mb.finish(), [xv], tmp_path)


def test_int8_is_refused_at_import(tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [1, 4, 4, 1], "int8", scale=0.1)
    y = mb.output("y", [1, 2, 2, 1], "int8", scale=0.1)
    mb.op("L2_POOL_2D", [x], [y], padding="VALID", stride_h=2, stride_w=2, filter_height=2,
          filter_width=2)
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=r"operator 0 \(L2_POOL_2D\): int8 input: not supported "
                                         r"\(TFLM pools float32 only\)"):
        load_model(path)
