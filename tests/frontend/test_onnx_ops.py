"""ONNX operators one at a time: small models built with onnx.helper, compared with
onnxruntime (float: within 1e-5 of the largest output magnitude; integer: see each test)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from support.onnx_oracle import ort_session

from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.frontend import ModelError
from aot.frontend.onnx import parse_onnx
from aot.reference.interpreter import run

FLOAT = TensorProto.FLOAT


def make_model(nodes, inputs, outputs=("y",), initializers=None, opset: int = 13):
    """A model from ``nodes``; ``inputs`` are (name, shape) pairs, ``outputs`` names."""
    infos = [helper.make_tensor_value_info(n, FLOAT, s) for n, s in inputs]
    outs = [helper.make_tensor_value_info(o, FLOAT, None) for o in outputs]
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()]
    graph = helper.make_graph(list(nodes), "test", infos, outs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8  # onnxruntime reads it for every opset used here
    return model


def run_both(model, feeds: dict[str, np.ndarray]):
    """(our graph, our outputs, onnxruntime's outputs)."""
    graph = parse_onnx(model.SerializeToString(), name="test")
    ours = run(graph, feeds)
    sess = ort_session(model.SerializeToString())
    return graph, ours, sess.run(None, feeds)


def assert_close(model, feeds, rtol: float = 1e-5):
    """Float outputs agree within ``rtol`` of each output's largest magnitude."""
    graph, ours, theirs = run_both(model, feeds)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and a.dtype == b.dtype
        scale = max(float(np.abs(b).max()), 1e-30)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale)
    return graph


def rand(shape, seed: int = 0, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(np.float32)


def ops(graph) -> list[str]:
    return [n.op for n in graph.nodes]


# ---------------------------------------------------------------------- Conv

CONV_CASES = {
    "plain": dict(kernel_shape=[3, 3]),
    "strides": dict(strides=[2, 2]),
    "pads_asymmetric": dict(pads=[1, 0, 2, 1], strides=[2, 1]),
    "dilations": dict(dilations=[2, 2], pads=[2, 2, 2, 2]),
    "same_upper": dict(auto_pad="SAME_UPPER", strides=[2, 2]),
    "same_lower": dict(auto_pad="SAME_LOWER", strides=[2, 2]),
    "valid": dict(auto_pad="VALID"),
}


@pytest.mark.parametrize("attrs", CONV_CASES.values(), ids=CONV_CASES.keys())
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
def test_conv(attrs, bias):
    inits = {"w": rand((6, 3, 3, 3), 1), "b": rand((6,), 2)}
    inputs = ["x", "w", "b"] if bias else ["x", "w"]
    model = make_model([helper.make_node("Conv", inputs, ["y"], **attrs)],
                       [("x", [1, 3, 9, 8])], initializers=inits)
    graph = assert_close(model, {"x": rand((1, 3, 9, 8))})
    assert "conv2d" in ops(graph)


@pytest.mark.parametrize("multiplier", [1, 2])
def test_depthwise_conv(multiplier):
    inits = {"w": rand((4 * multiplier, 1, 3, 3), 1), "b": rand((4 * multiplier,), 2)}
    model = make_model([helper.make_node("Conv", ["x", "w", "b"], ["y"], group=4,
                                         pads=[1, 1, 1, 1])],
                       [("x", [1, 4, 7, 7])], initializers=inits)
    graph = assert_close(model, {"x": rand((1, 4, 7, 7))})
    node = next(n for n in graph.nodes if n.op == "depthwise_conv2d")
    assert node.attrs["depth_multiplier"] == multiplier


# ---------------------------------------------------------------------- Gemm, MatMul

@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (0.5, 2.0)])
@pytest.mark.parametrize("c_shape", [(5,), (1, 5), (3, 5), (), None], ids=str)
def test_gemm(trans_a, trans_b, alpha, beta, c_shape):
    a_shape = (4, 3) if trans_a else (3, 4)
    b_shape = (5, 4) if trans_b else (4, 5)
    inits = {"B": rand(b_shape, 1)}
    inputs = ["A", "B"]
    if c_shape is not None:
        inits["C"] = rand(c_shape, 2)
        inputs.append("C")
    model = make_model([helper.make_node("Gemm", inputs, ["y"], transA=trans_a,
                                         transB=trans_b, alpha=alpha, beta=beta)],
                       [("A", list(a_shape))], initializers=inits)
    graph = assert_close(model, {"A": rand(a_shape)})
    assert "dense" in ops(graph)


@pytest.mark.parametrize("a_shape", [(3, 4), (2, 3, 4)], ids=str)
def test_matmul(a_shape):
    model = make_model([helper.make_node("MatMul", ["A", "B"], ["y"])],
                       [("A", list(a_shape))], initializers={"B": rand((4, 6), 1)})
    graph = assert_close(model, {"A": rand(a_shape)})
    # Rank > 2: one dense that keeps the leading axes (keep_num_dims)
    assert ops(graph) == ["dense"]
    assert graph.nodes[0].attrs["keep_num_dims"] == (len(a_shape) > 2)


# ---------------------------------------------------------------------- elementwise

