"""Operators imported for TFLM parity (issue 19) run on an emulated
Cortex-M4F (qemu/mps2-an386) bit for bit as TFLM runs them on the host:
the device C is the host C, built by the cross compiler.  One chain of
int8 operators (ending in L2_NORMALIZATION's fixed-point inverse square root),
int8 LOG_SOFTMAX (fixed-point exp and log), one of float32 operators (no libm call but sqrtf, which
rounds exactly everywhere), one of int16 (16x8) layers (conv, depthwise, leaky relu, pools, relu,
fully connected, logistic, tanh, relu6, concatenation, softmax; slow), SVDF with an int8
state and zero point (wrapping new samples; slow), a 16x8 LSTM (int16 input and
hidden state, int64 biases; slow), a chain of data movement whose every
output is quantized differently from its input (raw copies, as TFLM; slow), and
a streaming model whose resource variable (with start values from its init
subgraph) keeps state between invocations on one boot."""

from __future__ import annotations

import numpy as np
import pytest
from support.stateful_models import lstm_16x8
from support.tflite_builder import ModelBuilder

from aot.compile import compile_model
from aot.firmware import run_on_board

BOARD = "qemu/mps2-an386"


def _q(scale, zp=0):
    return {"scale": scale, "zero_point": zp}


def _int8_chain(rng) -> bytes:
    mb = ModelBuilder()
    x = mb.input("x", [1, 4, 4, 3], "int8", **_q(0.05, 2))
    ws = rng.uniform(0.003, 0.01, 4).astype(np.float32)
    w = mb.const("w", rng.integers(-127, 128, (4, 3, 3, 3)), "int8", scale=ws, axis=0)
    b = mb.const("b", rng.integers(-500, 500, 4), "int32", scale=0.05 * ws, axis=0)
    t = mb.tensor("t", [1, 8, 8, 4], "int8", **_q(0.04, -5))
    mb.op("TRANSPOSE_CONV", [mb.const("os", np.array([1, 8, 8, 4]), "int32"), w, x, b], [t],
          padding="SAME", stride_w=2, stride_h=2)
    r = mb.tensor("r", [1, 6, 5, 4], "int8", **_q(0.04, -5))
    mb.op("RESIZE_BILINEAR", [t, mb.const("size", np.array([6, 5]), "int32")], [r],
          half_pixel_centers=True)
    c = mb.tensor("c", [1, 6, 5, 4], "int8", **_q(0.1, 3))
    mb.op("CUMSUM", [r, mb.const("ax", np.array(2, np.int32), "int32")], [c])
    s = mb.tensor("s", [1, 5, 4], "int8", **_q(0.3, -1))
    mb.op("SUM", [c, mb.const("axes", np.array([1]), "int32")], [s])
    m = mb.tensor("m", [1, 5, 3], "int8", **_q(0.5, 4))
    rhs = mb.const("rhs", rng.integers(-128, 128, (4, 3)), "int8", **_q(0.02, -2))
    mb.op("BATCH_MATMUL", [s, rhs], [m])
    g = mb.tensor("g", [1, 3, 3], "int8", **_q(0.5, 4))
    mb.op("GATHER", [m, mb.const("i", np.array([4, 0, 2]), "int32")], [g], axis=1)
    y = mb.output("y", [1, 3, 3], "int8", **_q(1 / 128, 0))
    mb.op("L2_NORMALIZATION", [g], [y])
    return mb.finish()


