"""Tensor types, the operator registry, graphs, the builder and the printer."""

from __future__ import annotations

import numpy as np
import pytest

from aot.errors import AotError
from aot.ir import (
    PATTERNS, REGISTRY, Graph, GraphBuilder, IRError, Node, Quantization, Tensor, TensorType,
    format_graph, get_op,
)
from aot.ir.ops import Attr, register

# The operators issue 3 asks for; ONNX maps onto the same names.
EXPECTED_OPS = {
    "conv2d", "depthwise_conv2d", "dense", "avg_pool2d", "max_pool2d", "add", "sub", "mul",
    "maximum", "minimum", "reshape", "squeeze", "expand_dims", "softmax", "logistic", "tanh",
    "relu", "relu6", "leaky_relu", "hard_swish", "quantize", "dequantize", "concatenate", "pad",
    "mean", "strided_slice", "transpose", "svdf", "lstm", "mirror_pad", "broadcast_to",
    "resize_nearest", "reduce_max", "reduce_min", "equal", "not_equal", "greater",
    "greater_equal", "less", "less_equal", "logical_and", "logical_or", "logical_not", "select",
    "abs", "neg", "floor", "ceil", "round", "sqrt", "rsqrt", "exp", "log", "sin", "cos", "square",
    "erf", "div", "squared_difference", "floor_div", "floor_mod", "add_n", "elu", "gelu", "prelu",
    "cast",
    "zeros_like", "arg_max", "arg_min", "sum", "gather", "gather_nd", "cumsum", "batch_matmul",
    "transpose_conv2d", "resize_bilinear", "l2_pool2d", "dynamic_update_slice", "reduce_all",
    "log_softmax", "l2_normalization", "read_variable", "assign_variable", "topk"
}


def test_registry_lists_exactly_the_expected_operators():
    assert set(REGISTRY) == EXPECTED_OPS
    for opdef in REGISTRY.values():
        assert opdef.pattern in PATTERNS
        assert opdef.infer is not None


def test_pattern_kinds_of_representative_ops():
    assert get_op("conv2d").pattern == "out_elemwise_fusable"
    assert get_op("dense").pattern == "out_elemwise_fusable"
    assert get_op("add").pattern == "broadcast"
    assert get_op("relu").pattern == "elementwise"
    assert get_op("reshape").pattern == "injective"
    assert get_op("mean").pattern == "reduction"
    assert get_op("softmax").pattern == "opaque"


def test_registering_a_name_twice_is_refused():
    with pytest.raises(ValueError, match="registered twice"):
        register("relu", "elementwise", ("data",))(lambda ts, a, w: ts)
    assert REGISTRY["relu"].attrs == {}


def test_unknown_operator_suggests_a_name():
    with pytest.raises(IRError, match="did you mean 'conv2d'"):
        get_op("conv2dd")


def test_quantization_validation():
    q = Quantization.per_tensor(0.5, -3)
    assert str(q) == "q(0.5, -3)"
    with pytest.raises(IRError, match="positive"):
        Quantization.per_tensor(0.0, 0)
    with pytest.raises(IRError, match="give an axis"):
        Quantization((0.1, 0.2), (0, 0))
    with pytest.raises(IRError, match="dimension 0"):
        TensorType((3, 2), "int8", Quantization((0.1, 0.2), (0, 0), 0))
    assert issubclass(IRError, AotError)


def test_tensor_type_facts():
    t = TensorType((1, 4, 4, 3), "int16")
    assert t.size == 48 and t.nbytes == 96 and t.rank == 4
    assert str(t) == "int16[1,4,4,3]"
    with pytest.raises(IRError, match="unknown dtype"):
        TensorType((1,), "float16")
    with pytest.raises(IRError, match="negative"):
        TensorType((1, -1), "int8")


