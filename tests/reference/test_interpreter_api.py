"""The interpreter's API and ``aot interpret``: inputs, state, files and errors."""

from __future__ import annotations

import numpy as np
import pytest

from aot.cli import main
from aot.errors import AotError
from aot.frontend import load_model
from aot.ir import REGISTRY, GraphBuilder, Quantization, TensorType
from aot.reference import InterpretError, Session, run, supported_ops
from aot.reference.interpreter import kernel
from support.models import random_inputs


def _movement_graph():
    b = GraphBuilder()
    q = Quantization.per_tensor(0.1, 3)
    x = b.input("x", (2, 3, 4), "int8", q)
    t = b.op("transpose", [x], perm=(2, 0, 1))
    s = b.op("strided_slice", [t], begin=(3, 0, 0), end=(-5, 2, 3), strides=(-2, 1, 2))
    p = b.op("pad", [s], pad_width=((0, 0), (1, 0), (0, 2)))
    c = b.op("concatenate", [p, p], axis=1)
    r = b.op("reshape", [c], newshape=(2, 6, 4))
    return b.build([r]), x


def test_data_movement_equals_numpy():
    graph, _ = _movement_graph()
    x = np.arange(24, dtype=np.int8).reshape(2, 3, 4)
    (got,) = run(graph, [x])
    t = np.transpose(x, (2, 0, 1))[3::-2, 0:2, 0:3:2]
    p = np.pad(t, ((0, 0), (1, 0), (0, 2)), constant_values=3)  # the zero point
    assert np.array_equal(got, np.concatenate([p, p], axis=1).reshape(2, 6, 4))


def test_every_ir_operator_is_runnable():
    assert supported_ops() == set(REGISTRY)


def test_kernel_registry_refuses_duplicates():
    with pytest.raises(ValueError, match="registered twice"):
        kernel("reshape")(lambda node, args: args)


def test_inputs_by_name_and_validation():
    graph, x = _movement_graph()
    data = np.zeros((2, 3, 4), np.int8)
    assert np.array_equal(run(graph, {"x": data})[0], run(graph, [data])[0])
    with pytest.raises(InterpretError, match="unknown input 'y'"):
        run(graph, {"y": data})
    with pytest.raises(InterpretError, match=r"must have shape \[2, 3, 4\]"):
        run(graph, [np.zeros((3, 4), np.int8)])
    with pytest.raises(InterpretError, match="takes 1 inputs, got 2"):
        run(graph, [data, data])
    with pytest.raises(InterpretError, match="do not convert exactly"):
        run(graph, [np.full((2, 3, 4), 0.5)])
    # Values that convert exactly are accepted (e.g. int64 from np.arange).
    run(graph, [np.zeros((2, 3, 4), np.int64)])
    assert issubclass(InterpretError, AotError)


def test_session_state_persists_and_resets():
    b = GraphBuilder()
    x = b.input("x", (1, 4), "float32")
    state = b.variable("state", (1, 6), "float32")
    wf = b.constant("wf", np.arange(8, dtype=np.float32).reshape(2, 4) / 8)
    wt = b.constant("wt", np.ones((2, 3), np.float32))
    y = b.op("svdf", [x, wf, wt, None, state], rank=1)
    session = Session(b.build([y]))
    assert np.all(session.state[id(state)] == 0)
    ones = np.ones((1, 4), np.float32)
    first = session.invoke([ones])[0]
    second = session.invoke([ones])[0]
    assert np.allclose(second, 2 * first)  # the memory now holds two equal samples
    session.reset()
    assert np.array_equal(session.invoke([ones])[0], first)


@pytest.mark.parametrize("dtype, start", [("int8", 7), ("int16", 0)])
def test_quantized_state_starts_as_tflm_starts_it(dtype, start):
    """TFLM fills a fresh int8 variable with its zero point, any other with 0."""
    b = GraphBuilder()
    x = b.input("x", (1, 4), "int8", Quantization.per_tensor(0.1, 0))
    state = b.variable("state", (1, 6), dtype, Quantization.per_tensor(0.01, 7))
    wf = b.constant("wf", np.ones((2, 4), np.int8), quant=Quantization.per_tensor(0.1, 0))
    wt = b.constant("wt", np.ones((2, 3), dtype), quant=Quantization.per_tensor(0.1, 0))
    y = b.op("svdf", [x, wf, wt, None, state], rank=1,
             out_type=TensorType((1, 2), "int8", Quantization.per_tensor(0.5, 0)))
    session = Session(b.build([y]))
    assert np.all(session.state[id(state)] == start)