def _after_conv(nodes, extra_inits=None, x_shape=(1, 2, 5, 5), opset=13, outputs=("y",)):
    """``nodes`` reading "c", the NCHW output of a 1x1 Conv (held NHWC inside)."""
    inits = {"w": rand((3, x_shape[1], 1, 1), 7), **(extra_inits or {})}
    conv = helper.make_node("Conv", ["x", "w"], ["c"])
    return make_model([conv, *nodes], [("x", list(x_shape))], outputs, inits, opset)


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul"])
@pytest.mark.parametrize("k_shape", [(3, 1, 1), (1, 3, 5, 1), (5,), ()], ids=str)
def test_binary_with_constant_on_nchw(op, k_shape):
    model = _after_conv([helper.make_node(op, ["c", "k"], ["y"])], {"k": rand(k_shape, 3)})
    graph = assert_close(model, {"x": rand((1, 2, 5, 5))})
    # the constant is laid out NHWC at import; only the graph's ends transpose
    assert ops(graph) == ["transpose", "conv2d", op.lower(), "transpose"]


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul"])
def test_binary_of_two_inputs_broadcast(op):
    model = make_model([helper.make_node(op, ["a", "b"], ["y"])],
                       [("a", [2, 3, 4]), ("b", [3, 1])])
    assert_close(model, {"a": rand((2, 3, 4), 1), "b": rand((3, 1), 2)})


def test_binary_of_nchw_and_plain_activation():
    model = _after_conv([helper.make_node("Add", ["c", "x2"], ["y"])])
    model.graph.input.append(helper.make_tensor_value_info("x2", FLOAT, [1, 3, 5, 5]))
    assert_close(model, {"x": rand((1, 2, 5, 5)), "x2": rand((1, 3, 5, 5), 4)})


@pytest.mark.parametrize("op,ir", [("Relu", "relu"), ("Sigmoid", "logistic"),
                                   ("Tanh", "tanh")])
def test_unary(op, ir):
    model = _after_conv([helper.make_node(op, ["c"], ["y"])])
    graph = assert_close(model, {"x": rand((1, 2, 5, 5), lo=-4, hi=4)})
    assert ir in ops(graph)


CLIP_CASES = {
    "min_max": (0.0, 6.0, ["relu6"]),
    "min_only": (0.0, None, ["relu"]),
    "max_only": (None, 0.25, ["minimum"]),
    "other": (-0.5, 0.5, ["maximum", "minimum"]),
}


@pytest.mark.parametrize("lo,hi,ir", CLIP_CASES.values(), ids=CLIP_CASES.keys())
def test_clip_bounds_as_inputs(lo, hi, ir):
    inits, inputs = {}, ["c", "", ""]
    if lo is not None:
        inits["lo"] = np.float32(lo)
        inputs[1] = "lo"
    if hi is not None:
        inits["hi"] = np.float32(hi)
        inputs[2] = "hi"
    model = _after_conv([helper.make_node("Clip", inputs, ["y"])], inits)
    graph = assert_close(model, {"x": rand((1, 2, 5, 5), lo=-8, hi=8)})
    assert [o for o in ops(graph) if o in ("relu", "relu6", "maximum", "minimum")] == ir


def test_clip_bounds_as_attributes_before_opset_11():
    model = _after_conv([helper.make_node("Clip", ["c"], ["y"], min=-0.5, max=0.75)],
                        opset=10)
    assert_close(model, {"x": rand((1, 2, 5, 5), lo=-4, hi=4)})


# ---------------------------------------------------------------------- pooling

POOL_CASES = {
    "k2s2": dict(kernel_shape=[2, 2], strides=[2, 2]),
    "k3s1_pads": dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    "k3s2_asym": dict(kernel_shape=[3, 2], strides=[2, 1], pads=[0, 1, 1, 0]),
    "same_upper": dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
    "ceil_exact": dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
}


@pytest.mark.parametrize("attrs", POOL_CASES.values(), ids=POOL_CASES.keys())
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_pool(op, attrs):
    model = _after_conv([helper.make_node(op, ["c"], ["y"], **attrs)], x_shape=(1, 2, 7, 7))
    assert_close(model, {"x": rand((1, 2, 7, 7))})


def test_average_pool_counting_the_padding():
    model = _after_conv([helper.make_node("AveragePool", ["c"], ["y"], kernel_shape=[3, 3],
                                          pads=[1, 1, 1, 1], count_include_pad=1)])
    graph = assert_close(model, {"x": rand((1, 2, 5, 5))})
    assert "pad" in ops(graph)


@pytest.mark.parametrize("op,ir", [("GlobalAveragePool", "avg_pool2d"),
                                   ("GlobalMaxPool", "max_pool2d")])
def test_global_pool(op, ir):
    model = _after_conv([helper.make_node(op, ["c"], ["y"])], x_shape=(1, 2, 6, 4))
    assert ir in ops(assert_close(model, {"x": rand((1, 2, 6, 4))}))


# ---------------------------------------------------------------------- shapes

@pytest.mark.parametrize("axis", [0, 1, 2, 3, 4])
def test_flatten_axis(axis):
    model = _after_conv([helper.make_node("Flatten", ["c"], ["y"], axis=axis)],
                        x_shape=(2, 2, 3, 4))
    assert_close(model, {"x": rand((2, 2, 3, 4))})


@pytest.mark.parametrize("op", ["Flatten", "Reshape"])
def test_flatten_then_dense_folds_the_transpose_into_the_weights(op):
    flat = (helper.make_node("Flatten", ["c"], ["f"]) if op == "Flatten"
            else helper.make_node("Reshape", ["c", "shape"], ["f"]))
    model = _after_conv([flat, helper.make_node("Gemm", ["f", "W", "b"], ["y"])],
                        {"W": rand((75, 4), 5), "b": rand((4,), 6),
                         "shape": np.array([1, -1], np.int64)})
    graph = assert_close(model, {"x": rand((1, 2, 5, 5))})
    assert ops(graph) == ["transpose", "conv2d", "reshape", "dense"]  # input NCHW -> NHWC


