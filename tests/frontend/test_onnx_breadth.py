"""ONNX operators and model boundaries that exported models (PyTorch, attention
blocks) need: each compared with onnxruntime (float within 1e-5 of the largest
output magnitude, integers exactly) or refused with a message naming the cause."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from support.onnx_oracle import ort_session

from aot.frontend import ModelError
from aot.frontend.onnx import parse_onnx
from aot.reference.interpreter import run

FLOAT = TensorProto.FLOAT


def model_of(nodes, inputs, outputs, inits=None, opset: int = 17):
    """``inputs``/``outputs``: (name, element type, shape) triples."""
    graph = helper.make_graph(
        list(nodes), "t", [helper.make_tensor_value_info(*i) for i in inputs],
        [helper.make_tensor_value_info(*o) for o in outputs],
        initializer=[numpy_helper.from_array(np.asarray(v), k)
                     for k, v in (inits or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def check(model, feeds: dict, rtol: float = 1e-5):
    """Our reference outputs against onnxruntime's; the graph."""
    data = model.SerializeToString()
    graph = parse_onnx(data)
    ours = run(graph, feeds)
    theirs = ort_session(data).run(None, feeds)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and a.dtype == b.dtype
        if b.dtype.kind == "f":
            scale = max(float(np.abs(b).max()), 1e-30)
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale)
        else:
            np.testing.assert_array_equal(a, b)
    return graph


def rand(shape, seed=0, lo=-1.0, hi=1.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(np.float32)


def ops(graph):
    return [n.op for n in graph.nodes]


# ---------------------------------------------------------------------- MatMul, Gemm

def test_attention_scores_multiply_two_run_time_tensors():
    """Q @ K^T and softmax(...) @ V of a 4-D attention block: batch_matmul in float."""
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Softmax", ["s"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    shape = [1, 2, 5, 4]
    model = model_of(nodes, [(n, FLOAT, shape) for n in "qkv"], [("y", FLOAT, None)])
    graph = check(model, {n: rand(shape, i) for i, n in enumerate("qkv")})
    assert ops(graph).count("batch_matmul") == 2


@pytest.mark.parametrize("a_shape,b_shape", [([3], [3, 4]), ([2, 3], [3]), ([3], [3]),
                                             ([2, 1, 2, 3], [4, 3, 5])],
                         ids=["vector_matrix", "matrix_vector", "dot", "broadcast"])
def test_matmul_of_any_ranks(a_shape, b_shape):
    model = model_of([helper.make_node("MatMul", ["a", "b"], ["y"])],
                     [("a", FLOAT, a_shape), ("b", FLOAT, b_shape)], [("y", FLOAT, None)])
    check(model, {"a": rand(a_shape, 1), "b": rand(b_shape, 2)})


@pytest.mark.parametrize("attrs", [{}, {"transA": 1}, {"transB": 1},
                                   {"alpha": 0.5, "beta": 2.0, "transA": 1, "transB": 1}],
                         ids=["plain", "transA", "transB", "all"])
@pytest.mark.parametrize("c", ["none", "vector", "matrix", "computed"])
def test_gemm_of_run_time_a_and_b(attrs, c):
    a_shape = [4, 3] if attrs.get("transA") else [3, 4]
    b_shape = [5, 4] if attrs.get("transB") else [4, 5]
    inputs = [("a", FLOAT, a_shape), ("b", FLOAT, b_shape)]
    names, inits, feeds = ["a", "b"], {}, {"a": rand(a_shape, 1), "b": rand(b_shape, 2)}
    if c in ("vector", "matrix"):
        inits["c"] = rand([5] if c == "vector" else [3, 5], 3)
        names.append("c")
    elif c == "computed":
        inputs.append(("c", FLOAT, [3, 5]))
        feeds["c"] = rand([3, 5], 4)
        names.append("c")
    model = model_of([helper.make_node("Gemm", names, ["y"], **attrs)], inputs,
                     [("y", FLOAT, None)], inits)
    graph = check(model, feeds)
    assert "batch_matmul" in ops(graph)


def test_qlinear_matmul_with_asymmetric_weights_saturates_like_onnxruntime():
    """Weights with a zero point are not dropped (the dense kernel assumes none):
    batch_matmul subtracts it, and a result beyond int8 saturates."""
    a = np.array([[81, 109, -127, 111], [-124, 87, -128, -98]], np.int8)
    b = np.array([[25, -76, 117], [-67, -101, -128], [-127, 0, 119], [0, 127, 120]], np.int8)
    inits = {"as": np.float32(0.0066), "az": np.int8(-14), "b": b, "bs": np.float32(0.00705),
             "bz": np.int8(-13), "ys": np.float32(0.0107), "yz": np.int8(-9)}
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"],
                            ["y"])
    model = model_of([node], [("a", TensorProto.INT8, [2, 4])],
                     [("y", TensorProto.INT8, None)], inits)
    graph = check(model, {"a": a})
    assert run(graph, {"a": a})[0][1, 2] == -128