def _float_chain(rng) -> bytes:
    mb = ModelBuilder()
    x = mb.input("x", [1, 4, 4, 3], "float32")
    w = mb.const("w", rng.normal(size=(4, 3, 3, 3)).astype(np.float32))
    t = mb.tensor("t", [1, 8, 8, 4], "float32")
    mb.op("TRANSPOSE_CONV", [mb.const("os", np.array([1, 8, 8, 4]), "int32"), w, x], [t],
          padding="SAME", stride_w=2, stride_h=2)
    p = mb.tensor("p", [1, 4, 4, 4], "float32")
    mb.op("L2_POOL_2D", [t], [p], padding="VALID", stride_w=2, stride_h=2, filter_width=2,
          filter_height=2)
    n = mb.tensor("n", [1, 4, 4, 4], "float32")
    mb.op("L2_NORMALIZATION", [p], [n])
    r = mb.tensor("r", [1, 5, 6, 4], "float32")
    mb.op("RESIZE_BILINEAR", [n, mb.const("size", np.array([5, 6]), "int32")], [r])
    c = mb.tensor("c", [1, 5, 6, 4], "float32")
    mb.op("CUMSUM", [r, mb.const("ax", np.array(1, np.int32), "int32")], [c], reverse=True)
    s = mb.tensor("s", [1, 5, 4], "float32")
    mb.op("SUM", [c, mb.const("axes", np.array([2]), "int32")], [s])
    y = mb.output("y", [1, 5, 2], "float32")
    mb.op("BATCH_MATMUL", [s, mb.const("rhs", rng.normal(size=(4, 2)).astype(np.float32))],
          [y])
    return mb.finish()


def _log_softmax(rng) -> bytes:
    mb = ModelBuilder()
    x = mb.input("x", [3, 20], "int8", **_q(0.06, 1))
    y = mb.output("y", [3, 20], "int8", **_q(16 / 256, 127))
    mb.op("LOG_SOFTMAX", [x], [y])
    return mb.finish()


def _int16_chain(rng) -> bytes:
    """Every int16 kernel of TFLM's 16x8 scheme in one model; the conv's first
    channel (64 inputs x 3x3 taps of weight 127) sums past 2**31 for inputs of
    32767 (int64 accumulation on the device)."""
    c_scale, d_scale, fw_scale = 200.0, 30.0, 5e-7  # logistic and tanh mostly unsaturated
    mb = ModelBuilder()
    x = mb.input("x", [1, 6, 6, 64], "int16", **_q(0.01))
    ws = rng.uniform(0.002, 0.01, 4).astype(np.float32)
    wv = rng.integers(-127, 128, (4, 3, 3, 64))
    wv[0] = 127
    w = mb.const("w", wv, "int8", scale=ws, axis=0)
    b = mb.const("b", rng.integers(-30000, 30000, 4), "int64", scale=0.01 * ws, axis=0)
    c = mb.tensor("c", [1, 6, 6, 4], "int16", **_q(c_scale))
    mb.op("CONV_2D", [x, w, b], [c], padding="SAME", stride_w=1, stride_h=1,
          fused_activation_function="RELU")
    dws = rng.uniform(0.002, 0.01, 4).astype(np.float32)
    dw = mb.const("dw", rng.integers(-127, 128, (1, 3, 3, 4)), "int8", scale=dws, axis=3)
    db = mb.const("db", rng.integers(-3000, 3000, 4), "int64", scale=c_scale * dws, axis=0)
    d = mb.tensor("d", [1, 3, 3, 4], "int16", **_q(d_scale))
    mb.op("DEPTHWISE_CONV_2D", [c, dw, db], [d], padding="SAME", stride_w=2, stride_h=2,
          depth_multiplier=1)
    lk = mb.tensor("lk", [1, 3, 3, 4], "int16", **_q(d_scale))
    mb.op("LEAKY_RELU", [d], [lk], alpha=0.2)
    a = mb.tensor("a", [1, 2, 2, 4], "int16", **_q(d_scale))
    mb.op("AVERAGE_POOL_2D", [lk], [a], padding="VALID", stride_w=1, stride_h=1,
          filter_width=2, filter_height=2)
    m = mb.tensor("m", [1, 2, 2, 4], "int16", **_q(d_scale))
    mb.op("MAX_POOL_2D", [a], [m], padding="SAME", stride_w=1, stride_h=1, filter_width=2,
          filter_height=2)
    rl = mb.tensor("rl", [1, 2, 2, 4], "int16", **_q(d_scale / 2))
    mb.op("RELU", [m], [rl])
    r = mb.tensor("r", [1, 16], "int16", **_q(d_scale / 2))
    mb.op("RESHAPE", [rl, mb.const("shape", np.array([1, 16]), "int32")], [r])
    fw = mb.const("fw", rng.integers(-127, 128, (8, 16)), "int8", scale=fw_scale)
    fb = mb.const("fb", rng.integers(-3000, 3000, 8), "int32", scale=d_scale / 2 * fw_scale)
    f = mb.tensor("f", [1, 8], "int16", **_q(1 / 4096))
    mb.op("FULLY_CONNECTED", [r, fw, fb], [f])
    lg = mb.tensor("lg", [1, 8], "int16", **_q(1 / 32768))
    mb.op("LOGISTIC", [f], [lg])
    th = mb.tensor("th", [1, 8], "int16", **_q(1 / 32768))
    mb.op("TANH", [f], [th])
    t6 = mb.tensor("t6", [1, 8], "int16", **_q(1 / 32768))
    mb.op("RELU6", [th], [t6])
    cat = mb.tensor("cat", [1, 16], "int16", **_q(1 / 32768))
    mb.op("CONCATENATION", [lg, t6], [cat], axis=1)
    y = mb.output("y", [1, 16], "int16", **_q(1 / 32768))
    mb.op("SOFTMAX", [cat], [y], beta=1.0)
    return mb.finish()


