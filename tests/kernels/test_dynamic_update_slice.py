"""DYNAMIC_UPDATE_SLICE: imported, run by the reference and compiled to C on
the host, bit for bit as TFLM runs it, with start indices given at run time
(clamped into range as TFLM clamps them) or as constants; data, update and
output quantized differently are copied raw, as TFLM copies them."""

from __future__ import annotations

import numpy as np
import pytest

from aot.frontend import load_model
from aot.frontend.errors import ModelError
from support.parity import assert_matches_tflm
from support.tflite_builder import ModelBuilder


@pytest.mark.parametrize("shape, ushape, start", [
    ((6, 5), (2, 3), (1, 2)),
    ((6, 5), (2, 3), (5, -4)),          # clamped to (4, 0)
    ((2, 4, 6), (1, 4, 2), (1, 0, 3)),
    ((8,), (3,), (7,)),
])
@pytest.mark.parametrize("dtype", ["int8", "int16", "float32", "int32"])
@pytest.mark.parametrize("const", [False, True])
@pytest.mark.one_fast
def test_matches_tflm(shape, ushape, start, dtype, const, tflm, tmp_path):  # noqa: F811
    q = {"int8": {"scale": 0.2, "zero_point": 1},
         "int16": {"scale": 0.01, "zero_point": 0}}.get(dtype, {})
    rng = np.random.default_rng(6)
    if dtype == "float32":
        x, u = (rng.normal(size=s).astype(np.float32) for s in (shape, ushape))
    else:
        x, u = (rng.integers(-100, 100, s).astype(dtype) for s in (shape, ushape))
    s = np.array(start, np.int32)
    mb = ModelBuilder()
    xi = mb.input("x", list(shape), dtype, **q)
    ui = mb.input("u", list(ushape), dtype, **q)
    si = mb.const("s", s, "int32") if const else mb.input("s", [len(shape)], "int32")
    y = mb.output("y", list(shape), dtype, **q)
    mb.op("DYNAMIC_UPDATE_SLICE", [xi, ui, si], [y])
    assert_matches_tflm(tflm, mb.finish(), [x, u] if const else [x, u, s], tmp_path)


@pytest.mark.parametrize("dtype", ["int8", "int16"])
@pytest.mark.parametrize("differs", ["update", "output", "all"])
@pytest.mark.one_fast
def test_differently_quantized_operands_are_copied_raw(dtype, differs, tflm,  # noqa: F811
                                                       tmp_path):
    def q(scale, zp):
        return {"scale": scale, "zero_point": zp if dtype == "int8" else 0}
    a, b, c = q(0.05, -3), q(0.085, 6), q(0.1, 4)
    qx, qu, qy = {"update": (a, b, a), "output": (a, a, c), "all": (a, b, c)}[differs]
    rng = np.random.default_rng(9)
    x, u = (rng.integers(-100, 100, s).astype(dtype) for s in ((6, 5), (2, 3)))
    mb = ModelBuilder()
    xi, ui = mb.input("x", [6, 5], dtype, **qx), mb.input("u", [2, 3], dtype, **qu)
    y = mb.output("y", [6, 5], dtype, **qy)
    mb.op("DYNAMIC_UPDATE_SLICE", [xi, ui, mb.const("s", np.array([1, 2]), "int32")], [y])
    want = assert_matches_tflm(tflm, mb.finish(), [x, u], tmp_path)
    raw = x.copy()
    raw[1:3, 2:5] = u
    np.testing.assert_array_equal(want, raw)


def test_bool_is_refused_at_import(tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [4], "bool")
    u = mb.input("u", [2], "bool")
    y = mb.output("y", [4], "bool")
    mb.op("DYNAMIC_UPDATE_SLICE", [x, u, mb.const("s", np.array([1]), "int32")], [y])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=r"operator 0 \(DYNAMIC_UPDATE_SLICE\): bool data: "
                                         r"not supported \(TFLM updates float32, int8, int16"):
        load_model(path)
