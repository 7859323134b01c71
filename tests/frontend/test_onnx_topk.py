"""ONNX TopK onto the IR's ``topk``: values and int64 indices, ties to the lower
index (ONNX's rule), float32, int8 between QDQ pairs and plain integers; the
reference against onnxruntime, the C kernel on the host against the reference,
and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from test_onnx_breadth import check, model_of, ops, rand

from aot.frontend import ModelError
from aot.frontend.onnx import parse_onnx
from aot.ir import GraphBuilder, Quantization
from aot.reference.interpreter import run

FLOAT, INT64 = TensorProto.FLOAT, TensorProto.INT64


def _topk_model(shape, k, elem=FLOAT, opset=17, **attrs):
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], **attrs)
    return model_of([node], [("x", elem, shape)], [("v", elem, None), ("i", INT64, None)],
                    {"k": np.array([k], np.int64)}, opset=opset)


@pytest.mark.parametrize("attrs", [{}, {"axis": 1}, {"axis": 0, "largest": 0},
                                   {"axis": -2}])
def test_float_topk_matches_onnxruntime_with_ties(attrs):
    x = np.round(rand([4, 6, 5], 3, -3, 3))  # whole numbers: many ties
    graph = check(_topk_model([4, 6, 5], 3, **attrs), {"x": x})
    assert ops(graph) == ["topk", "topk"]
    assert [t.dtype for t in graph.outputs] == ["float32", "int64"]


def test_unsorted_topk_is_given_sorted():
    """sorted=0 leaves the order open (onnxruntime's differs): the same elements."""
    from support.onnx_oracle import ort_session

    model = _topk_model([3, 8], 3, sorted=0)
    x = rand([3, 8], 9)
    ours = run(parse_onnx(model.SerializeToString()), {"x": x})
    sorted_model = _topk_model([3, 8], 3).SerializeToString()
    np.testing.assert_array_equal(ours[0], run(parse_onnx(sorted_model), {"x": x})[0])
    theirs = ort_session(model.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_array_equal(np.sort(ours[0], axis=1), np.sort(theirs, axis=1))


def test_integer_topk_matches_onnxruntime():
    x = np.random.default_rng(1).integers(-5, 5, (3, 9)).astype(np.int64)
    check(_topk_model([3, 9], 4, TensorProto.INT64, largest=0), {"x": x})


def test_opset_below_10_takes_k_as_an_attribute():
    node = helper.make_node("TopK", ["x"], ["v", "i"], k=2)
    model = model_of([node], [("x", FLOAT, [2, 5])], [("v", FLOAT, None), ("i", INT64, None)],
                     opset=9)
    check(model, {"x": rand([2, 5], 4)})


def test_only_the_outputs_read_become_nodes():
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"])
    model = model_of([node], [("x", FLOAT, [2, 5])], [("i", INT64, None)],
                     {"k": np.array([2], np.int64)})
    graph = check(model, {"x": rand([2, 5], 5)})
    assert [n.attrs["output"] for n in graph.nodes] == ["indices"]


def test_qdq_topk_values_stay_int8():
    """Values between DequantizeLinear and QuantizeLinear are the input's integers."""
    inits = {"s": np.float32(0.1), "z": np.int8(3), "k": np.array([3], np.int64)}
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xf"]),
             helper.make_node("TopK", ["xf", "k"], ["v", "i"]),
             helper.make_node("QuantizeLinear", ["v", "s", "z"], ["vq"])]
    model = model_of(nodes, [("x", FLOAT, [2, 8])],
                     [("vq", TensorProto.INT8, None), ("i", INT64, None)], inits)
    graph = check(model, {"x": rand([2, 8], 6, -2, 2)})
    topk = [n for n in graph.nodes if n.op == "topk"]
    assert [n.outputs[0].dtype for n in topk] == ["int8", "int64"]


@pytest.mark.parametrize("k, attrs, message", [
    (0, {}, r"K=0 must be 1 to the axis size 5 \(an empty result is not supported\)"),
    (6, {}, "K=6 must be 1 to the axis size 5"),
    (2, {"axis": 2}, "axis 2 is out of range for rank 2"),
])
def test_bad_k_or_axis_is_refused(k, attrs, message):
    with pytest.raises(ModelError, match=r"node 0 \(TopK\): " + message):
        parse_onnx(_topk_model([2, 5], k, **attrs).SerializeToString())


def test_k_computed_at_run_time_is_refused():
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"])
    model = model_of([node], [("x", FLOAT, [2, 5]), ("k", INT64, [1])],
                     [("v", FLOAT, None), ("i", INT64, None)])
    with pytest.raises(ModelError, match=r"K \(input 1\) must be known at import"):
        parse_onnx(model.SerializeToString())


@pytest.mark.parametrize("target", ["host/native", "llvm"])
@pytest.mark.parametrize("dtype", ["float32", "int8", "int64"])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.one_fast
def test_host_kernel_equals_the_reference(dtype, largest, target, tmp_path):
    """The kernel (ranks, then the position of each rank) on the host, as C and
    through LLVM's JIT, both outputs, with ties and the extreme int8 values."""
    from aot.commands.run import run_on_host
    from aot.compile import compile_model

    b = GraphBuilder("topk")
    q = Quantization.per_tensor(0.1, 3) if dtype == "int8" else None
    x = b.input("x", (2, 9, 3), dtype, quant=q)
    outs = [b.op("topk", [x], k=4, axis=1, largest=largest, output=o)
            for o in ("values", "indices")]
    graph = b.build(outs)
    rng = np.random.default_rng(7)
    data = rng.integers(-3, 3, (2, 9, 3)).astype(dtype)
    if dtype == "int8":
        data[0, :2, 0] = [-128, 127]
    want = run(graph, [data])
    got = run_on_host(compile_model(graph, target, measure_code=False), [data[None]],
                      workdir=tmp_path)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g[0], w)
    wide = data.astype(np.float64)
    ref_idx = np.argsort(-wide if largest else wide, axis=1, kind="stable")[:, :4]
    np.testing.assert_array_equal(want[1], ref_idx)