# ---------------------------------------------------------------------- elementwise

def test_max_and_min_of_one_and_three_inputs():
    nodes = [helper.make_node("Max", ["a", "b", "c"], ["m"]),
             helper.make_node("Min", ["m"], ["y"])]
    shapes = {"a": [2, 3], "b": [3], "c": [1, 3]}
    model = model_of(nodes, [(n, FLOAT, s) for n, s in shapes.items()], [("y", FLOAT, None)])
    check(model, {n: rand(s, i) for i, (n, s) in enumerate(shapes.items())})


@pytest.mark.parametrize("dtype", [TensorProto.INT8, TensorProto.INT32])
def test_clip_of_plain_integers(dtype):
    np_type = {TensorProto.INT8: np.int8, TensorProto.INT32: np.int32}[dtype]
    inits = {"lo": np.array(-5, np_type), "hi": np.array(7, np_type)}
    model = model_of([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])],
                     [("x", dtype, [2, 8])], [("y", dtype, None)], inits)
    x = np.arange(-8, 8, dtype=np_type).reshape(2, 8) * np_type(3) // np_type(2)
    graph = check(model, {"x": x})
    assert ops(graph) == ["maximum", "minimum"]


# ---------------------------------------------------------------------- uint8, bool

def test_uint8_input_and_output_through_qdq():
    """A uint8 model input is read by DequantizeLinear and a uint8 output written by
    QuantizeLinear: the same integers as onnxruntime."""
    inits = {"s": np.float32(0.05), "z": np.uint8(120), "s2": np.float32(0.1),
             "z2": np.uint8(100)}
    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["f"]),
             helper.make_node("Relu", ["f"], ["r"]),
             helper.make_node("QuantizeLinear", ["r", "s2", "z2"], ["y"])]
    model = model_of(nodes, [("x", TensorProto.UINT8, [1, 16])],
                     [("y", TensorProto.UINT8, None)], inits)
    x = np.arange(0, 256, 16, dtype=np.uint8).reshape(1, 16)
    graph = check(model, {"x": x})
    assert graph.inputs[0].dtype == "uint8" and graph.outputs[0].dtype == "uint8"


def test_dropout_mask_is_all_true_at_inference():
    model = model_of([helper.make_node("Dropout", ["x"], ["y", "mask"])],
                     [("x", FLOAT, [2, 3])],
                     [("y", FLOAT, None), ("mask", TensorProto.BOOL, None)])
    check(model, {"x": rand([2, 3])})


