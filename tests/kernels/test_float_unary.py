"""Elementwise float32 functions (ABS, NEG, FLOOR, CEIL, ROUND, SQRT, RSQRT,
EXP, LOG, SIN, COS, SQUARE): imported, run by the reference and compiled to C
on the host, bit for bit as TFLM runs them; int8 inputs are refused at import."""

from __future__ import annotations

import numpy as np
import pytest

from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.frontend import load_model
from aot.frontend.errors import ModelError
from aot.reference import run as reference_run
from support.tflite_builder import ModelBuilder

OPS = ["ABS", "NEG", "FLOOR", "CEIL", "ROUND", "SQRT", "RSQRT", "EXP", "LOG", "SIN", "COS",
       "SQUARE"]
POSITIVE = {"SQRT", "RSQRT", "LOG"}


def _model(op: str, dtype: str = "float32") -> bytes:
    q = {"scale": 0.1, "zero_point": 0} if dtype == "int8" else {}
    mb = ModelBuilder()
    x = mb.input("x", [3, 40], dtype, **q)
    y = mb.output("y", [3, 40], dtype, **q)
    mb.op(op, [x], [y])
    return mb.finish()


@pytest.mark.parametrize("op", OPS)
@pytest.mark.one_fast
def test_matches_tflm(op, tflm, tmp_path):  # noqa: F811
    model = _model(op)
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    rng = np.random.default_rng(8)
    x = (rng.normal(size=(3, 40)) * 4).astype(np.float32)
    x[0, :6] = [0.5, 1.5, 2.5, -0.5, -2.5, 0.0]  # ROUND's halves go to even
    if op in POSITIVE:
        x = np.abs(x) + np.float32(0.01)
    want = tflm.run(model, [[x]])[0][0]
    got = reference_run(load_model(path), [x])[0]
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    host = run_on_host(compiled, [x[None]], workdir=tmp_path)[0][0]
    np.testing.assert_array_equal(host.view(np.uint32), want.view(np.uint32))


def test_quantized_input_is_refused_at_import(tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(_model("SQRT", "int8"))
    with pytest.raises(ModelError, match=r"operator 0 \(SQRT\): int8 input: not supported yet "
                                         r"\(float32 only\)"):
        load_model(path)