def test_flatten_relu_dense_still_folds_the_transpose():
    model = _after_conv([helper.make_node("Flatten", ["c"], ["f"]),
                         helper.make_node("Relu", ["f"], ["r"]),
                         helper.make_node("MatMul", ["r", "W"], ["y"])], {"W": rand((75, 4), 5)})
    graph = assert_close(model, {"x": rand((1, 2, 5, 5))})
    assert ops(graph) == ["transpose", "conv2d", "reshape", "relu", "dense"]


def test_flatten_then_elementwise_restores_onnx_order():
    model = _after_conv([helper.make_node("Flatten", ["c"], ["f"]),
                         helper.make_node("Relu", ["f"], ["r"]),
                         helper.make_node("Add", ["r", "k"], ["y"])],
                        {"k": rand((75,), 3)})
    graph = assert_close(model, {"x": rand((1, 2, 5, 5))})
    assert "transpose" in ops(graph)


@pytest.mark.parametrize("shape", [[1, -1], [0, 3, 25], [5, 15], [-1, 5, 0]], ids=str)
def test_reshape(shape):
    model = _after_conv([helper.make_node("Reshape", ["c", "s"], ["y"])],
                        {"s": np.array(shape, np.int64)})
    assert_close(model, {"x": rand((1, 2, 5, 5))})


def test_reshape_shape_computed_from_constants_is_folded():
    nodes = [helper.make_node("Shape", ["c"], ["shp"]),
             helper.make_node("Gather", ["shp", "i0"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "ax"], ["n1"]),
             helper.make_node("Concat", ["n1", "m1"], ["s"], axis=0),
             helper.make_node("Reshape", ["c", "s"], ["y"])]
    model = _after_conv(nodes, {"i0": np.array(0, np.int64), "ax": np.array([0], np.int64),
                                "m1": np.array([-1], np.int64)})
    graph = assert_close(model, {"x": rand((1, 2, 5, 5))})
    assert ops(graph)[-1] == "reshape"


@pytest.mark.parametrize("perm", [[0, 2, 3, 1], [0, 3, 1, 2], [3, 2, 1, 0], None], ids=str)
def test_transpose(perm):
    attrs = {} if perm is None else {"perm": perm}
    model = _after_conv([helper.make_node("Transpose", ["c"], ["y"], **attrs)],
                        x_shape=(1, 2, 4, 5))
    graph = assert_close(model, {"x": rand((1, 2, 4, 5))})
    if perm == [0, 2, 3, 1]:  # NCHW -> NHWC is the layout the data already has
        assert ops(graph) == ["transpose", "conv2d"]


def test_transpose_of_a_plain_input():
    model = make_model([helper.make_node("Transpose", ["x"], ["y"], perm=[1, 2, 0])],
                       [("x", [2, 3, 4])])
    assert_close(model, {"x": rand((2, 3, 4))})


@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1])
def test_concat(axis):
    nodes = [helper.make_node("Conv", ["x", "w2"], ["c2"]),
             helper.make_node("Concat", ["c", "c2", "k"], ["y"], axis=axis)]
    k_shape = [1, 3, 5, 5]
    k_shape[axis] = 2
    model = _after_conv(nodes, {"w2": rand((3, 2, 1, 1), 8), "k": rand(k_shape, 9)})
    assert_close(model, {"x": rand((1, 2, 5, 5))})


@pytest.mark.parametrize("axis", [1, 2, 3, -1])
def test_softmax_axis(axis):
    model = _after_conv([helper.make_node("Softmax", ["c"], ["y"], axis=axis)])
    assert_close(model, {"x": rand((1, 2, 5, 5), lo=-3, hi=3)})


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_softmax_before_opset_13_flattens_at_axis(axis):
    model = make_model([helper.make_node("Softmax", ["x"], ["y"], axis=axis)],
                       [("x", [2, 3, 4])], opset=11)
    assert_close(model, {"x": rand((2, 3, 4), lo=-3, hi=3)})


def test_softmax_2d_default_axis():
    model = make_model([helper.make_node("Softmax", ["x"], ["y"])], [("x", [3, 10])])
    assert ops(assert_close(model, {"x": rand((3, 10), lo=-3, hi=3)})) == ["softmax"]


# ---------------------------------------------------------------------- quantized
#
# onnxruntime requantizes with a float multiplier and rounds half to even; the
# reference kernels use TFLM's fixed-point multipliers (round half away, two
# roundings).  So integer results may differ by one step of the output scale,
# never more.

INT8 = TensorProto.INT8
UINT8 = TensorProto.UINT8


def _q(name, scale, zp, zp_type=INT8):
    """Initializers for a scale and zero point."""
    zdt = np.int8 if zp_type == INT8 else np.uint8
    return {f"{name}_s": np.asarray(scale, np.float32), f"{name}_z": np.asarray(zp, zdt)}


def assert_within_one_step(model, feeds, y_scale: float, int_ops: list[str]):
    graph, ours, theirs = run_both(model, feeds)
    steps = np.abs(ours[0].astype(np.float64) - theirs[0]) / y_scale
    assert steps.max() <= 1.0 + 1e-6, f"{steps.max()} output steps apart"
    assert np.mean(steps > 0.5) < 0.2  # off-by-one is the exception, not the rule
    int_nodes = [n.op for n in graph.nodes if n.outputs[0].dtype == "int8"]
    for op in int_ops:
        assert op in int_nodes, f"{op} is not integer compute: {ops(graph)}"
    return graph


def _weights_int8(shape, seed, per_channel: bool):
    rng = np.random.default_rng(seed)
    w = rng.integers(-127, 128, shape).astype(np.int8)
    scale = (rng.uniform(0.002, 0.01, shape[0]) if per_channel else np.float32(0.005))
    return w, np.asarray(scale, np.float32)