def test_dropout_in_training_mode_is_refused():
    inits = {"ratio": np.float32(0.5), "train": np.bool_(True)}
    model = model_of([helper.make_node("Dropout", ["x", "ratio", "train"], ["y"])],
                     [("x", FLOAT, [2, 3])], [("y", FLOAT, None)], inits, opset=13)
    with pytest.raises(ModelError, match=r"node 0 \(Dropout\): training mode "
                                         r"\(training_mode=True, ratio 0.5\) drops random"):
        parse_onnx(model.SerializeToString())
    inits["ratio"] = np.float32(0.0)  # nothing is dropped: the identity
    model = model_of([helper.make_node("Dropout", ["x", "ratio", "train"], ["y"])],
                     [("x", FLOAT, [2, 3])], [("y", FLOAT, None)], inits, opset=13)
    check(model, {"x": rand([2, 3])})


def test_element_types_are_named():
    model = model_of([helper.make_node("Identity", ["x"], ["y"])],
                     [("x", TensorProto.FLOAT8E4M3FN, [2])],
                     [("y", TensorProto.FLOAT8E4M3FN, None)])
    with pytest.raises(ModelError, match="graph input 'x' has type FLOAT8E4M3FN, which is not "
                                         "supported; supported: FLOAT, UINT8"):
        parse_onnx(model.SerializeToString())


# ---------------------------------------------------------------------- outputs known early

def _shape_model():
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Size", ["x"], ["n"]),
             helper.make_node("Relu", ["x"], ["y"])]
    return model_of(nodes, [("x", FLOAT, [2, 3])],
                    [("s", TensorProto.INT64, None), ("n", TensorProto.INT64, None),
                     ("y", FLOAT, None)])


def test_shape_and_size_outputs_are_written_at_run_time():
    """An output known at import is a copy of a constant (it used to be the constant
    itself, which the memory planner had no buffer for: KeyError)."""
    graph = check(_shape_model(), {"x": rand([2, 3])})
    assert all(t.kind == "activation" for t in graph.outputs)


def test_shape_and_size_outputs_run_on_the_host(tmp_path):
    from aot.commands.run import run_on_host
    from aot.compile import compile_model

    path = tmp_path / "shape.onnx"
    path.write_bytes(_shape_model().SerializeToString())
    compiled = compile_model(path, "host/native", measure_code=False)
    x = rand([1, 2, 3])
    s, n, y = run_on_host(compiled, [x], workdir=tmp_path)
    np.testing.assert_array_equal(s[0], [2, 3])
    assert n[0] == 6 and s.dtype == n.dtype == np.int64
    np.testing.assert_array_equal(y[0], np.maximum(x[0], 0))


# ---------------------------------------------------------------------- run-time operators

def test_layer_normalization_of_an_encoder_token_sequence():
    inits = {"g": rand([16], 1, 0.5, 1.5), "b": rand([16], 2)}
    model = model_of([helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"],
                                       epsilon=1e-5)],
                     [("x", FLOAT, [1, 8, 16])], [("y", FLOAT, None)], inits)
    graph = check(model, {"x": rand([1, 8, 16], 3, -3, 3)})
    assert "rsqrt" in ops(graph) and "mean" in ops(graph)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_arg_extremes_give_int64_indices(op, keepdims):
    model = model_of([helper.make_node(op, ["x"], ["y"], axis=1, keepdims=keepdims)],
                     [("x", FLOAT, [2, 5, 3])], [("y", TensorProto.INT64, None)])
    check(model, {"x": rand([2, 5, 3])})


def test_split_into_sized_parts():
    inits = {"sizes": np.array([2, 3, 1], np.int64)}
    model = model_of([helper.make_node("Split", ["x", "sizes"], ["a", "b", "c"], axis=-1)],
                     [("x", FLOAT, [2, 6])], [(n, FLOAT, None) for n in "abc"], inits)
    graph = check(model, {"x": rand([2, 6])})
    assert ops(graph).count("strided_slice") == 3


def test_log_softmax_over_an_inner_axis():
    model = model_of([helper.make_node("LogSoftmax", ["x"], ["y"], axis=1)],
                     [("x", FLOAT, [2, 5, 3])], [("y", FLOAT, None)])
    graph = check(model, {"x": rand([2, 5, 3], 0, -4, 4)})
    assert "log_softmax" in ops(graph)


