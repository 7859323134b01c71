"""SUM and REDUCE_ALL: imported, run by the reference and compiled to C on the
host, bit for bit as TFLM runs them (SUM: int8 and int16 requantized to
another scale, float32 added in the input's order; REDUCE_ALL: bool)."""

from __future__ import annotations

import numpy as np
import pytest

from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.frontend import load_model
from aot.frontend.errors import ModelError
from aot.reference import run as reference_run
from support.parity import assert_matches_tflm
from support.tflite_builder import ModelBuilder

_QUANT = {"int8": ({"scale": 0.05, "zero_point": 3}, {"scale": 0.4, "zero_point": -7}),
          "int16": ({"scale": 0.001, "zero_point": 0}, {"scale": 0.01, "zero_point": 0}),
          "float32": ({}, {})}


def _model(shape, axes, keep: bool, dtype: str) -> bytes:
    qx, qy = _QUANT[dtype]
    mb = ModelBuilder()
    x = mb.input("x", list(shape), dtype, **qx)
    ax = mb.const("axes", np.array(axes), "int32")
    kept = {a % len(shape) for a in axes}
    out = [1 if i in kept else d for i, d in enumerate(shape)] if keep else \
        [d for i, d in enumerate(shape) if i not in kept]
    y = mb.output("y", out, dtype, **qy)
    mb.op("SUM", [x, ax], [y], keep_dims=keep)
    return mb.finish()


@pytest.mark.parametrize("shape, axes, keep", [
    ((1, 6, 5, 3), [1, 2], True),
    ((2, 4, 7), [-1], False),
    ((3, 4, 5), [0, 2], False),
    ((3, 4), [0, 1], False),
])
@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.one_fast
def test_matches_tflm(shape, axes, keep, dtype, tflm, tmp_path):  # noqa: F811
    model = _model(shape, axes, keep, dtype)
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    rng = np.random.default_rng(5)
    if dtype == "float32":
        x = (rng.normal(size=shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(np.float32)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max + 1, shape).astype(dtype)
    want = tflm.run(model, [[x]])[0][0]
    np.testing.assert_array_equal(reference_run(load_model(path), [x])[0], want)
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    np.testing.assert_array_equal(run_on_host(compiled, [x[None]], workdir=tmp_path)[0][0],
                                  want)


def test_int32_data_is_refused_at_import(tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [4, 3], "int32")
    y = mb.output("y", [4], "int32")
    mb.op("SUM", [x, mb.const("axes", np.array([1]), "int32")], [y])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=r"operator 0 \(SUM\).*int32 data is not supported "
                                         r"\(float32, int8 or int16"):
        load_model(path)


@pytest.mark.parametrize("shape, axes, keep", [((2, 5, 3), [1], False), ((4, 3), [0, 1], True),
                                               ((3, 4, 2), [-1, 0], False)])
def test_reduce_all_matches_tflm(shape, axes, keep, tflm, tmp_path):  # noqa: F811
    mb = ModelBuilder()
    x = mb.input("x", list(shape), "bool")
    kept = {a % len(shape) for a in axes}
    out = [1 if i in kept else d for i, d in enumerate(shape)] if keep else \
        [d for i, d in enumerate(shape) if i not in kept]
    y = mb.output("y", out, "bool")
    mb.op("REDUCE_ALL", [x, mb.const("axes", np.array(axes), "int32")], [y], keep_dims=keep)
    xv = np.random.default_rng(3).random(shape) < 0.8
    assert_matches_tflm(tflm, mb.finish(), [xv], tmp_path)
