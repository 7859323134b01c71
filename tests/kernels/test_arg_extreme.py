"""ARG_MAX and ARG_MIN: imported, run by the reference and compiled to C on the
host, bit for bit as TFLM runs them (ties go to the first index)."""

from __future__ import annotations

import numpy as np
import pytest

from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.frontend import load_model
from aot.frontend.errors import ModelError
from aot.reference import run as reference_run
from support.tflite_builder import DTYPES, ModelBuilder


@pytest.mark.parametrize("op", ["ARG_MAX", "ARG_MIN"])
@pytest.mark.parametrize("dtype, axis, out", [("int8", -1, "int32"), ("int8", 1, "int32"),
                                              ("float32", 0, "int32"), ("int8", 2, "int32")])
@pytest.mark.one_fast
def test_matches_tflm(op, dtype, axis, out, tflm, tmp_path):  # noqa: F811
    shape = (2, 5, 6)
    q = {"scale": 0.1, "zero_point": -4} if dtype == "int8" else {}
    mb = ModelBuilder()
    x = mb.input("x", list(shape), dtype, **q)
    ax = mb.const("axis", np.array([axis]), "int32")
    kept = [d for i, d in enumerate(shape) if i != axis % 3]
    y = mb.output("y", kept, out)
    mb.op(op, [x, ax], [y], output_type=DTYPES[out][0])
    model = mb.finish()
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    rng = np.random.default_rng(4)
    if dtype == "int8":
        xs = rng.integers(-6, 6, shape).astype(np.int8)  # many ties
    else:
        xs = rng.integers(-3, 3, shape).astype(np.float32)
    want = tflm.run(model, [[xs]])[0][0]
    got = reference_run(load_model(path), [xs])[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    np.testing.assert_array_equal(run_on_host(compiled, [xs[None]], workdir=tmp_path)[0][0],
                                  want)


def test_int64_indices_are_refused_at_import(tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [4, 3], "float32")
    y = mb.output("y", [4], "int64")
    mb.op("ARG_MAX", [x, mb.const("axis", np.array([1]), "int32")], [y],
          output_type=DTYPES["int64"][0])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=r"operator 0 \(ARG_MAX\): int64 output: not supported "
                                         r"yet \(int32 only\)"):
        load_model(path)