def test_gather_cast_where_expand_compare_at_run_time():
    """An attention-mask style subgraph on run-time data."""
    nodes = [helper.make_node("Gather", ["x", "idx"], ["g"], axis=1),
             helper.make_node("Less", ["g", "zero"], ["neg"]),
             helper.make_node("Equal", ["g", "g"], ["same"]),
             helper.make_node("Not", ["neg"], ["pos"]),
             helper.make_node("Where", ["pos", "g", "zero"], ["w"]),
             helper.make_node("Expand", ["w", "shape"], ["e"]),
             helper.make_node("Cast", ["same"], ["y2"], to=TensorProto.INT32),
             helper.make_node("Cast", ["e"], ["y"], to=TensorProto.INT64)]
    inits = {"idx": np.array([[0, -1], [2, 2]], np.int64), "zero": np.float32(0.0),
             "shape": np.array([3, 1, 1, 1], np.int64)}
    model = model_of(nodes, [("x", FLOAT, [2, 4])],
                     [("y", TensorProto.INT64, None), ("y2", TensorProto.INT32, None)], inits)
    graph = check(model, {"x": rand([2, 4], 0, -9, 9)})
    assert {"gather", "select", "broadcast_to", "cast", "less", "logical_not"} <= set(ops(graph))


def test_gather_with_run_time_indices():
    model = model_of([helper.make_node("Gather", ["x", "i"], ["y"], axis=0)],
                     [("x", FLOAT, [5, 3]), ("i", TensorProto.INT64, [4])], [("y", FLOAT, None)])
    check(model, {"x": rand([5, 3]), "i": np.array([4, 0, 0, 2], np.int64)})


def test_hard_sigmoid_and_tanh_gelu():
    nodes = [helper.make_node("HardSigmoid", ["x"], ["h"], alpha=1 / 6, beta=0.5),
             helper.make_node("Gelu", ["h"], ["y"], approximate="tanh")]
    model = model_of(nodes, [("x", FLOAT, [2, 8])], [("y", FLOAT, None)], opset=20)
    check(model, {"x": rand([2, 8], 0, -5, 5)})


def test_exact_gelu_and_erf_run_as_ir_operators():
    nodes = [helper.make_node("Gelu", ["x"], ["g"]), helper.make_node("Erf", ["x"], ["e"])]
    model = model_of(nodes, [("x", FLOAT, [2, 40])],
                     [("g", FLOAT, None), ("e", FLOAT, None)], opset=20)
    graph = check(model, {"x": rand([2, 40], 0, -6, 6)})
    assert ops(graph) == ["gelu", "erf"] and graph.nodes[0].attrs["approximate"] is False


def test_exact_gelu_and_erf_on_the_host_equal_the_reference(tmp_path):
    from aot.commands.run import run_on_host
    from aot.compile import compile_model

    nodes = [helper.make_node("Gelu", ["x"], ["g"]), helper.make_node("Erf", ["x"], ["e"])]
    model = model_of(nodes, [("x", FLOAT, [1, 64])],
                     [("g", FLOAT, None), ("e", FLOAT, None)], opset=20)
    graph = parse_onnx(model.SerializeToString())
    x = rand([1, 64], 4, -6, 6)
    want = run(graph, [x])
    got = run_on_host(compile_model(graph, "host/native", measure_code=False), [x[None]],
                      workdir=tmp_path)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g[0].view(np.uint32), w.view(np.uint32))


