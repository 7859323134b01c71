"""The ONNX frontend on the shared mnist-8 pair, on bad input, and through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from support.onnx_oracle import ort_session

from aot.cli import main
from aot.frontend import ModelError, load_model
from aot.frontend.onnx import SUPPORTED_OPERATORS, parse_onnx
from aot.reference.interpreter import run

FLOAT_MODEL = "onnx_mnist8.onnx"
QDQ_MODEL = "onnx_mnist8_int8_qdq.onnx"
OPSET13 = helper.make_opsetid("", 13)


def _session(path):
    return ort_session(path, quiet=True)  # the zoo model lists its initializers as inputs


def _inputs(models_dir, count: int = 8) -> list[np.ndarray]:
    """The 3 sample digits, then seeded random images in the same 0..255 range."""
    samples = np.load(models_dir / "samples" / "onnx_mnist8.npy")
    rng = np.random.default_rng(1234)
    rand = [rng.uniform(0, 255, samples.shape[1:]).astype(np.float32) for _ in range(count)]
    return [*samples, *rand]


# ---------------------------------------------------------------------- shared models

def test_float_mnist_imports_in_nhwc(models_dir):
    graph = load_model(models_dir / FLOAT_MODEL)
    assert Counter(n.op for n in graph.nodes) == Counter(
        {"conv2d": 2, "add": 3, "relu": 2, "max_pool2d": 2, "reshape": 2, "dense": 1})
    assert [list(t.shape) for t in graph.inputs] == [[1, 1, 28, 28]]
    assert [list(t.shape) for t in graph.outputs] == [[1, 10]]
    # One input channel: NCHW -> NHWC is a reshape; the flatten before the
    # dense layer is folded into the dense weights, so no transpose is left.
    assert "transpose" not in [n.op for n in graph.nodes]
    conv = next(n for n in graph.nodes if n.op == "conv2d")
    assert conv.inputs[1].shape == (8, 5, 5, 1)  # OHWI
    assert conv.attrs["padding"] == (2, 2, 2, 2)  # SAME_UPPER


def test_float_mnist_matches_the_expected_outputs_and_onnxruntime(models_dir):
    graph = load_model(models_dir / FLOAT_MODEL)
    expected = np.load(models_dir / "samples" / "onnx_mnist8_expected.npy")
    sess = _session(models_dir / FLOAT_MODEL)
    inputs = _inputs(models_dir)
    for i, x in enumerate(inputs):
        ours = run(graph, [x])[0]
        ref = sess.run(None, {"Input3": x})[0]
        np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
        if i < len(expected):
            np.testing.assert_allclose(ours, expected[i].reshape(ours.shape), rtol=1e-5,
                                       atol=1e-5 * np.abs(expected[i]).max())
    assert [int(run(graph, [x])[0].argmax()) for x in inputs[:3]] == [2, 0, 9]


def test_qdq_mnist_is_integer_compute(models_dir):
    graph = load_model(models_dir / QDQ_MODEL)
    ops = [(n.op, n.outputs[0].dtype) for n in graph.nodes]
    assert ops[0] == ("quantize", "int8") and ops[-1] == ("dequantize", "float32")
    assert all(dtype == "int8" for _, dtype in ops[1:-1]), ops
    assert Counter(op for op, _ in ops[1:-1]) == Counter(
        {"conv2d": 2, "add": 2, "max_pool2d": 2, "reshape": 2, "dense": 1})
    dense = next(n for n in graph.nodes if n.op == "dense")
    assert dense.inputs[1].dtype == "int8" and dense.inputs[2].dtype == "int32"


def test_qdq_mnist_matches_onnxruntime_within_one_output_step(models_dir):
    """Same argmax as onnxruntime, and at most one step of the output scale apart.

    Measured with onnxruntime 1.31 over the 3 samples and 8 seeded random
    images: at most 1.0 step (39.78 in float), most outputs equal.  The
    difference comes from the requantization arithmetic, not from the graph:
    onnxruntime rounds the input's QuantizeLinear half to even and requantizes
    its int32 accumulators with a float32 multiplier, while the reference
    kernels round half away from zero and requantize with TFLM's fixed-point
    multipliers (a Q31 multiplier and a shift, rounded twice).
    """
    graph = load_model(models_dir / QDQ_MODEL)
    step = graph.nodes[-1].inputs[0].quant.scale[0]
    sess = _session(models_dir / QDQ_MODEL)
    worst = 0.0
    for x in _inputs(models_dir):
        ours = run(graph, [x])[0]
        ref = sess.run(None, {"Input3": x})[0]
        assert ours.argmax() == ref.argmax()
        worst = max(worst, float(np.abs(ours.astype(np.float64) - ref).max() / step))
    assert worst <= 1.0 + 1e-6, f"{worst} output steps apart"


def test_qdq_and_float_mnist_agree_on_the_samples(models_dir):
    qdq, flt = load_model(models_dir / QDQ_MODEL), load_model(models_dir / FLOAT_MODEL)
    for x in np.load(models_dir / "samples" / "onnx_mnist8.npy"):
        assert run(qdq, [x])[0].argmax() == run(flt, [x])[0].argmax()


# ---------------------------------------------------------------------- bad input

def _model(nodes, inputs, inits=None, opset=13, input_shape=None):
    infos = [helper.make_tensor_value_info(n, TensorProto.FLOAT, input_shape or s)
             for n, s in inputs]
    graph = helper.make_graph(
        nodes, "bad", infos, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(v, k) for k, v in (inits or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return model.SerializeToString()


def test_a_graph_input_returned_as_an_output_gets_its_own_buffer():
    graph = parse_onnx(_model([helper.make_node("Identity", ["x"], ["y"])], [("x", [1, 4])]))
    (x,), (y,) = graph.inputs, graph.outputs
    assert (x.name, y.name) == ("x", "y") and y is not x
    data = np.arange(4, dtype=np.float32).reshape(1, 4)
    np.testing.assert_array_equal(run(graph, [data])[0], data)


def test_an_output_made_in_another_layout_keeps_the_onnx_name():
    # Conv computes in NHWC; the graph output is the transpose back to NCHW.
    w = np.ones((2, 1, 1, 1), np.float32)
    graph = parse_onnx(_model([helper.make_node("Conv", ["x", "w"], ["y"])],
                              [("x", [1, 1, 3, 3])], inits={"w": w}))
    (y,) = graph.outputs
    assert y.name == "y" and y.shape == (1, 2, 3, 3)
    names = [t.name for t in graph.tensors() if t.kind != "constant"]
    assert len(names) == len(set(names))


def _error(data: bytes) -> str:
    with pytest.raises(ModelError) as info:
        parse_onnx(data)
    return str(info.value)


def test_unsupported_operator_names_itself_its_node_and_the_supported_list():
    data = _model([helper.make_node("Relu", ["x"], ["r"], name="first"),
                   helper.make_node("Pow", ["r", "r"], ["y"], name="my_pow")], [("x", [1, 4])])
    message = _error(data)
    assert "node 1 ('my_pow', Pow)" in message and "Pow is not supported" in message
    assert ", ".join(SUPPORTED_OPERATORS) in message


def test_operator_from_another_domain_is_refused():
    node = helper.make_node("QLinearAdd", ["x"], ["y"], domain="com.microsoft")
    assert "com.microsoft.QLinearAdd is not supported" in _error(
        _model([node], [("x", [1, 4])]))


W = np.ones((4, 2, 3, 3), np.float32)
BAD_ATTRIBUTES = {
    "grouped_conv": (helper.make_node("Conv", ["x", "w"], ["y"], group=2), {"w": W},
                     "group=2 (grouped convolution) is not supported"),
    "auto_pad": (helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="WRONG"),
                 {"w": np.ones((4, 4, 3, 3), np.float32)}, "auto_pad 'WRONG' is not supported"),
    "pool_3d": (helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2, 2]), {},
                "kernel_shape [2, 2, 2]: only 2-D windows are supported"),
    "pool_dilations": (helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2],
                                        dilations=[2, 2]), {},
                       "dilations [2, 2] are not supported for pooling"),
    "storage_order": (helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2],
                                       storage_order=1), {}, "storage_order=1"),
    "unknown_attribute": (helper.make_node("Relu", ["x"], ["y"], colour="blue"), {},
                          "attribute 'colour' is not supported"),
    "conv_3d": (helper.make_node("Conv", ["x", "w"], ["y"]),
                {"w": np.ones((2, 4, 3), np.float32)}, "only 2-D Conv on [N, C, H, W] data"),
    "computed_weights": (helper.make_node("Conv", ["x", "x"], ["y"]), {},
                         "weights (input 1) must be known at import (computed weights are "
                         "not supported), but its value 'x' is a graph input"),
}


@pytest.mark.parametrize("node,inits,expected", BAD_ATTRIBUTES.values(),
                         ids=BAD_ATTRIBUTES.keys())
def test_unsupported_attribute_is_a_clear_error(node, inits, expected):
    x_shape = ([1, 4, 7, 7] if node.op_type != "Conv" or "w" not in inits
               or inits["w"].ndim == 4 else [1, 4, 7])
    message = _error(_model([node], [("x", x_shape)], inits))
    assert expected in message and f"({node.op_type})" in message


def test_unsupported_opset_and_dtype():
    for opset in (5, 24):
        data = _model([helper.make_node("Relu", ["x"], ["y"])], [("x", [1, 4])], opset=opset)
        assert f"ONNX opset {opset} is not supported; supported: 7 to 23" in _error(data)
    infos = [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2])]
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "d", infos,
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)])
    assert "has type DOUBLE, which is not supported" in _error(
        helper.make_model(graph, opset_imports=[OPSET13]).SerializeToString())


def test_corrupted_files_are_model_errors(models_dir):
    good = (models_dir / FLOAT_MODEL).read_bytes()
    cases = [b"", good[: len(good) // 2], good[:100], b"\xff" * 64, b"TFL3" * 10,
             bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8))]
    for data in cases:
        message = _error(data)
        assert "ONNX" in message


def _small_qdq_model() -> bytes:
    """Many attributes and quantization parameters in few bytes, for mutation."""
    q = {"s": np.float32(0.05), "z": np.int8(3)}
    inits = {**q, "w": np.ones((4, 2, 3, 3), np.int8), "ws": np.full(4, 0.01, np.float32),
             "wz": np.zeros(4, np.int8), "W": np.ones((64, 3), np.float32),
             "shape": np.array([1, -1], np.int64)}
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
             helper.make_node("Conv", ["xd", "wd"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("QuantizeLinear", ["r", "s", "z"], ["rq"]),
             helper.make_node("DequantizeLinear", ["rq", "s", "z"], ["rd"]),
             helper.make_node("AveragePool", ["rd"], ["p"], kernel_shape=[2, 2],
                              pads=[0, 0, 1, 1]),
             helper.make_node("Softmax", ["p"], ["sm"], axis=1),
             helper.make_node("Reshape", ["sm", "shape"], ["f"]),
             helper.make_node("Gemm", ["f", "W"], ["y"], transA=0, alpha=1.0)]
    return _model(nodes, [("x", [1, 2, 8, 8])], inits)


@pytest.mark.parametrize("source", ["qdq_mnist", "small"])
@pytest.mark.one_fast
def test_mutated_copies_raise_only_model_errors(source, models_dir):
    """Changed bytes either still import or raise ModelError; nothing else escapes."""
    good = ((models_dir / QDQ_MODEL).read_bytes() if source == "qdq_mnist"
            else _small_qdq_model())
    parse_onnx(good)
    rng = np.random.default_rng(7)
    for _ in range(150):
        data = bytearray(good)
        for pos in rng.integers(0, len(data), int(rng.integers(1, 5))):
            data[pos] = int(rng.integers(0, 256))
        try:
            parse_onnx(bytes(data))
        except ModelError:
            pass


# ---------------------------------------------------------------------- command line

def test_inspect_and_interpret_work_on_onnx_files(models_dir, tmp_path, capsys):
    path = models_dir / FLOAT_MODEL
    assert main(["inspect", str(path)]) == 0
    assert "conv2d" in capsys.readouterr().out
    assert main(["inspect", "--json", str(models_dir / QDQ_MODEL)]) == 0
    info = json.loads(capsys.readouterr().out)
    # Counted by hand: 28*28 outputs x 8 channels x 5*5 taps, 14*14 x 16 x 5*5*8, 256 x 10.
    macs = [(layer["op"], layer["macs"]) for layer in info["layers"] if layer["macs"]]
    assert macs == [("conv2d", 156800), ("conv2d", 627200), ("dense", 2560)]
    assert info["total_macs"] == 156800 + 627200 + 2560
    # Counted by hand: the bias add of the first convolution reads the 28x28x8 int8
    # convolution output while writing its own 28x28x8 output; nothing else is larger.
    assert info["activation_peak_bytes"] == 2 * 28 * 28 * 8
    assert info["layers"][info["activation_peak_node"]]["op"] == "add"
    x = np.load(models_dir / "samples" / "onnx_mnist8.npy")
    np.save(tmp_path / "x.npy", x)
    assert main(["interpret", str(path), "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "y.npy")]) == 0
    y = np.load(tmp_path / "y.npy")
    expected = np.load(models_dir / "samples" / "onnx_mnist8_expected.npy")
    np.testing.assert_allclose(y.reshape(expected.shape), expected, rtol=1e-5,
                               atol=1e-5 * np.abs(expected).max())


def test_cli_reports_a_bad_onnx_file_in_one_line(tmp_path, capsys):
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(b"\x08\x07\x12\x03abc\xff\xff")
    assert main(["inspect", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("aot inspect: error:") and "ONNX" in err and "\n" not in err


def test_importing_aot_does_not_load_onnx():
    code = ("import sys, aot, aot.frontend, aot.frontend.onnx; "
            "sys.exit(1 if 'onnx' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
