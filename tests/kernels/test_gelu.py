"""GELU, aot's extension beyond TFLM (which has no GELU kernel): float32 (erf
and tanh forms) and int8 (a table), imported from the TFLite GELU builtin,
run by the reference and compiled to C on the host.  The oracle is the
float64 GELU: float32 within a few ulps, int8 within half an output step of
the GELU of the dequantized input."""

from __future__ import annotations

import numpy as np
import pytest
from support.models import TRANSFORMERS_DIR

from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.frontend import load_model
from aot.frontend.errors import ModelError
from aot.reference import run as reference_run
from aot.reference.ops.activations import gelu_exact
from support.tflite_builder import ModelBuilder


def _model(dtype, n, approximate, qx=None, qy=None) -> bytes:
    mb = ModelBuilder()
    x = mb.input("x", [n], dtype, **(qx or {}))
    mb.op("GELU", [x], [mb.output("y", [n], dtype, **(qy or {}))], approximate=approximate)
    return mb.finish()


def _both(model: bytes, xs, tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    ref = reference_run(load_model(path), [xs])[0]
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    host = run_on_host(compiled, [xs[None]], workdir=tmp_path)[0][0]
    np.testing.assert_array_equal(host.view(np.uint8), ref.view(np.uint8))
    return ref


@pytest.mark.parametrize("approximate", [False, True])
def test_float_gelu_is_the_function_and_host_equals_reference(approximate, tmp_path):
    xs = np.concatenate([np.linspace(-8, 8, 241), [-30.0, -1e-3, 0.0, 1e-3, 30.0]])
    xs = xs.astype(np.float32)
    y = _both(_model("float32", xs.size, approximate), xs, tmp_path)
    want = gelu_exact(xs, approximate=approximate)
    np.testing.assert_allclose(y, want, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("approximate", [False, True])
@pytest.mark.parametrize("qx, qy", [
    ({"scale": 0.05, "zero_point": -3}, {"scale": 0.04, "zero_point": -118}),
    ({"scale": 0.1, "zero_point": 20}, {"scale": 0.03, "zero_point": -128}),
])
@pytest.mark.one_fast
def test_int8_gelu_is_within_half_a_step(approximate, qx, qy, tmp_path):
    xs = np.arange(-128, 128).astype(np.int8)
    y = _both(_model("int8", 256, approximate, qx, qy), xs, tmp_path)
    sx, sy = (float(np.float32(q["scale"])) for q in (qx, qy))  # as the model stores them
    real = gelu_exact(sx * (xs.astype(np.float64) - qx["zero_point"]), approximate=approximate)
    got = sy * (y.astype(np.float64) - qy["zero_point"])
    inside = (real >= sy * (-128 - qy["zero_point"])) & (real <= sy * (127 - qy["zero_point"]))
    err = np.abs(got - real)[inside] / sy
    assert err.max() <= 0.5 + 1e-6
    assert (y[~inside] == np.where(real[~inside] > 0, 127, -128)).all()


def test_int16_gelu_is_refused_at_import(tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(_model("int16", 4, False, {"scale": 0.01}, {"scale": 0.01}))
    with pytest.raises(ModelError, match=r"operator 0 \(GELU\): int16 input: not "
                                         r"supported \(aot runs GELU on float32 and int8\)"):
        load_model(path)


@pytest.mark.slow
def test_keyword_transformer_with_gelu_host_equals_reference(tmp_path):
    path = TRANSFORMERS_DIR / "kwt_gelu_int8.tflite"
    graph = load_model(path)
    assert "gelu" in {n.op for n in graph.nodes}
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, graph.inputs[0].shape).astype(np.int8)
    ref = reference_run(graph, [x])[0]
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    host = run_on_host(compiled, [x[None]], workdir=tmp_path)[0][0]
    np.testing.assert_array_equal(host, ref)