def _streaming(rng) -> bytes:
    q = _q(0.25, -3)
    mb = ModelBuilder()
    x = mb.input("x", [1, 6], "int8", **q)
    h = mb.tensor("h", [], "resource")
    v = mb.tensor("v", [1, 6], "int8", **q)
    y = mb.output("y", [1, 6], "int8", **q)
    mb.op("CALL_ONCE", [], [], init_subgraph_index=1)
    mb.op("VAR_HANDLE", [], [h], shared_name="acc")
    mb.op("READ_VARIABLE", [h], [v])
    mb.op("ADD", [x, v], [y])
    mb.op("ASSIGN_VARIABLE", [h, y], [])
    mb.next_subgraph()
    h1 = mb.tensor("h", [], "resource")
    mb.op("VAR_HANDLE", [], [h1], shared_name="acc")
    start = np.array([[-3, 5, -40, 0, 12, 100]])  # start values other than the zero point
    mb.op("ASSIGN_VARIABLE", [h1, mb.const("z", start, "int8", **q)], [])
    return mb.finish()


def _svdf_int8_state(rng) -> bytes:
    """int8 time weights and state with a zero point: new samples saturate and wrap."""
    mb = ModelBuilder()
    x = mb.input("x", [2, 7], "int8", **_q(0.05, -4))
    wf = mb.const("wf", rng.integers(-127, 128, (6, 7)), "int8", **_q(0.01))
    wt = mb.const("wt", rng.integers(-127, 128, (6, 5)), "int8", **_q(0.004))
    b = mb.const("b", rng.integers(-3000, 3000, 3), "int32",
                 **_q(np.float32(0.08) * np.float32(0.004)))
    st = mb.tensor("state", [2, 30], "int8", variable=True, **_q(0.08, 90))
    y = mb.output("y", [2, 3], "int8", **_q(0.6, 5))
    mb.op("SVDF", [x, wf, wt, b, st], [y], rank=2, fused_activation_function="NONE")
    return mb.finish()