def _conv_graph(activation="relu"):
    b = GraphBuilder("small")
    q = Quantization.per_tensor(0.1, -1)
    x = b.input("x", (1, 5, 5, 2), "int8", q)
    w = b.constant("w", np.ones((3, 3, 3, 2), np.int8),
                   quant=Quantization((0.01, 0.02, 0.03), (0, 0, 0), 0))
    bias = b.constant("b", np.zeros(3, np.int32),
                      quant=Quantization((0.001, 0.002, 0.003), (0, 0, 0), 0))
    out_q = TensorType((1, 3, 3, 3), "int8", Quantization.per_tensor(0.2, 4))
    y = b.op("conv2d", [x, w, bias], out_type=out_q, name="conv", strides=(2, 2),
             padding=(1, 1, 1, 1), activation=activation)
    z = b.op("reshape", [y], name="flat", newshape=(1, 27))
    return b.build([z])


GOLDEN = """\
graph small(%0: int8[1,5,5,2] q(0.1, -1)) {
  @0: constant int8[3,3,3,2] q(axis=0, n=3, zp=0)
  @1: constant int32[3] q(axis=0, n=3, zp=0)
  %1 = conv2d(%0, @0, @1) {activation=relu, dilation=[1,1], padding=[1,1,1,1], strides=[2,2]} \
: int8[1,3,3,3] q(0.2, 4)
  %2 = reshape(%1) {newshape=[1,27]} : int8[1,27] q(0.2, 4)
  return %2
}
"""


def test_printer_golden():
    assert format_graph(_conv_graph()) == GOLDEN
    assert str(_conv_graph()) == GOLDEN


def test_builder_fills_defaults_and_checks_attributes():
    g = _conv_graph()
    assert g.nodes[0].attrs["dilation"] == (1, 1)
    with pytest.raises(IRError, match="'activation'.*not allowed"):
        _conv_graph(activation="gelu")
    b = GraphBuilder()
    x = b.input("x", (1, 4), "float32")
    with pytest.raises(IRError, match="unknown attribute 'alpah'.*did you mean 'alpha'"):
        b.op("leaky_relu", [x], alpah=0.1)
    with pytest.raises(IRError, match="attribute 'alpha' is required"):
        b.op("leaky_relu", [x])


def test_type_inference_errors_name_the_node():
    b = GraphBuilder()
    x = b.input("x", (1, 5, 5, 2), "float32")
    w = b.constant("w", np.ones((3, 3, 3, 4), np.float32))
    with pytest.raises(IRError, match="conv2d node 'c1'.*expects 4 input channels, data has 2"):
        b.op("conv2d", [x, w], name="c1")
    with pytest.raises(IRError, match="add node 'a'.*do not broadcast"):
        b.op("add", [x, b.input("y", (1, 5, 4, 2), "float32")], name="a")
    with pytest.raises(IRError, match="reshape node 'r'.*cannot reshape"):
        b.op("reshape", [x], name="r", newshape=(1, 49))


def test_declared_output_must_agree_with_inference():
    b = GraphBuilder()
    x = b.input("x", (2, 3), "float32")
    with pytest.raises(IRError, match=r"declared float32\[3, 2\].*give float32\[2, 3\]"):
        b.op("relu", [x], out_type=TensorType((3, 2), "float32"), name="r")


@pytest.mark.parametrize("op, attrs, shape", [
    ("conv2d", dict(strides=(2, 2), padding=(0, 0, 1, 1)), (1, 4, 4, 4)),
    ("conv2d", dict(dilation=(2, 2)), (1, 4, 4, 4)),
    ("max_pool2d", dict(pool_size=(2, 2), strides=(2, 2)), (1, 4, 4, 3)),
    ("pad", dict(pad_width=((0, 0), (1, 2), (0, 0), (3, 0))), (1, 11, 8, 6)),
    ("mean", dict(axes=(1, 2), keepdims=True), (1, 1, 1, 3)),
    ("mean", dict(axes=(1, 2)), (1, 3)),
    ("strided_slice", dict(begin=(0, 1, 0, 0), end=(1, 8, 8, 3), strides=(1, 2, 3, 1),
                           squeeze_axes=(0,)), (4, 3, 3)),
    ("transpose", dict(perm=(0, 3, 1, 2)), (1, 3, 8, 8)),
    ("squeeze", dict(axes=(0,)), (8, 8, 3)),
    ("expand_dims", dict(axis=-1), (1, 8, 8, 3, 1)),
])
def test_shape_inference(op, attrs, shape):
    b = GraphBuilder()
    x = b.input("x", (1, 8, 8, 3), "float32")
    inputs = [x]
    if op == "conv2d":
        inputs.append(b.constant("w", np.zeros((4, 3, 3, 3), np.float32)))
    y = b.op(op, inputs, **attrs)
    assert y.shape == shape


