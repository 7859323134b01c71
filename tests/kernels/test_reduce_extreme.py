"""REDUCE_MAX and REDUCE_MIN: imported, run by the reference and compiled to C
on the host, bit for bit as TFLM runs them (int8 and float32)."""

from __future__ import annotations

import numpy as np
import pytest

from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.frontend import load_model
from aot.reference import run as reference_run
from support.tflite_builder import ModelBuilder


def _model(op: str, shape, axes, keep: bool, dtype: str) -> bytes:
    q = {"scale": 0.07, "zero_point": 4} if dtype == "int8" else {}
    mb = ModelBuilder()
    x = mb.input("x", list(shape), dtype, **q)
    ax = mb.const("axes", np.array(axes), "int32")
    kept = {a % len(shape) for a in axes}
    out = [1 if i in kept else d for i, d in enumerate(shape)] if keep else \
        [d for i, d in enumerate(shape) if i not in kept]
    y = mb.output("y", out, dtype, **q)
    mb.op(op, [x, ax], [y], keep_dims=keep)
    return mb.finish()


@pytest.mark.parametrize("op", ["REDUCE_MAX", "REDUCE_MIN"])
@pytest.mark.parametrize("shape, axes, keep", [
    ((1, 6, 5, 3), [1, 2], True),
    ((1, 6, 5, 3), [1, 2], False),
    ((2, 4, 7), [-1], False),
    ((3, 4), [0, 1], False),
])
@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.one_fast
def test_matches_tflm(op, shape, axes, keep, dtype, tflm, tmp_path):  # noqa: F811
    model = _model(op, shape, axes, keep, dtype)
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    rng = np.random.default_rng(11)
    if dtype == "int8":
        x = rng.integers(-128, 128, shape).astype(np.int8)
    else:
        x = rng.normal(size=shape).astype(np.float32)
    want = tflm.run(model, [[x]])[0][0]
    np.testing.assert_array_equal(reference_run(load_model(path), [x])[0], want)
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    np.testing.assert_array_equal(run_on_host(compiled, [x[None]], workdir=tmp_path)[0][0],
                                  want)