def _raw_movement(rng) -> bytes:
    """Every step changes the quantization; TFLM copies the integers raw."""
    mb = ModelBuilder()
    x = mb.input("x", [1, 3, 4, 2], "int8", **_q(0.05, -3))
    t = mb.tensor("t", [1, 4, 3, 2], "int8", **_q(0.1, 4))
    mb.op("TRANSPOSE", [x, mb.const("perm", np.array([0, 2, 1, 3]), "int32")], [t])
    p = mb.tensor("p", [1, 6, 4, 2], "int8", **_q(0.2, -7))
    mb.op("PAD", [t, mb.const("pads", np.array([[0, 0], [1, 1], [0, 1], [0, 0]]), "int32")],
          [p])
    r = mb.tensor("r", [6, 8], "int8", **_q(0.3, 9))
    mb.op("RESHAPE", [p, mb.const("shape", np.array([6, 8]), "int32")], [r], new_shape=[6, 8])
    g = mb.tensor("g", [3, 8], "int8", **_q(0.15, 0))
    mb.op("GATHER", [r, mb.const("idx", np.array([5, 0, 2]), "int32")], [g], axis=0)
    y = mb.output("y", [3, 8], "int8", **_q(0.4, -11))
    mb.op("MAXIMUM", [g, mb.const("m", rng.integers(-128, 128, (3, 8)), "int8",
                                  **_q(0.02, 3))], [y])
    return mb.finish()


def _check(name, model_fn, make_input, tflm, object_cache, tmp_path, n=3):  # noqa: F811
    rng = np.random.default_rng(17)
    model = model_fn(rng)
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(model)
    xs = [make_input(rng) for _ in range(n)]
    want = np.stack([outs[0] for outs in tflm.run(model, [[x] for x in xs])])
    compiled = compile_model(path, BOARD, name=name, measure_code=False)
    run = run_on_board(compiled, [np.stack(xs)], workdir=tmp_path, cache_dir=object_cache)
    np.testing.assert_array_equal(run.outputs[0], want)


@pytest.mark.slow
def test_int8_operators_on_qemu_equal_tflm(tflm, object_cache, tmp_path):  # noqa: F811
    _check("chain8", _int8_chain, lambda r: r.integers(-128, 128, (1, 4, 4, 3)).astype(np.int8),
           tflm, object_cache, tmp_path)


@pytest.mark.slow
def test_float_operators_on_qemu_equal_tflm(tflm, object_cache, tmp_path):  # noqa: F811
    _check("chainf", _float_chain, lambda r: r.normal(size=(1, 4, 4, 3)).astype(np.float32),
           tflm, object_cache, tmp_path)


@pytest.mark.slow
def test_resource_variable_state_on_qemu_equals_tflm(tflm, object_cache, tmp_path):  # noqa: F811
    _check("stream", _streaming, lambda r: r.integers(-30, 30, (1, 6)).astype(np.int8),
           tflm, object_cache, tmp_path, n=4)


def test_int8_log_softmax_on_qemu_equals_tflm(tflm, object_cache, tmp_path):  # noqa: F811
    _check("logsm", _log_softmax, lambda r: r.integers(-128, 128, (3, 20)).astype(np.int8),
           tflm, object_cache, tmp_path)


def _int16_input(rng):
    """Random, with the left half of the image at 32767 (sums past 2**31)."""
    x = rng.integers(-32768, 32768, (1, 6, 6, 64)).astype(np.int16)
    x[:, :, :3] = 32767
    return x


@pytest.mark.slow
def test_int16_layers_on_qemu_equal_tflm(tflm, object_cache, tmp_path):  # noqa: F811
    _check("chain16", _int16_chain, _int16_input, tflm, object_cache, tmp_path, n=4)


@pytest.mark.slow
def test_svdf_int8_state_on_qemu_equals_tflm(tflm, object_cache, tmp_path):  # noqa: F811
    _check("svdf8", _svdf_int8_state, lambda r: r.integers(-128, 128, (2, 7)).astype(np.int8),
           tflm, object_cache, tmp_path, n=5)


@pytest.mark.slow
def test_raw_data_movement_on_qemu_equals_tflm(tflm, object_cache, tmp_path):  # noqa: F811
    _check("rawmove", _raw_movement,
           lambda r: r.integers(-128, 128, (1, 3, 4, 2)).astype(np.int8),
           tflm, object_cache, tmp_path)


@pytest.mark.slow
def test_lstm_16x8_on_qemu_equals_tflm(tflm, object_cache, tmp_path):  # noqa: F811
    _check("lstm16", lstm_16x8,
           lambda r: r.integers(-32768, 32768, (2, 4, 5)).astype(np.int16),
           tflm, object_cache, tmp_path)