def test_qdq_gelu_is_one_int8_gelu_within_one_step_of_onnxruntime():
    """DequantizeLinear -> Gelu -> QuantizeLinear: the IR's int8 gelu (a table,
    rounding the float64 GELU; onnxruntime rounds its float32 one: at most one step)."""
    inits = {"s": np.float32(0.04), "z": np.int8(-5), "ys": np.float32(0.03),
             "yz": np.int8(-100)}
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xf"]),
             helper.make_node("Gelu", ["xf"], ["g"]),
             helper.make_node("QuantizeLinear", ["g", "ys", "yz"], ["gq"]),
             helper.make_node("DequantizeLinear", ["gq", "ys", "yz"], ["y"])]
    model = model_of(nodes, [("x", FLOAT, [1, 256])], [("y", FLOAT, None)], inits, opset=20)
    data = model.SerializeToString()
    graph = parse_onnx(data)
    gelu = next(n for n in graph.nodes if n.op == "gelu")
    assert gelu.inputs[0].dtype == "int8" and gelu.outputs[0].dtype == "int8"
    feeds = {"x": ((np.arange(256, dtype=np.float32) - 123) * np.float32(0.04))[None]}
    ours = run(graph, feeds)[0]
    theirs = ort_session(data).run(None, feeds)[0]
    assert np.abs(ours - theirs).max() <= 0.03 + 1e-6


def test_gelu_approximate_must_be_none_or_tanh():
    model = model_of([helper.make_node("Gelu", ["x"], ["y"], approximate="fast")],
                     [("x", FLOAT, [2, 8])], [("y", FLOAT, None)], opset=20)
    with pytest.raises(ModelError, match=r"node 0 \(Gelu\): approximate='fast' is not "
                                         r"allowed \('none' or 'tanh'\)"):
        parse_onnx(model.SerializeToString())


def _erf_gelu_nodes(div: bool, x_first: bool):
    scale = ("Div", "s2") if div else ("Mul", "rs2")
    nodes = [helper.make_node(scale[0], ["x", scale[1]], ["d"]),
             helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["a"])]
    if x_first:
        nodes += [helper.make_node("Mul", ["x", "a"], ["m"]),
                  helper.make_node("Mul", ["m", "half"], ["y"])]
    else:
        nodes += [helper.make_node("Mul", ["a", "half"], ["m"]),
                  helper.make_node("Mul", ["m", "x"], ["y"])]
    inits = {"s2": np.float32(np.sqrt(2.0)), "rs2": np.float32(np.sqrt(0.5)),
             "one": np.float32(1.0), "half": np.float32(0.5)}
    return nodes, inits


@pytest.mark.parametrize("div, x_first", [(True, True), (True, False), (False, True)])
def test_pytorch_erf_gelu_subgraph_becomes_one_gelu(div, x_first):
    """torch.onnx.export writes nn.GELU() as x / sqrt 2 -> Erf -> + 1 -> * x -> * 0.5
    at opsets below 20 (which have no Gelu)."""
    nodes, inits = _erf_gelu_nodes(div, x_first)
    model = model_of(nodes, [("x", FLOAT, [3, 16])], [("y", FLOAT, None)], inits)
    graph = check(model, {"x": rand([3, 16], 1, -6, 6)})
    assert ops(graph) == ["gelu"]


def test_erf_gelu_with_its_constants_written_after_the_div():
    """The TorchScript exporter writes each Constant node just before its first reader,
    so the chain's 1 and 0.5 are not converted yet when the Div is."""
    nodes, inits = _erf_gelu_nodes(True, True)
    consts = [helper.make_node("Constant", [], [k], value=numpy_helper.from_array(
        np.asarray(inits.pop(k)), k)) for k in ("one", "half")]
    nodes = nodes[:2] + consts[:1] + nodes[2:4] + consts[1:] + nodes[4:]
    model = model_of(nodes, [("x", FLOAT, [3, 16])], [("y", FLOAT, None)], inits)
    assert ops(check(model, {"x": rand([3, 16], 1, -6, 6)})) == ["gelu"]