def test_broadcast_and_concatenate_shapes():
    b = GraphBuilder()
    x = b.input("x", (1, 4, 1, 3), "int8")
    y = b.input("y", (5, 3), "int8")
    assert b.op("mul", [x, y]).shape == (1, 4, 5, 3)
    assert b.op("concatenate", [x, x, x], axis=-1).shape == (1, 4, 1, 9)


def test_graph_rejects_wrong_order_and_double_production():
    b = GraphBuilder()
    x = b.input("x", (1, 4), "float32")
    y = b.op("relu", [x], name="r1")
    z = b.op("tanh", [y], name="t1")
    g = b.build([z])
    with pytest.raises(IRError, match="tanh node 't1' reads tensor 'r1' before"):
        Graph(g.inputs, g.outputs, list(reversed(g.nodes)))
    dup = Node("relu", [x], [y], {}, "again")
    with pytest.raises(IRError, match="produced twice"):
        Graph(g.inputs, g.outputs, [*g.nodes, dup])


def test_two_tensors_may_not_share_a_name():
    b = GraphBuilder()
    x = b.input("x", (1, 4), "float32")
    y = b.op("relu", [x], out_name="y")
    z = b.op("relu", [y], out_name="y")
    with pytest.raises(IRError, match="two tensors are named 'y'"):
        b.build([z])


def test_constants_may_share_a_name():
    b = GraphBuilder()
    x = b.input("x", (1, 4), "float32")
    one = b.constant("c", np.ones((1, 4), np.float32))
    two = b.constant("c", np.full((1, 4), 2, np.float32))
    y = b.op("add", [b.op("add", [x, one]), two])
    g = b.build([y])
    assert [n.op for n in g.nodes] == ["add", "add"]


def test_state_slots_must_be_variables():
    b = GraphBuilder()
    x = b.input("x", (1, 8), "float32")
    wf = b.constant("wf", np.zeros((4, 8), np.float32))
    wt = b.constant("wt", np.zeros((4, 3), np.float32))
    state = b.variable("s", (1, 12), "float32")
    y = b.op("svdf", [x, wf, wt, None, state], rank=2)
    g = b.build([y])
    assert y.shape == (1, 2)
    assert g.variables() == [state]
    assert [t.name for t in g.constants()] == ["wf", "wt"]
    not_var = b.constant("s2", np.zeros((1, 12), np.float32))
    with pytest.raises(IRError, match="state must be a variable"):
        b.op("svdf", [x, wf, wt, None, not_var], rank=2)


def test_constants_are_read_only_copies():
    data = np.arange(4, dtype=np.int32)
    t = Tensor("c", TensorType((4,), "int32"), "constant", data)
    data[0] = 99
    assert t.data[0] == 0
    with pytest.raises(ValueError):
        t.data[1] = 5
    with pytest.raises(IRError, match="its type says"):
        Tensor("c", TensorType((4,), "int8"), "constant", data)


def test_attr_conversion():
    assert Attr("ints", length=2).convert([1, 2], "x") == (1, 2)
    with pytest.raises(IRError, match="expected 2 values"):
        Attr("ints", length=2).convert([1], "x")
    with pytest.raises(IRError, match="expected int"):
        Attr("int").convert(1.5, "x")
    assert Attr("pairs").convert([[0, 1]], "x") == ((0, 1),)


def test_nodes_have_one_input_per_slot():
    b = GraphBuilder()
    x = b.input("x", (1, 4), "float32")
    w = b.constant("w", np.zeros((3, 4), np.float32))
    y = b.op("dense", [x, w])  # the builder fills the absent bias with None
    g = b.build([y])
    assert g.nodes[0].inputs == [x, w, None]
    short = Node("dense", [x, w], [Tensor("z", TensorType((1, 3), "float32"))],
                 dict(g.nodes[0].attrs), "short")
    with pytest.raises(IRError, match="takes 3 inputs"):
        Graph([x], short.outputs, [short])
