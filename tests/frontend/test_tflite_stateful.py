"""Stateful builtins in the element types TFLM's kernels run, imported,
compiled for the host and run over a sequence from a fresh state bit for bit
as TFLM runs them: SVDF (int8 with int16 time weights and state; int8 with
int8 time weights and state, zero points included) and the 16x8 LSTM (int16
input and hidden state, int64 biases).  The SVDF combinations TFLM cannot run
are refused at import naming the operator, its index and the types."""

from __future__ import annotations

import numpy as np
import pytest
from support.stateful_models import lstm_16x8
from support.tflite_builder import ModelBuilder

from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.frontend import load_model
from aot.frontend.errors import ModelError
from aot.reference.interpreter import Session

BATCH, DEPTH, UNITS, RANK, MEMORY = 2, 7, 3, 2, 5
FILTERS = UNITS * RANK


def svdf_model(x_t="int8", wf_t="int8", wt_t="int16", state_t="int16", y_t="int8",
               bias_t="int32", state_zp=0, seed=0) -> bytes:
    """One SVDF layer; integer scales chosen so the state saturates now and then."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()

    def q(scale, zp=0):
        return {} if x_t == "float32" and wf_t == "float32" else {"scale": scale,
                                                                  "zero_point": zp}

    def data(shape, dtype):
        if dtype == "float32":
            return rng.standard_normal(shape).astype(np.float32)
        info = np.iinfo(dtype)
        lo, hi = max(info.min + 1, -30000), min(info.max, 30000)
        return rng.integers(lo, hi + 1, shape).astype(dtype)

    s_state = 0.08 if state_t == "int8" else 0.003
    x = mb.input("x", (BATCH, DEPTH), x_t, **q(0.05, -4))
    wf = mb.const("wf", data((FILTERS, DEPTH), wf_t), **q(0.01))
    wt = mb.const("wt", data((FILTERS, MEMORY), wt_t), **q(0.004))
    b = mb.const("b", data((UNITS,), bias_t), **q(np.float32(s_state) * np.float32(0.004)))
    st = mb.tensor("state", (BATCH, FILTERS * MEMORY), state_t, variable=True,
                   **q(s_state, state_zp))
    y = mb.output("y", (BATCH, UNITS), y_t, **q(0.6 if state_t == "int8" else 0.02, 5))
    mb.op("SVDF", [x, wf, wt, b, st], [y], rank=RANK, fused_activation_function="NONE")
    return mb.finish()


SUPPORTED = {
    "int8, int16 state": {},
    "int8, int16 state with a zero point": {"state_zp": -300},
    "int8, int8 state": {"wt_t": "int8", "state_t": "int8"},
    "int8, int8 state with a zero point": {"wt_t": "int8", "state_t": "int8", "state_zp": 90},
}


@pytest.mark.parametrize("case", sorted(SUPPORTED))
@pytest.mark.one_fast
def test_integer_svdf_on_the_host_equals_tflm(case, tflm, tmp_path):  # noqa: F811
    model = svdf_model(**SUPPORTED[case])
    path = tmp_path / "svdf.tflite"
    path.write_bytes(model)
    rng = np.random.default_rng(3)
    xs = [rng.integers(-128, 128, (BATCH, DEPTH)).astype(np.int8) for _ in range(6)]
    want = np.stack([outs[0] for outs in tflm.run(model, [[x] for x in xs])])
    session = Session(load_model(path))
    np.testing.assert_array_equal(np.stack([session.invoke([x])[0] for x in xs]), want)
    compiled = compile_model(path, "host/native", name="svdf", measure_code=False)
    host = run_on_host(compiled, [np.stack(xs)], workdir=tmp_path)
    np.testing.assert_array_equal(host[0], want)


REFUSED = {
    "int16 time weights, int8 state": (
        {"wt_t": "int16", "state_t": "int8"},
        "operator 0 (SVDF): int8 input, int8 feature weights, int16 time weights, int8 state "
        "and int8 output: not supported"),
    "int8 time weights, int16 state": (
        {"wt_t": "int8", "state_t": "int16"},
        "operator 0 (SVDF): int8 input, int8 feature weights, int8 time weights, int16 state"),
    "hybrid": (
        {"x_t": "float32", "wt_t": "float32", "state_t": "float32", "y_t": "float32",
         "bias_t": "float32"},
        "operator 0 (SVDF): float32 input, int8 feature weights, float32 time weights"),
    "int16 input": (
        {"x_t": "int16"}, "operator 0 (SVDF): int16 input, int8 feature weights"),
    "int8 bias": ({"bias_t": "int8"},
                  "operator 0 (SVDF): int8 bias with int8 input: not supported (TFLM takes "
                  "int32 bias here)"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_svdf_types_tflm_cannot_run_are_refused(case, tmp_path):
    kwargs, message = REFUSED[case]
    path = tmp_path / "svdf.tflite"
    path.write_bytes(svdf_model(**kwargs))
    with pytest.raises(ModelError) as err:
        load_model(path)
    assert message in str(err.value)
    assert "time weights and state both int16 or both int8" in str(err.value) or \
        "bias" in case


def test_lstm_16x8_on_the_host_equals_tflm(tflm, tmp_path):  # noqa: F811
    model = lstm_16x8(np.random.default_rng(4))
    path = tmp_path / "lstm.tflite"
    path.write_bytes(model)
    rng = np.random.default_rng(5)
    xs = [rng.integers(-32768, 32768, (2, 4, 5)).astype(np.int16) for _ in range(3)]
    want = np.stack([outs[0] for outs in tflm.run(model, [[x] for x in xs])])
    assert np.count_nonzero(want) > want.size // 2  # not saturated to nothing
    session = Session(load_model(path))
    np.testing.assert_array_equal(np.stack([session.invoke([x])[0] for x in xs]), want)
    compiled = compile_model(path, "host/native", name="lstm", measure_code=False)
    np.testing.assert_array_equal(run_on_host(compiled, [np.stack(xs)], workdir=tmp_path)[0],
                                  want)