def test_erf_gelu_lookalikes_stay_separate_operators():
    """A chain read elsewhere midway, or with another constant, is not a GELU."""
    nodes, inits = _erf_gelu_nodes(True, True)
    model = model_of(nodes, [("x", FLOAT, [3, 16])], [("y", FLOAT, None), ("e", FLOAT, None)],
                     inits)
    graph = check(model, {"x": rand([3, 16], 2, -6, 6)})
    assert "gelu" not in ops(graph) and "erf" in ops(graph)
    inits["half"] = np.float32(0.25)
    model = model_of(nodes, [("x", FLOAT, [3, 16])], [("y", FLOAT, None)], inits)
    graph = check(model, {"x": rand([3, 16], 2, -6, 6)})
    assert "gelu" not in ops(graph) and "erf" in ops(graph)


def test_initializers_in_an_external_data_file_are_read_beside_the_model(tmp_path):
    """PyTorch's dynamo exporter writes the weights to ``model.onnx.data``."""
    import onnx

    from aot.frontend import load_model

    w = rand([4, 3], 1)
    model = model_of([helper.make_node("MatMul", ["x", "w"], ["y"])], [("x", FLOAT, [2, 4])],
                     [("y", FLOAT, None)], {"w": w})
    onnx.save_model(model, tmp_path / "m.onnx", save_as_external_data=True,
                    location="m.onnx.data", size_threshold=0)
    assert (tmp_path / "m.onnx.data").is_file()
    x = rand([2, 4], 2)
    np.testing.assert_allclose(run(load_model(tmp_path / "m.onnx"), [x])[0], x @ w,
                               rtol=1e-6)
    with pytest.raises(ModelError, match="initializer 'w' keeps its data in an external "
                                         "file; read the model from its file"):
        parse_onnx((tmp_path / "m.onnx").read_bytes())


# ---------------------------------------------------------------------- pooling

@pytest.mark.parametrize("op,attrs", [
    ("MaxPool", {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
    ("AveragePool", {"kernel_shape": [4], "strides": [2], "ceil_mode": 1}),
    ("AveragePool", {"kernel_shape": [3], "pads": [1, 2], "count_include_pad": 1}),
    ("GlobalAveragePool", {}),
], ids=["max", "avg_ceil", "avg_include_pad", "global"])
def test_one_d_pooling(op, attrs):
    model = model_of([helper.make_node(op, ["x"], ["y"], **attrs)], [("x", FLOAT, [1, 3, 11])],
                     [("y", FLOAT, None)])
    check(model, {"x": rand([1, 3, 11])})


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("pads", [[0, 0, 0, 0], [1, 0, 1, 1]])
def test_ceil_mode_adds_windows_that_run_past_the_end(op, pads):
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1, "pads": pads}
    model = model_of([helper.make_node(op, ["x"], ["y"], **attrs)],
                     [("x", FLOAT, [1, 2, 6, 8])], [("y", FLOAT, None)])
    check(model, {"x": rand([1, 2, 6, 8])})


def test_add_of_plain_uint8_is_refused_as_the_kernels_lack_it():
    model = model_of([helper.make_node("Add", ["a", "b"], ["y"])],
                     [("a", TensorProto.UINT8, [3]), ("b", TensorProto.UINT8, [3])],
                     [("y", TensorProto.UINT8, None)])
    with pytest.raises(ModelError, match=r"node 0 \(Add\): Add of uint8 data without "
                                         "quantization is not supported"):
        parse_onnx(model.SerializeToString())


def test_a_model_of_constants_runs_once_on_the_host(tmp_path):
    from aot.commands.run import run_on_host
    from aot.compile import compile_model

    value = helper.make_tensor("v", FLOAT, [2, 2], [1.0, 2.0, 3.0, 4.0])
    model = model_of([helper.make_node("Constant", [], ["y"], value=value)], [],
                     [("y", FLOAT, None)])
    compiled = compile_model(parse_onnx(model.SerializeToString()), "host/native",
                             measure_code=False)
    (y,) = run_on_host(compiled, [], workdir=tmp_path)
    np.testing.assert_array_equal(y, [[[1, 2], [3, 4]]])


def test_int8_matmul_of_a_token_sequence_then_a_bias_add_on_the_host(tmp_path):
    """QDQ MatMul on [tokens, 1, K] and a constant added after it (an attention
    projection): the host equals the reference.  The MatMul is one rank-3 dense
    (keep_num_dims) with the int8 add fused after it, which got every row but
    the first wrong on the host (issue 34; fixed in aot.kernels.group)."""
    from aot.commands.run import run_on_host
    from aot.compile import compile_model

    rng = np.random.default_rng(0)
    inits = {"xs": np.float32(0.05), "xz": np.int8(0), "ws": np.float32(0.01),
             "wz": np.int8(0), "w": rng.integers(-100, 100, (8, 6)).astype(np.int8),
             "ms": np.float32(0.03), "mz": np.int8(1), "bs": np.float32(0.02),
             "bz": np.int8(0), "b": rng.integers(-50, 50, (1, 1, 6)).astype(np.int8),
             "ys": np.float32(0.03), "yz": np.int8(1)}
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"]),
             helper.make_node("MatMul", ["xf", "wf"], ["m"]),
             helper.make_node("QuantizeLinear", ["m", "ms", "mz"], ["mq"]),
             helper.make_node("DequantizeLinear", ["mq", "ms", "mz"], ["mf"]),
             helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"]),
             helper.make_node("Add", ["bf", "mf"], ["a"]),
             helper.make_node("QuantizeLinear", ["a", "ys", "yz"], ["aq"]),
             helper.make_node("DequantizeLinear", ["aq", "ys", "yz"], ["y"])]
    model = model_of(nodes, [("x", FLOAT, [4, 1, 8])], [("y", FLOAT, None)], inits)
    graph = parse_onnx(model.SerializeToString())
    dense = [n for n in graph.nodes if n.op == "dense"]
    assert len(dense) == 1 and dense[0].attrs["keep_num_dims"]
    x = rand([4, 1, 8], 3, -4, 4)
    want = run(graph, [x])[0]
    compiled = compile_model(graph, "host/native", measure_code=False)
    np.testing.assert_array_equal(run_on_host(compiled, [x[None]], workdir=tmp_path)[0][0],
                                  want)