@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
@pytest.mark.parametrize("zp_type", [INT8, UINT8], ids=["int8", "uint8"])
def test_qlinear_conv(per_channel, zp_type):
    w, ws = _weights_int8((4, 3, 3, 3), 1, per_channel)
    xs, ys = 0.02, 0.05
    xz, yz = (3, -5) if zp_type == INT8 else (131, 120)
    bias = np.random.default_rng(2).integers(-2000, 2000, 4).astype(np.int32)
    inits = {**_q("x", xs, xz, zp_type), **_q("y", ys, yz, zp_type), "w": w, "w_s": ws,
             "w_z": np.zeros(ws.shape, np.int8), "b": bias}
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_s", "x_z"], ["xq"]),
             helper.make_node("QLinearConv", ["xq", "x_s", "x_z", "w", "w_s", "w_z", "y_s",
                                              "y_z", "b"], ["yq"], pads=[1, 1, 1, 1],
                              strides=[2, 1]),
             helper.make_node("DequantizeLinear", ["yq", "y_s", "y_z"], ["y"])]
    model = make_model(nodes, [("x", [1, 3, 7, 6])], initializers=inits)
    assert_within_one_step(model, {"x": rand((1, 3, 7, 6), 3, -2, 2)}, ys, ["conv2d"])


@pytest.mark.parametrize("per_column", [False, True], ids=["per_tensor", "per_column"])
def test_qlinear_matmul(per_column):
    w, ws = _weights_int8((6, 8), 1, False)
    if per_column:
        ws = np.random.default_rng(5).uniform(0.002, 0.01, 8).astype(np.float32)
    xs, ys = 0.02, 0.04
    inits = {**_q("x", xs, -3), **_q("y", ys, 7), "w": w, "w_s": ws,
             "w_z": np.zeros(ws.shape, np.int8)}
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_s", "x_z"], ["xq"]),
             helper.make_node("QLinearMatMul", ["xq", "x_s", "x_z", "w", "w_s", "w_z", "y_s",
                                                "y_z"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "y_s", "y_z"], ["y"])]
    model = make_model(nodes, [("x", [5, 6])], initializers=inits)
    assert_within_one_step(model, {"x": rand((5, 6), 3, -2, 2)}, ys, ["dense"])


def _qdq(name: str, src: str, prefix: str):
    """QuantizeLinear + DequantizeLinear of ``src`` with params ``prefix``."""
    return [helper.make_node("QuantizeLinear", [src, f"{prefix}_s", f"{prefix}_z"], [name + "q"]),
            helper.make_node("DequantizeLinear", [name + "q", f"{prefix}_s", f"{prefix}_z"],
                             [name])]


