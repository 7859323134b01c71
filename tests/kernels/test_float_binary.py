"""DIV, SQUARED_DIFFERENCE, FLOOR_DIV, FLOOR_MOD and ADD_N on float32: imported,
run by the reference and compiled to C on the host, bit for bit as TFLM runs
them; other operand types are refused at import (TFLM's own build runs
FLOOR_DIV and FLOOR_MOD on float32 only; int8 ADD_N is tested in
test_layernorm_ops.py)."""

from __future__ import annotations

import numpy as np
import pytest

from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.frontend import load_model
from aot.frontend.errors import ModelError
from aot.reference import run as reference_run
from support.tflite_builder import ModelBuilder


def _check(model: bytes, xs, tflm, tmp_path):  # noqa: F811
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    want = tflm.run(model, [xs])[0][0]
    got = reference_run(load_model(path), xs)[0]
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    host = run_on_host(compiled, [x[None] for x in xs], workdir=tmp_path)[0][0]
    np.testing.assert_array_equal(host.view(np.uint32), want.view(np.uint32))


def _binary(op: str, dtype: str, **options) -> bytes:
    mb = ModelBuilder()
    a = mb.input("a", [3, 8], dtype)
    b = mb.input("b", [8], dtype)
    y = mb.output("y", [3, 8], dtype)
    mb.op(op, [a, b], [y], **options)
    return mb.finish()


def _operands(dtype: str):
    rng = np.random.default_rng(9)
    if dtype == "float32":
        a = (rng.normal(size=(3, 8)) * 5).astype(np.float32)
        b = (rng.normal(size=8) * 3).astype(np.float32)
        a[0, :4] = [-7.0, 7.0, -7.5, 0.0]
        b[:4] = [2.0, -2.0, 2.5, 3.0]
    else:
        a = rng.integers(-50, 50, (3, 8)).astype(np.int32)
        b = rng.integers(1, 9, 8).astype(np.int32) * rng.choice([-1, 1], 8).astype(np.int32)
    return [a, b]


@pytest.mark.parametrize("op, dtype, options", [
    ("DIV", "float32", {}),
    ("DIV", "float32", {"fused_activation_function": "RELU6"}),
    ("SQUARED_DIFFERENCE", "float32", {}),
    ("FLOOR_DIV", "float32", {}),
    ("FLOOR_MOD", "float32", {}),
])
@pytest.mark.one_fast
def test_binary_matches_tflm(op, dtype, options, tflm, tmp_path):  # noqa: F811
    _check(_binary(op, dtype, **options), _operands(dtype), tflm, tmp_path)


@pytest.mark.parametrize("dtype", ["float32"])
def test_add_n_matches_tflm(dtype, tflm, tmp_path):  # noqa: F811
    mb = ModelBuilder()
    xs = [mb.input(f"x{i}", [2, 5], dtype) for i in range(3)]
    y = mb.output("y", [2, 5], dtype)
    mb.op("ADD_N", xs, [y])
    rng = np.random.default_rng(2)
    values = [(rng.normal(size=(2, 5)) * 1e3).astype(dtype) for _ in range(3)]
    _check(mb.finish(), values, tflm, tmp_path)


def test_int32_operands_are_refused_at_import(tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(_binary("FLOOR_MOD", "int32"))
    with pytest.raises(ModelError, match=r"operator 0 \(FLOOR_MOD\): int32 operands: not "
                                         r"supported yet \(float32 only\)"):
        load_model(path)


def test_quantized_operands_are_refused_at_import(tmp_path):
    mb = ModelBuilder()
    a = mb.input("a", [4], "int8", scale=0.1, zero_point=0)
    b = mb.input("b", [4], "int8", scale=0.1, zero_point=0)
    y = mb.output("y", [4], "int8", scale=0.1, zero_point=0)
    mb.op("DIV", [a, b], [y])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=r"operator 0 \(DIV\): int8 operands: "
                                         r"not supported yet"):
        load_model(path)