def test_qdq_matmul_of_two_activations_is_int8_within_one_step_of_onnxruntime():
    """Attention's Q @ K^T between QDQ pairs: one int8 batch_matmul (TFLM's
    requantization; onnxruntime's float one may round the other way: one step)."""
    inits = {"s": np.float32(0.05), "z": np.int8(2), "ys": np.float32(0.1), "yz": np.int8(-3)}
    nodes = []
    for n in ("q", "k"):
        nodes += [helper.make_node("QuantizeLinear", [n, "s", "z"], [n + "q"]),
                  helper.make_node("DequantizeLinear", [n + "q", "s", "z"], [n + "f"])]
    nodes += [helper.make_node("MatMul", ["qf", "kf"], ["m"]),
              helper.make_node("QuantizeLinear", ["m", "ys", "yz"], ["mq"]),
              helper.make_node("DequantizeLinear", ["mq", "ys", "yz"], ["y"])]
    model = model_of(nodes, [("q", FLOAT, [2, 5, 4]), ("k", FLOAT, [2, 4, 5])],
                     [("y", FLOAT, None)], inits)
    data = model.SerializeToString()
    graph = parse_onnx(data)
    assert [n.op for n in graph.nodes].count("batch_matmul") == 1
    assert next(n for n in graph.nodes if n.op == "batch_matmul").outputs[0].dtype == "int8"
    feeds = {"q": rand([2, 5, 4], 1, -2, 2), "k": rand([2, 4, 5], 2, -2, 2)}
    ours = run(graph, feeds)[0]
    theirs = ort_session(data).run(None, feeds)[0]
    assert np.abs(ours - theirs).max() <= 0.1 + 1e-6