@pytest.mark.parametrize("activation", [None, "Relu", "Clip"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
def test_qdq_conv_becomes_integer_conv(activation, per_channel):
    w, ws = _weights_int8((4, 2, 3, 3), 1, per_channel)
    bias = np.random.default_rng(2).integers(-500, 500, 4).astype(np.int32)
    xs = np.float32(0.03)
    inits = {**_q("x", xs, 2), **_q("y", 0.04, -100 if activation else 4), "w": w, "ws": ws,
             "wz": np.zeros(ws.shape, np.int8), "b": bias, "bs": (xs * ws).astype(np.float32),
             "bz": np.zeros(ws.shape, np.int32), "lo": np.float32(0), "hi": np.float32(6)}
    nodes = [*_qdq("xd", "x", "x"),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
             helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bd"], axis=0),
             helper.make_node("Conv", ["xd", "wd", "bd"], ["c"], pads=[1, 1, 1, 1])]
    if activation == "Relu":
        nodes.append(helper.make_node("Relu", ["c"], ["a"]))
    elif activation == "Clip":
        nodes.append(helper.make_node("Clip", ["c", "lo", "hi"], ["a"]))
    nodes += _qdq("y", "a" if activation else "c", "y")
    model = make_model(nodes, [("x", [1, 2, 6, 6])], initializers=inits)
    graph = assert_within_one_step(model, {"x": rand((1, 2, 6, 6), 3, -2, 2)}, 0.04,
                                   ["conv2d"])
    conv = next(n for n in graph.nodes if n.op == "conv2d")
    assert conv.attrs["activation"] == {None: "none", "Relu": "relu", "Clip": "relu6"}[
        activation]
    assert (conv.inputs[1].quant.axis == 0) == per_channel


def test_qdq_gemm_add_pool_reshape_stay_integer():
    w, ws = _weights_int8((10, 12), 1, False)
    inits = {**_q("x", 0.03, 1), **_q("p", 0.03, 1), **_q("g", 0.05, -2), **_q("k", 0.02, 0),
             **_q("y", 0.06, 3), "w": w.T.copy(), "ws": ws, "wz": np.int8(0),
             "kq": np.random.default_rng(4).integers(-100, 100, (3, 1, 1)).astype(np.int8),
             "shape": np.array([1, -1], np.int64)}
    nodes = [*_qdq("xd", "x", "x"),
             helper.make_node("AveragePool", ["xd"], ["p"], kernel_shape=[2, 2],
                              strides=[2, 2]),
             *_qdq("pd", "p", "p"),
             helper.make_node("DequantizeLinear", ["kq", "k_s", "k_z"], ["kd"]),
             helper.make_node("Add", ["pd", "kd"], ["a"]),
             *_qdq("ad", "a", "g"),
             helper.make_node("MaxPool", ["ad"], ["m"], kernel_shape=[1, 1]),
             helper.make_node("Reshape", ["m", "shape"], ["r"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"]),
             helper.make_node("MatMul", ["r", "wd"], ["mm"]),
             *_qdq("y", "mm", "y")]
    model = make_model(nodes, [("x", [1, 3, 4, 4])], initializers=inits)
    graph = assert_within_one_step(model, {"x": rand((1, 3, 4, 4), 3, -2, 2)}, 0.06,
                                   ["avg_pool2d", "add", "max_pool2d", "reshape", "dense"])
    assert [n.op for n in graph.nodes if n.outputs[0].dtype == "float32"] == ["dequantize"]


def test_qdq_around_an_unsupported_integer_pattern_falls_back_to_float():
    """Sigmoid's integer kernel needs the output scale 1/256; any other stays float."""
    inits = {**_q("x", 0.03, 1), **_q("y", 0.01, -128)}
    nodes = [*_qdq("xd", "x", "x"), helper.make_node("Sigmoid", ["xd"], ["s"]),
             *_qdq("y", "s", "y")]
    model = make_model(nodes, [("x", [2, 8])], initializers=inits)
    graph = assert_within_one_step(model, {"x": rand((2, 8), 3, -2, 2)}, 0.01, [])
    assert ops(graph) == ["quantize", "dequantize", "logistic", "quantize", "dequantize"]


def test_flatten_then_gemm_with_transposed_weights():
    model = _after_conv([helper.make_node("Flatten", ["c"], ["f"]),
                         helper.make_node("Gemm", ["f", "W", "b"], ["y"], transB=1)],
                        {"W": rand((4, 75), 5), "b": rand((4,), 6)})
    graph = assert_close(model, {"x": rand((1, 2, 5, 5))})
    assert ops(graph) == ["transpose", "conv2d", "reshape", "dense"]


def test_integer_model_input_and_output():
    """QOperator style: int8 in, QLinearConv, MaxPool on int8, int8 out."""
    w, ws = _weights_int8((4, 2, 3, 3), 1, True)
    inits = {**_q("x", 0.05, -3), **_q("y", 0.08, 5), "w": w, "w_s": ws,
             "w_z": np.zeros(ws.shape, np.int8)}
    nodes = [helper.make_node("QLinearConv", ["x", "x_s", "x_z", "w", "w_s", "w_z", "y_s",
                                              "y_z"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    graph_proto = helper.make_graph(
        nodes, "q", [helper.make_tensor_value_info("x", INT8, [1, 2, 6, 6])],
        [helper.make_tensor_value_info("y", INT8, None)],
        initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    model = helper.make_model(graph_proto, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    x = np.random.default_rng(3).integers(-128, 128, (1, 2, 6, 6)).astype(np.int8)
    graph, ours, theirs = run_both(model, {"x": x})
    assert graph.inputs[0].quant.scale[0] == np.float32(0.05)
    assert ours[0].dtype == np.int8 and graph.outputs[0].quant.zero_point == (5,)
    assert np.abs(ours[0].astype(int) - theirs[0]).max() <= 1


def test_constant_and_identity_nodes():
    value = helper.make_tensor("k", TensorProto.FLOAT, [3], [1.0, -2.0, 0.5])
    model = make_model([helper.make_node("Constant", [], ["k"], value=value),
                        helper.make_node("Identity", ["x"], ["i"]),
                        helper.make_node("Mul", ["i", "k"], ["y"])], [("x", [2, 3])])
    assert ops(assert_close(model, {"x": rand((2, 3))})) == ["mul"]


@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
@pytest.mark.parametrize("activations", ["QInt8", "QUInt8"])
@pytest.mark.one_fast
def test_model_quantized_by_onnxruntime(activations, per_channel, tmp_path):
    """A small CNN through onnxruntime's own QDQ quantizer: integer compute up to the
    float Softmax (its output scale is not TFLM's 1/256), one output step at most."""
    import onnx
    from onnxruntime import quantization as q

    inits = {"w1": rand((8, 3, 3, 3), 1) * 0.5, "b1": rand((8,), 2) * 0.1,
             "w2": rand((8, 1, 3, 3), 3) * 0.5, "w3": rand((16, 8, 1, 1), 4) * 0.5,
             "b3": rand((16,), 5) * 0.1, "W": rand((16, 10), 6) * 0.5,
             "B": rand((10,), 7) * 0.1, "k": rand((16, 1, 1), 8) * 0.1,
             "lo": np.float32(0), "hi": np.float32(6)}
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1],
                              strides=[2, 2]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1], group=8),
             helper.make_node("Clip", ["c2", "lo", "hi"], ["r2"]),
             helper.make_node("MaxPool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p2", "w3", "b3"], ["c3"]),
             helper.make_node("Add", ["c3", "k"], ["a3"]),
             helper.make_node("Relu", ["a3"], ["r3"]),
             helper.make_node("GlobalAveragePool", ["r3"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "W", "B"], ["gm"]),
             helper.make_node("Softmax", ["gm"], ["y"])]
    onnx.save(make_model(nodes, [("x", [1, 3, 16, 16])], initializers=inits),
              tmp_path / "float.onnx")

    class Calibration(q.CalibrationDataReader):
        def __init__(self):
            self.feeds = iter([{"x": rand((1, 3, 16, 16), i, -2, 2)} for i in range(8)])

        def get_next(self):
            return next(self.feeds, None)

    q.quantize_static(tmp_path / "float.onnx", tmp_path / "qdq.onnx", Calibration(),
                      quant_format=q.QuantFormat.QDQ, per_channel=per_channel,
                      activation_type=getattr(q.QuantType, activations),
                      weight_type=q.QuantType.QInt8)
    model = onnx.load(tmp_path / "qdq.onnx")
    step = numpy_helper.to_array(next(i for i in model.graph.initializer
                                      if i.name == "y_scale"))
    for seed in (99, 100):
        x = rand((1, 3, 16, 16), seed, -2, 2)
        graph, ours, theirs = run_both(model, {"x": x})
        assert ours[0].argmax() == theirs[0].argmax()
        assert np.abs(ours[0] - theirs[0]).max() <= float(step) * (1 + 1e-6)
    integer = [n.op for n in graph.nodes[:graph.nodes.index(
        next(n for n in graph.nodes if n.op == "softmax"))]]
    assert [n.op for n in graph.nodes if n.outputs[0].dtype == "float32"] == [
        "dequantize", "softmax", "dequantize"]
    for op in ("conv2d", "depthwise_conv2d", "max_pool2d", "add", "avg_pool2d", "dense"):
        assert op in integer


def test_matmul_on_an_nchw_feature_map_uses_onnx_order():
    model = _after_conv([helper.make_node("MatMul", ["c", "W"], ["y"])], {"W": rand((5, 4), 2)})
    graph = assert_close(model, {"x": rand((1, 2, 5, 5))})
    assert ops(graph) == ["transpose", "conv2d", "transpose", "dense"]


@pytest.mark.parametrize("op,ir,scale,zp", [("Softmax", "softmax", 1 / 256, -128),
                                            ("Sigmoid", "logistic", 1 / 256, -128),
                                            ("Tanh", "tanh", 1 / 128, 0)])
def test_qdq_activation_with_tflm_output_scale_is_integer(op, ir, scale, zp):
    inits = {**_q("x", 0.05, 1), **_q("y", scale, zp)}
    nodes = [*_qdq("xd", "x", "x"), helper.make_node(op, ["xd"], ["s"]), *_qdq("y", "s", "y")]
    model = make_model(nodes, [("x", [2, 8])], initializers=inits)
    graph = assert_within_one_step(model, {"x": rand((2, 8), 3, -4, 4)}, scale, [ir])
    assert ops(graph) == ["quantize", ir, "dequantize"]


@pytest.mark.parametrize("opset", [9, 13])
def test_batch_normalization_and_dropout(opset):
    c = 3
    inits = {"s": rand((c,), 1, 0.5, 2), "b": rand((c,), 2), "m": rand((c,), 3),
             "v": rand((c,), 4, 0.1, 2)}
    model = _after_conv([helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"],
                                          ["n"], epsilon=1e-3),
                         helper.make_node("Dropout", ["n"], ["y"])], inits, opset=opset)
    graph = assert_close(model, {"x": rand((1, 2, 5, 5))})
    assert ops(graph) == ["transpose", "conv2d", "mul", "add", "transpose"]


@pytest.mark.parametrize("pads", [[0, 0, 1, 2, 0, 0, 2, 1], [0, 1, 0, 0, 0, 2, 0, 0]], ids=str)
@pytest.mark.parametrize("value", [None, 0.5])
def test_pad(pads, value):
    inits = {"p": np.array(pads, np.int64)}
    inputs = ["c", "p"]
    if value is not None:
        inits["v"] = np.float32(value)
        inputs.append("v")
    model = _after_conv([helper.make_node("Pad", inputs, ["y"])], inits)
    graph = assert_close(model, {"x": rand((1, 2, 5, 5))})
    assert "pad" in ops(graph)


def test_pad_before_opset_11_and_unknown_mode_refused():
    model = _after_conv([helper.make_node("Pad", ["c"], ["y"], pads=[0, 0, 1, 1, 0, 0, 1, 1],
                                          value=-1.0)], opset=10)
    assert_close(model, {"x": rand((1, 2, 5, 5))})
    bad = _after_conv([helper.make_node("Pad", ["c", "p"], ["y"], mode="mirror")],
                      {"p": np.zeros(8, np.int64)})
    with pytest.raises(ModelError, match="mode 'mirror' is not supported; supported: "
                                         "constant, reflect, edge, wrap"):
        parse_onnx(bad.SerializeToString())


@pytest.mark.parametrize("mode", ["reflect", "edge", "wrap"])
def test_pad_modes_copy_elements(mode):
    """Reflect, edge and wrap padding of an NHWC-held map: gathers along H and W."""
    pads = np.array([0, 0, 2, 1, 0, 0, 1, 3], np.int64)
    model = _after_conv([helper.make_node("Pad", ["c", "p"], ["y"], mode=mode)], {"p": pads})
    graph = assert_close(model, {"x": rand((1, 2, 5, 5))})
    assert ops(graph).count("gather") == 2 and "pad" not in ops(graph)


@pytest.mark.parametrize("axes", [[2, 3], [1], [0, 2], None], ids=str)
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_mean(axes, keepdims):
    attrs = {"keepdims": keepdims} | ({} if axes is None else {"axes": axes})
    model = _after_conv([helper.make_node("ReduceMean", ["c"], ["m"], **attrs),
                         helper.make_node("Relu", ["m"], ["y"])], x_shape=(2, 2, 4, 5))
    assert "mean" in ops(assert_close(model, {"x": rand((2, 2, 4, 5))}))


def test_reduce_mean_axes_as_input_from_opset_18():
    model = _after_conv([helper.make_node("ReduceMean", ["c", "ax"], ["y"], keepdims=0)],
                        {"ax": np.array([-1, -2], np.int64)}, x_shape=(1, 2, 4, 5),
                        opset=18)
    assert_close(model, {"x": rand((1, 2, 4, 5))})


def test_qdq_pad_and_reduce_mean_stay_integer():
    inits = {**_q("x", 0.03, 1), **_q("y", 0.01, -3), "p": np.array([0, 0, 1, 1, 0, 0, 1, 1],
                                                                      np.int64)}
    nodes = [*_qdq("xd", "x", "x"), helper.make_node("Pad", ["xd", "p"], ["pd"]),
             helper.make_node("ReduceMean", ["pd"], ["m"], axes=[2, 3], keepdims=1),
             *_qdq("y", "m", "y")]
    model = make_model(nodes, [("x", [1, 3, 4, 4])], initializers=inits)
    graph = assert_within_one_step(model, {"x": rand((1, 3, 4, 4), 3, -2, 2)}, 0.01,
                                   ["pad", "mean"])
    assert [n.op for n in graph.nodes if n.outputs[0].dtype == "float32"] == ["dequantize"]


def test_dequantized_weights_reshaped_at_import_stay_integer():
    w = np.random.default_rng(1).integers(-127, 128, (2, 3, 8)).astype(np.int8)
    inits = {**_q("x", 0.03, 1), **_q("y", 0.05, 2), "w": w, "ws": np.float32(0.004),
             "wz": np.int8(0), "shape": np.array([6, 8], np.int64)}
    nodes = [*_qdq("xd", "x", "x"),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"]),
             helper.make_node("Reshape", ["wd", "shape"], ["wr"]),
             helper.make_node("MatMul", ["xd", "wr"], ["mm"]), *_qdq("y", "mm", "y")]
    model = make_model(nodes, [("x", [3, 6])], initializers=inits)
    graph = assert_within_one_step(model, {"x": rand((3, 6), 3, -2, 2)}, 0.05, ["dense"])
    assert ops(graph) == ["quantize", "dense", "dequantize"]


def test_batch_normalization_after_conv_is_folded_into_it_by_the_passes():
    from aot.passes import PassContext, optimize

    c = 3
    inits = {"s": rand((c,), 1, 0.5, 2), "b": rand((c,), 2), "m": rand((c,), 3),
             "v": rand((c,), 4, 0.1, 2)}
    model = _after_conv([helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"],
                                          ["y"])], inits)
    graph = assert_close(model, {"x": rand((1, 2, 5, 5))})
    optimized = optimize(graph, PassContext(opt_level=2))
    assert [n.op for n in optimized.nodes] == ["transpose", "conv2d", "transpose"]


# ---------------------------------------------------------------------- Squeeze, Unsqueeze, ...

@pytest.mark.parametrize("opset", [11, 13])
def test_squeeze_and_unsqueeze_of_computed_values(opset):
    """GlobalAveragePool -> Squeeze([2, 3]) -> Unsqueeze([-1]): reshapes, no transpose
    (the pooled map has one element per channel, so NHWC and NCHW orders agree)."""
    inits = {"w": rand((4, 2, 3, 3), 1)}
    if opset >= 13:  # axes are an input
        inits.update(sq=np.array([2, 3], np.int64), un=np.array([-1], np.int64))
        squeeze = helper.make_node("Squeeze", ["p", "sq"], ["q"])
        unsqueeze = helper.make_node("Unsqueeze", ["q", "un"], ["y"])
    else:
        squeeze = helper.make_node("Squeeze", ["p"], ["q"], axes=[2, 3])
        unsqueeze = helper.make_node("Unsqueeze", ["q"], ["y"], axes=[-1])
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("GlobalAveragePool", ["c"], ["p"]), squeeze, unsqueeze]
    model = make_model(nodes, [("x", [1, 2, 5, 5])], initializers=inits, opset=opset)
    graph = assert_close(model, {"x": rand((1, 2, 5, 5))})
    # The first transpose takes the 2-channel input to NHWC.
    assert ops(graph) == ["transpose", "conv2d", "avg_pool2d", "reshape", "reshape"]
    assert graph.outputs[0].shape == (1, 4, 1)


def test_unsqueeze_of_an_nhwc_map_restores_onnx_order():
    model = _after_conv([helper.make_node("Unsqueeze", ["c"], ["y"], axes=[0])], opset=11)
    graph = assert_close(model, {"x": rand((1, 2, 5, 5))})
    assert graph.outputs[0].shape == (1, 1, 3, 5, 5)


def test_squeeze_of_a_dimension_that_is_not_1_is_refused():
    model = make_model([helper.make_node("Squeeze", ["x"], ["y"], axes=[1])],
                       [("x", [1, 3])], opset=11)
    with pytest.raises(ModelError, match=r"cannot squeeze axes \[1\] of the shape \[1, 3\]"):
        parse_onnx(model.SerializeToString())


@pytest.mark.parametrize("op,ir", [("Max", "maximum"), ("Min", "minimum")])
def test_max_min_of_two_values(op, ir):
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node(op, ["c", "k"], ["y"])]
    model = make_model(nodes, [("x", [1, 2, 5, 5])],
                       initializers={"w": rand((3, 2, 1, 1), 1), "k": rand((3, 1, 1), 2)})
    assert ir in ops(assert_close(model, {"x": rand((1, 2, 5, 5))}))


