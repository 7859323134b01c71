"""ELU, PRELU, CAST and ZEROS_LIKE: imported, run by the reference and compiled
to C on the host, bit for bit as TFLM runs them."""

from __future__ import annotations

import numpy as np
import pytest

from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.frontend import load_model
from aot.reference import run as reference_run
from support.tflite_builder import ModelBuilder


def _check(model: bytes, xs, tflm, tmp_path):  # noqa: F811
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    want = tflm.run(model, [xs])[0][0]
    got = reference_run(load_model(path), xs)[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    host = run_on_host(compiled, [x[None] for x in xs], workdir=tmp_path)[0][0]
    np.testing.assert_array_equal(host, want)


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_elu_matches_tflm(dtype, tflm, tmp_path):  # noqa: F811
    mb = ModelBuilder()
    qx = {"scale": 0.05, "zero_point": 10} if dtype == "int8" else {}
    qy = {"scale": 0.03, "zero_point": -20} if dtype == "int8" else {}
    x = mb.input("x", [256], dtype, **qx)
    y = mb.output("y", [256], dtype, **qy)
    mb.op("ELU", [x], [y])
    if dtype == "int8":
        xs = [np.arange(-128, 128, dtype=np.int8)]
    else:
        xs = [np.linspace(-6, 3, 256, dtype=np.float32)]
    _check(mb.finish(), xs, tflm, tmp_path)


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_prelu_with_a_per_channel_alpha_matches_tflm(dtype, tflm, tmp_path):  # noqa: F811
    rng = np.random.default_rng(12)
    mb = ModelBuilder()
    quant = dtype == "int8"
    x = mb.input("x", [1, 4, 5, 3], dtype, **({"scale": 0.04, "zero_point": -5} if quant else {}))
    if quant:
        alpha = mb.const("alpha", rng.integers(-100, 100, (1, 1, 3)), "int8", scale=0.01,
                         zero_point=3)
    else:
        alpha = mb.const("alpha", rng.uniform(-0.5, 0.5, (1, 1, 3)).astype(np.float32),
                         "float32")
    y = mb.output("y", [1, 4, 5, 3], dtype, **({"scale": 0.05, "zero_point": 2} if quant else {}))
    mb.op("PRELU", [x, alpha], [y])
    if quant:
        xs = [rng.integers(-128, 128, (1, 4, 5, 3)).astype(np.int8)]
    else:
        xs = [rng.normal(size=(1, 4, 5, 3)).astype(np.float32)]
    _check(mb.finish(), xs, tflm, tmp_path)


@pytest.mark.parametrize("src, dst", [("float32", "int32"), ("int32", "float32"),
                                      ("int8", "int32"), ("int32", "int8"), ("int8", "float32"),
                                      ("float32", "bool"), ("bool", "int32"), ("int16", "int32")])
@pytest.mark.one_fast
def test_cast_matches_tflm(src, dst, tflm, tmp_path):  # noqa: F811
    mb = ModelBuilder()
    x = mb.input("x", [2, 7], src)
    y = mb.output("y", [2, 7], dst)
    mb.op("CAST", [x], [y])
    rng = np.random.default_rng(1)
    values = {"float32": (rng.normal(size=(2, 7)) * 50).astype(np.float32),
              "int32": rng.integers(-300, 300, (2, 7)).astype(np.int32),
              "int8": rng.integers(-128, 128, (2, 7)).astype(np.int8),
              "int16": rng.integers(-30000, 30000, (2, 7)).astype(np.int16),
              "bool": rng.integers(0, 2, (2, 7)).astype(bool)}
    _check(mb.finish(), [values[src]], tflm, tmp_path)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_zeros_like_matches_tflm(dtype, tflm, tmp_path):  # noqa: F811
    mb = ModelBuilder()
    x = mb.input("x", [3, 4], dtype)
    y = mb.output("y", [3, 4], dtype)
    mb.op("ZEROS_LIKE", [x], [y])
    _check(mb.finish(), [np.arange(12).reshape(3, 4).astype(dtype)], tflm, tmp_path)