def test_cli_interpret_stacks_a_sequence(models_dir, tmp_path, capsys):
    model = models_dir / "tflm_micro_speech.tflite"
    sample = models_dir / "samples" / "tflm_micro_speech.npy"
    out = tmp_path / "y.npy"
    assert main(["interpret", str(model), "--input", str(sample), "--output", str(out)]) == 0
    assert "2 invocations" in capsys.readouterr().out
    y = np.load(out)
    assert y.shape == (2, 1, 4) and y.dtype == np.int8
    assert [int(np.argmax(v)) for v in y] == [2, 3]  # "yes", then "no"
    graph = load_model(model)
    x = np.load(sample)
    assert np.array_equal(y[1], run(graph, [x[1]])[0])


@pytest.mark.parametrize("name", ["tflm_keyword_scrambled_int16", "tflm_mnist_lstm_int8"])
def test_cli_interpret_runs_a_stateful_model_as_one_sequence(name, models_dir, tmp_path, tflm):  # noqa: F811
    """SVDF and LSTM keep state across the stacked inputs, as TFLM does over
    the same invocations of one interpreter, bit for bit."""
    model = models_dir / f"{name}.tflite"
    graph = load_model(model)
    sequence = random_inputs(graph, seed=7, count=4)
    np.save(tmp_path / "x.npy", np.stack([inv[0] for inv in sequence]))
    out = tmp_path / "y.npy"
    assert main(["interpret", str(model), "--input", str(tmp_path / "x.npy"),
                 "--output", str(out)]) == 0
    y = np.load(out)
    want = tflm.run(model.read_bytes(), sequence)
    assert np.array_equal(y, np.stack([w[0] for w in want]))
    if name == "tflm_mnist_lstm_int8":
        # the state shows: some input answers differently from a fresh state (the
        # SVDF model's softmax saturates on these inputs, so its outputs cannot tell)
        fresh = np.stack([run(graph, inv)[0] for inv in sequence])
        assert not np.array_equal(y, fresh)


def test_cli_interpret_accepts_npz(models_dir, tmp_path):
    model = models_dir / "tflm_hello_world_int8.tflite"
    x = np.load(models_dir / "samples" / "tflm_hello_world_int8.npy")
    np.savez(tmp_path / "x.npz", input_0=x)
    assert main(["interpret", str(model), "--input", str(tmp_path / "x.npz"),
                 "--output", str(tmp_path / "y.npz")]) == 0
    with np.load(tmp_path / "y.npz") as y:
        assert y["output_0"].shape == (len(x), 1, 1)


@pytest.mark.parametrize("content, message", [
    (np.zeros((1, 1960), np.int8), "expected an array of shape"),
    (np.zeros((2, 1, 1960), np.float32) + 0.5, "do not convert exactly"),
    (b"not numpy", "not a .npy or .npz file"),
    (np.array([{"a": 1}], dtype=object), "cannot read"),
    (b"", "cannot read"),
])
def test_cli_interpret_bad_inputs_exit_2(models_dir, tmp_path, capsys, content, message):
    path = tmp_path / "x.npy"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        np.save(path, content)
    code = main(["interpret", str(models_dir / "tflm_micro_speech.tflite"), "--input",
                 str(path), "--output", str(tmp_path / "y.npy")])
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_asymmetric_conv_weights_are_refused():
    b = GraphBuilder()
    x = b.input("x", (1, 4, 4, 1), "int8", Quantization.per_tensor(0.1, 0))
    w = b.constant("w", np.ones((1, 1, 1, 1), np.int8), quant=Quantization.per_tensor(0.1, 5))
    y = b.op("conv2d", [x, w],
             out_type=TensorType((1, 4, 4, 1), "int8", Quantization.per_tensor(0.1, 0)))
    with pytest.raises(InterpretError, match="zero point 0"):
        run(b.build([y]), [np.zeros((1, 4, 4, 1), np.int8)])