@pytest.mark.parametrize("node,ir", [
    (helper.make_node("LeakyRelu", ["x"], ["y"], alpha=0.2), "leaky_relu"),
    (helper.make_node("LeakyRelu", ["x"], ["y"]), "leaky_relu"),
    (helper.make_node("HardSwish", ["x"], ["y"]), "hard_swish"),
], ids=["leaky_0.2", "leaky_default", "hard_swish"])
def test_float_activations(node, ir):
    model = make_model([node], [("x", [2, 7])], opset=14)
    graph = assert_close(model, {"x": rand((2, 7), 3, -5, 5)})
    assert ops(graph) == [ir] and graph.nodes[0].attrs.get("alpha", 0.01) == \
        pytest.approx(next((a.f for a in node.attribute), 0.01))


def test_new_float_operators_compile_and_run_on_the_host(tmp_path):
    """The kernels exist: LeakyRelu, HardSwish, Max, Min, Slice and Unsqueeze built with gcc."""
    from aot.commands.run import run_on_host
    from aot.compile import compile_model

    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("LeakyRelu", ["c"], ["l"], alpha=0.1),
             helper.make_node("HardSwish", ["l"], ["h"]),
             helper.make_node("Max", ["h", "lo"], ["m"]),
             helper.make_node("Min", ["m", "hi"], ["n"]),
             helper.make_node("Slice", ["n", "st", "en", "axes"], ["s"]),
             helper.make_node("Unsqueeze", ["s", "axes"], ["y"])]
    inits = {"w": rand((3, 2, 1, 1), 1, -3, 3), "lo": rand((3, 1, 1), 2, -1, 0),
             "hi": rand((3, 1, 1), 3, 0.5, 1), "axes": np.array([1], np.int64),
             "st": np.array([1], np.int64), "en": np.array([3], np.int64)}
    model = make_model(nodes, [("x", [1, 2, 4, 4])], initializers=inits, opset=14)
    path = tmp_path / "acts.onnx"
    path.write_bytes(model.SerializeToString())
    x = rand((1, 2, 4, 4), 4, -3, 3)
    compiled = compile_model(path, "host/native", measure_code=False)
    ours = run_on_host(compiled, [x[None]], workdir=tmp_path)[0][0]
    want = ort_session(model.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_allclose(ours, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("starts,ends,axes,steps", [
    ([1], [3], [1], [1]),                      # channels of an NHWC-held map
    ([0, 1], [2**62, -1], [2, 3], [2, 1]),     # clamped end, negative end
    ([-3], [5], [-1], [2]),
], ids=["channels", "spatial", "negative_start"])
def test_slice_of_a_computed_value(starts, ends, axes, steps):
    inits = {"st": np.array(starts, np.int64), "en": np.array(ends, np.int64),
             "ax": np.array(axes, np.int64), "sp": np.array(steps, np.int64)}
    model = _after_conv([helper.make_node("Slice", ["c", "st", "en", "ax", "sp"], ["y"])],
                        inits, x_shape=(1, 2, 6, 5))
    graph = assert_close(model, {"x": rand((1, 2, 6, 5))})
    assert "strided_slice" in ops(graph)


def test_slice_with_a_negative_step_on_data_is_refused():
    inits = {"st": np.array([-1], np.int64), "en": np.array([-9], np.int64),
             "ax": np.array([1], np.int64), "sp": np.array([-1], np.int64)}
    model = _after_conv([helper.make_node("Slice", ["c", "st", "en", "ax", "sp"], ["y"])], inits)
    with pytest.raises(ModelError, match="negative steps on run-time data are not supported"):
        parse_onnx(model.SerializeToString())


@pytest.mark.parametrize("zp", [0, -1200])
@pytest.mark.parametrize("through_int8", [False, True], ids=["from_float", "from_int8"])
@pytest.mark.one_fast
def test_int16_quantize_linear_of_an_activation(zp, through_int8, tmp_path):
    """QuantizeLinear to int16 (opset 21) becomes a QUANTIZE node (float or int8 in); its
    DequantizeLinear returns to the float path.  TFLM's rounding (half away from zero)
    against ONNX's (half to even): at most one int16 step apart; the host build equals
    the reference."""
    s16 = np.float32(0.0004)
    inits = {"q_s": s16, "q_z": np.asarray(zp, np.int16), **_q("a", 0.02, 3)}
    src = "x"
    nodes = []
    if through_int8:
        nodes += _qdq("xa", "x", "a")
        src = "xa"
    nodes += [helper.make_node("QuantizeLinear", [src, "q_s", "q_z"], ["xq"]),
              helper.make_node("DequantizeLinear", ["xq", "q_s", "q_z"], ["xd"]),
              helper.make_node("Relu", ["xd"], ["y"])]
    model = make_model(nodes, [("x", [2, 40])], initializers=inits, opset=21)
    model.ir_version = 10
    x = rand((2, 40), 8, -15, 15)
    graph, ours, theirs = run_both(model, {"x": x})
    assert "quantize" in ops(graph)
    assert any(n.op == "quantize" and n.outputs[0].dtype == "int16" for n in graph.nodes)
    steps = np.abs(ours[0].astype(np.float64) - theirs[0]) / s16
    assert steps.max() <= 1.0 + 1e-6, f"{steps.max()} int16 steps apart"
    if not through_int8:  # the int8 step saturates first otherwise
        assert np.any(np.isclose(ours[0], float(s16) * (32767 - zp), rtol=1e-6))
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    np.testing.assert_array_equal(run_on_host(compiled, [x[None]], workdir=tmp_path)[0][0],
                                  ours[0])


def test_int16_weights_are_refused():
    inits = {"w": np.ones((3, 3), np.float32), "q_s": np.float32(0.01),
             "q_z": np.asarray(0, np.int16)}
    nodes = [helper.make_node("QuantizeLinear", ["w", "q_s", "q_z"], ["wq"]),
             helper.make_node("DequantizeLinear", ["wq", "q_s", "q_z"], ["wd"]),
             helper.make_node("MatMul", ["x", "wd"], ["y"])]
    model = make_model(nodes, [("x", [2, 3])], initializers=inits, opset=21)
    model.ir_version = 10
    with pytest.raises(ModelError, match="quantizing a constant to int16 is not supported"):
        parse_onnx(model.SerializeToString(), name="test")
