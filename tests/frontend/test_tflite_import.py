"""The TFLite frontend: the shared models, operator conversions and bad input."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from support.models import MODELS

from aot.frontend import ModelError, load_model
from aot.frontend.tflite import SUPPORTED_OPERATORS, parse_tflite
from support.tflite_builder import ModelBuilder

TFLITE_MODELS = [m for m in MODELS if m["file"].endswith(".tflite")]

# MANIFEST operator name -> IR operator name.
IR_NAMES = {
    "CONV_2D": "conv2d", "DEPTHWISE_CONV_2D": "depthwise_conv2d", "FULLY_CONNECTED": "dense",
    "AVERAGE_POOL_2D": "avg_pool2d", "MAX_POOL_2D": "max_pool2d", "ADD": "add",
    "RESHAPE": "reshape", "SOFTMAX": "softmax", "SVDF": "svdf", "QUANTIZE": "quantize",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "lstm",
}


@pytest.mark.parametrize("entry", TFLITE_MODELS, ids=[m["name"] for m in TFLITE_MODELS])
def test_shared_model_imports_as_the_manifest_says(entry, models_dir):
    graph = load_model(models_dir / entry["file"])
    counts = Counter(n.op for n in graph.nodes)
    assert counts == Counter({IR_NAMES[k]: v for k, v in entry["ops"].items()})
    for tensors, listed in ((graph.inputs, entry["inputs"]), (graph.outputs, entry["outputs"])):
        assert len(tensors) == len(listed)
        for t, want in zip(tensors, listed):
            assert list(t.shape) == want["shape"]
            assert t.dtype == want["dtype"].lower()
            if "scale" in want:
                assert t.quant.scale[0] == pytest.approx(want["scale"], rel=1e-7)
                assert t.quant.zero_point[0] == want["zero_point"]
            else:
                assert t.quant is None


def test_stateful_model_has_variables(models_dir):
    graph = load_model(models_dir / "tflm_keyword_scrambled_int16.tflite")
    assert len(graph.variables()) == 7
    assert all(v.dtype == "int16" for v in graph.variables())
    lstm = load_model(models_dir / "tflm_mnist_lstm_int8.tflite")
    assert [v.dtype for v in lstm.variables()] == ["int8", "int16"]


# ---------------------------------------------------------------------- conversions

def _one_op(op, x_shape, y_shape, consts=(), dtype="float32", **options):
    mb = ModelBuilder()
    x = mb.input("x", x_shape, dtype)
    inputs = [x] + [mb.const(f"c{i}", c) if c is not None else -1 for i, c in enumerate(consts)]
    y = mb.output("y", y_shape, dtype)
    mb.op(op, inputs, [y], **options)
    return parse_tflite(mb.finish())


@pytest.mark.parametrize("size, k, stride, dilation, pads", [
    (7, 3, 1, 1, (1, 1)),
    (7, 3, 2, 1, (1, 1)),
    (8, 3, 2, 1, (0, 1)),   # the odd pixel goes after
    (8, 1, 3, 1, (0, 0)),
    (9, 3, 1, 2, (2, 2)),
    (5, 4, 1, 1, (1, 2)),
])
def test_conv_same_padding(size, k, stride, dilation, pads):
    w = np.zeros((2, k, k, 3), np.float32)
    out = -(-size // stride)
    g = _one_op("CONV_2D", [1, size, size, 3], [1, out, out, 2], [w, np.zeros(2, np.float32)],
                padding="SAME", stride_h=stride, stride_w=stride, dilation_h_factor=dilation,
                dilation_w_factor=dilation, fused_activation_function="RELU6")
    node = g.nodes[0]
    assert node.op == "conv2d"
    assert node.attrs["padding"] == (pads[0], pads[0], pads[1], pads[1])
    assert node.attrs["strides"] == (stride, stride)
    assert node.attrs["dilation"] == (dilation, dilation)
    assert node.attrs["activation"] == "relu6"


def test_depthwise_multiplier_comes_from_the_shapes():
    w = np.zeros((1, 3, 3, 6), np.float32)
    g = _one_op("DEPTHWISE_CONV_2D", [1, 5, 5, 3], [1, 3, 3, 6], [w, None], padding="VALID",
                stride_h=1, stride_w=1, depth_multiplier=0)
    assert g.nodes[0].attrs["depth_multiplier"] == 2
    assert g.nodes[0].inputs[2] is None


@pytest.mark.parametrize("act", ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])
def test_fused_activations(act):
    g = _one_op("ADD", [1, 4], [1, 4], [np.ones((1, 4), np.float32)],
                fused_activation_function=act)
    assert g.nodes[0].attrs["activation"] == act.lower()


def test_strided_slice_masks_resolve_to_python_slices():
    data = np.arange(2 * 6 * 5, dtype=np.float32).reshape(2, 6, 5)
    begin = np.array([1, -5, 4], np.int32)
    end = np.array([0, 6, 0], np.int32)
    strides = np.array([1, 2, -2], np.int32)
    g = _one_op("STRIDED_SLICE", [2, 6, 5], [3, 3], [begin, end, strides],
                shrink_axis_mask=1, end_mask=4)
    a = g.nodes[0].attrs
    sliced = data[tuple(slice(b, e, s) for b, e, s in zip(a["begin"], a["end"], a["strides"]))]
    assert np.array_equal(np.squeeze(sliced, a["squeeze_axes"]), data[1, 1:6:2, 4::-2])


def test_constant_operands_become_attributes():
    g = _one_op("PAD", [1, 3, 3, 2], [1, 5, 4, 2],
                [np.array([[0, 0], [1, 1], [0, 1], [0, 0]], np.int32)])
    assert g.nodes[0].attrs["pad_width"] == ((0, 0), (1, 1), (0, 1), (0, 0))
    g = _one_op("MEAN", [1, 3, 3, 2], [1, 2], [np.array([1, 2], np.int32)], keep_dims=False)
    assert g.nodes[0].attrs == {"axes": (1, 2), "keepdims": False}
    g = _one_op("TRANSPOSE", [1, 3, 4, 2], [1, 2, 3, 4], [np.array([0, 3, 1, 2], np.int32)])
    assert g.nodes[0].attrs["perm"] == (0, 3, 1, 2)
    g = _one_op("RESHAPE", [1, 3, 4, 2], [1, 24], [np.array([1, -1], np.int32)])
    assert g.nodes[0].attrs["newshape"] == (1, 24)


def test_int16x8_fully_connected():
    mb = ModelBuilder()
    x = mb.input("x", [1, 8], "int16", scale=0.01, zero_point=0)
    w = mb.const("w", np.ones((4, 8), np.int8), scale=0.02, zero_point=0)
    b = mb.const("b", np.zeros(4, np.int64), scale=0.0002, zero_point=0)
    y = mb.output("y", [1, 4], "int16", scale=0.05, zero_point=0)
    mb.op("FULLY_CONNECTED", [x, w, b], [y])
    node = parse_tflite(mb.finish()).nodes[0]
    assert node.op == "dense"
    assert [t.dtype for t in node.inputs] == ["int16", "int8", "int64"]


# ---------------------------------------------------------------------- bad input

def test_wrong_identifier(models_dir):
    onnx = (models_dir / "onnx_mnist8.onnx").read_bytes()
    with pytest.raises(ModelError, match="file identifier"):
        parse_tflite(onnx)
    with pytest.raises(ModelError, match="only 3 bytes"):
        parse_tflite(b"abc")


@pytest.mark.parametrize("keep", [8, 100, 1000, 20000])
def test_truncated_file(models_dir, keep):
    data = (models_dir / "mlperf_kws_dscnn.tflite").read_bytes()[:keep]
    with pytest.raises(ModelError, match="corrupted or truncated|buffer holds"):
        parse_tflite(data)


def test_unsupported_operator_is_named_with_its_index():
    mb = ModelBuilder()
    x = mb.input("x", [1, 4], "float32")
    y = mb.tensor("y", [1, 4], "float32")
    z = mb.output("z", [1, 4], "float32")
    mb.op("RELU", [x], [y])
    mb.op("TOPK_V2", [y], [z])
    with pytest.raises(ModelError) as err:
        parse_tflite(mb.finish())
    message = str(err.value)
    assert "operator 1 (TOPK_V2) is not supported" in message
    assert all(name in message for name in SUPPORTED_OPERATORS)


def test_unsupported_dtype():
    mb = ModelBuilder()
    x = mb.input("x", [1, 4], "float32")
    y = mb.output("y", [1, 4], "float32")
    mb.op("RELU", [x], [y])
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as fb
    mb.tensors[x].type = fb.TensorType.FLOAT16
    with pytest.raises(ModelError, match="type FLOAT16, which is not supported"):
        parse_tflite(mb.finish())


def test_inconsistent_shapes():
    w = np.zeros((2, 3, 3, 3), np.float32)
    with pytest.raises(ModelError, match=r"operator 0 \(CONV_2D\).*declared float32\[1, 4, 4, 2\]"):
        _one_op("CONV_2D", [1, 5, 5, 3], [1, 4, 4, 2], [w, None], padding="SAME",
                stride_h=1, stride_w=1)


def test_unsupported_fused_activation():
    with pytest.raises(ModelError, match="fused activation tanh is not supported"):
        _one_op("ADD", [1, 4], [1, 4], [np.ones((1, 4), np.float32)],
                fused_activation_function="TANH")


def test_missing_file(tmp_path):
    with pytest.raises(ModelError, match="cannot read"):
        load_model(tmp_path / "absent.tflite")


@pytest.mark.parametrize("name", ["tflm_hello_world_int8", "tflm_mnist_lstm_int8"])
def test_printed_graph_matches_golden(name, models_dir):
    """The imported graph's text form is stable (regenerate the file on purpose only)."""
    golden = Path(__file__).parent / "golden" / f"{name}.txt"
    assert str(load_model(models_dir / f"{name}.tflite")) == golden.read_text()


def test_load_model_picks_the_frontend(models_dir, tmp_path):
    assert load_model(models_dir / "onnx_mnist8.onnx").name == "onnx_mnist8"
    other = tmp_path / "model.bin"
    other.write_bytes(b"\0" * 16)
    with pytest.raises(ModelError, match="unknown model format"):
        load_model(other)
    # The identifier decides, not the suffix.
    renamed = tmp_path / "kws.bin"
    renamed.write_bytes((models_dir / "mlperf_kws_dscnn.tflite").read_bytes())
    assert len(load_model(renamed).nodes) == 13


def test_absurd_tensor_sizes_are_refused():
    with pytest.raises(ModelError, match="limited to 2 GiB"):
        _one_op("RELU", [65536, 65536], [65536, 65536])
