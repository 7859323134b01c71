"""Each graph pass on a before graph, compared with the expected graph and run on both sides.

Structural comparison uses the IR printer (tensor numbering depends on the
structure only); the semantic check runs the reference interpreter on
seeded random inputs (bit for bit for integer graphs).
"""

from __future__ import annotations

import numpy as np
import pytest

from aot.ir import GraphBuilder, Quantization, format_graph
from aot.passes import (PassContext, PassError, annotations, canonicalize, check_layout,
                        fold_constants, fold_pad, remove_dead_code, simplify_inference)
from pass_checks import assert_same_semantics

Q = Quantization.per_tensor


def _same(after, expected):
    assert format_graph(after) == format_graph(expected)


# ----------------------------------------------------------------------- remove_dead_code

def test_dead_code_removes_unused_chains_but_keeps_state_updates():
    def build(with_dead):
        b = GraphBuilder("g")
        x = b.input("x", (1, 4), "float32")
        y = b.op("relu", [x])
        if with_dead:
            b.op("mul", [b.op("relu6", [x]), y])
        state = b.variable("s", (1, 8), "float32")
        wf = b.constant("wf", np.ones((2, 4), np.float32))
        wt = b.constant("wt", np.ones((2, 4), np.float32))
        b.op("svdf", [x, wf, wt, None, state], rank=1)  # output unused, state is not
        return b.build([y])

    after = remove_dead_code(build(True))
    _same(after, build(False))
    g = build(False)
    assert remove_dead_code(g) is g  # nothing to do: the same object
    assert_same_semantics(build(True), after)


# ----------------------------------------------------------------------- fold_constants

def test_fold_constants_float_chain():
    """add(x, relu(c1 + c2)) becomes add(x, @folded); the folded value is exact."""
    b = GraphBuilder("g")
    x = b.input("x", (2, 3), "float32")
    c1 = b.constant("c1", np.array([[1, -2, 3]], np.float32))
    c2 = b.constant("c2", np.array([[-4, 1, 0.5]], np.float32))
    before = b.build([b.op("add", [x, b.op("relu", [b.op("add", [c1, c2])])])])

    e = GraphBuilder("g")
    ex = e.input("x", (2, 3), "float32")
    folded = e.constant("f", np.array([[0, 0, 3.5]], np.float32))
    expected = e.build([e.op("add", [ex, folded])])

    after = fold_constants(before)
    _same(after, expected)
    np.testing.assert_array_equal(after.nodes[0].inputs[1].data, [[0, 0, 3.5]])
    assert_same_semantics(before, after)


def test_fold_constants_int8_uses_the_reference_arithmetic():
    qa, qb, qy = Q(0.05, 3), Q(0.07, -2), Q(0.1, 1)
    b = GraphBuilder("g")
    x = b.input("x", (1, 8), "int8", qy)
    c1 = b.constant("c1", np.arange(-60, 60, 15, dtype=np.int8).reshape(1, 8), quant=qa)
    c2 = b.constant("c2", np.arange(50, -70, -15, dtype=np.int8).reshape(1, 8), quant=qb)
    s = b.op("add", [c1, c2], out_type=b_type((1, 8), qy))
    before = b.build([b.op("maximum", [x, s], out_type=b_type((1, 8), qy))])
    after = fold_constants(before)
    assert [n.op for n in after.nodes] == ["maximum"]
    assert_same_semantics(before, after)


def b_type(shape, quant, dtype="int8"):
    from aot.ir import TensorType

    return TensorType(shape, dtype, quant)


def test_fold_constants_leaves_nodes_with_inputs_alone():
    b = GraphBuilder("g")
    x = b.input("x", (1, 4), "float32")
    g = b.build([b.op("relu", [x])])
    assert fold_constants(g) is g


# ----------------------------------------------------------------------- simplify_inference

def _float_conv_graph(scale, shift, activation="relu", extra_user=False):
    rng = np.random.default_rng(5)
    b = GraphBuilder("g")
    x = b.input("x", (1, 6, 6, 3), "float32")
    w = b.constant("w", rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
    bias = b.constant("b", rng.standard_normal(4).astype(np.float32))
    y = b.op("conv2d", [x, w, bias], padding=(1, 1, 1, 1))
    s = b.constant("s", scale)
    t = b.constant("t", shift)
    z = b.op("add", [b.op("mul", [y, s]), t], activation=activation)
    outs = [z, b.op("relu", [y])] if extra_user else [z]
    return b.build(outs), (w.data, bias.data)


def test_simplify_inference_folds_scale_and_shift_into_conv():
    scale = np.array([0.5, -2.0, 1.5, 3.0], np.float32)
    shift = np.array([[[[0.25, -1.0, 2.0, 0.0]]]], np.float32)
    before, (w, bias) = _float_conv_graph(scale, shift)
    after = simplify_inference(before)

    e = GraphBuilder("g")
    ex = e.input("x", (1, 6, 6, 3), "float32")
    ew = e.constant("w", w * scale.reshape(4, 1, 1, 1))
    eb = e.constant("b", bias * scale + shift.reshape(4))
    expected = e.build([e.op("conv2d", [ex, ew, eb], padding=(1, 1, 1, 1), activation="relu")])
    _same(after, expected)
    np.testing.assert_array_equal(after.nodes[0].inputs[1].data, ew.data)
    np.testing.assert_array_equal(after.nodes[0].inputs[2].data, eb.data)
    assert_same_semantics(before, after, rtol=1e-5, atol=1e-5)


def test_simplify_inference_leaves_shared_outputs_and_spatial_constants():
    before, _ = _float_conv_graph(np.float32(2.0), np.zeros(4, np.float32), extra_user=True)
    assert simplify_inference(before) is before
    spatial = np.ones((1, 6, 6, 1), np.float32)  # varies over H and W: not a channel scale
    before, _ = _float_conv_graph(spatial, np.zeros(4, np.float32))
    assert [n.op for n in simplify_inference(before).nodes] == ["conv2d", "mul", "add"]


# ----------------------------------------------------------------------- canonicalize

def test_canonicalize_collapses_reshape_chains_into_one_view():
    q = Q(0.1, 0)
    b = GraphBuilder("g")
    x = b.input("x", (1, 4, 1, 6), "int8", q)
    r = b.op("reshape", [x], newshape=(1, 24))
    r = b.op("expand_dims", [r], axis=0)
    r = b.op("squeeze", [r], axes=(0,))
    r = b.op("reshape", [r], newshape=(4, 6))
    same = b.op("reshape", [r], newshape=(4, 6))  # an identity reshape disappears
    before = b.build([b.op("relu", [same])])

    e = GraphBuilder("g")
    ex = e.input("x", (1, 4, 1, 6), "int8", q)
    expected = e.build([e.op("relu", [e.op("reshape", [ex], newshape=(4, 6))])])
    after = canonicalize(before)
    _same(after, expected)
    assert annotations(after).views == {after.nodes[0]}
    assert "# view" in str(after)
    assert_same_semantics(before, after)


def test_canonicalize_keeps_a_reshape_whose_result_has_another_reader():
    b = GraphBuilder("g")
    x = b.input("x", (2, 6), "float32")
    r = b.op("reshape", [x], newshape=(3, 4))
    s = b.op("expand_dims", [r], axis=0)
    before = b.build([s, b.op("relu", [r])])
    after = canonicalize(before)
    assert [(n.op, n.inputs[0].shape) for n in after.nodes] == [
        ("reshape", (2, 6)), ("reshape", (3, 4)), ("relu", (3, 4))]
    assert len(annotations(after).views) == 2
    assert_same_semantics(before, after)


# ----------------------------------------------------------------------- fold_pad

def _pad_graph(value, consumer="conv2d", dtype="int8"):
    rng = np.random.default_rng(3)
    q = Q(0.1, -5) if dtype == "int8" else None
    b = GraphBuilder("g")
    x = b.input("x", (1, 5, 5, 2), dtype, q)
    p = b.op("pad", [x], pad_width=((0, 0), (1, 2), (0, 1), (0, 0)), value=value)
    if consumer == "conv2d":
        if dtype == "int8":
            w = b.constant("w", rng.integers(-127, 128, (3, 3, 3, 2)).astype(np.int8),
                           quant=Quantization((0.01, 0.02, 0.03), (0, 0, 0), 0))
            bias = b.constant("b", rng.integers(-500, 500, 3).astype(np.int32),
                              quant=Quantization((0.001, 0.002, 0.003), (0, 0, 0), 0))
            y = b.op("conv2d", [p, w, bias], padding=(0, 1, 0, 1),
                     out_type=b_type((1, 6, 6, 3), Q(0.2, 3)))
        else:
            w = b.constant("w", rng.standard_normal((3, 3, 3, 2)).astype(np.float32))
            y = b.op("conv2d", [p, w, None], padding=(0, 1, 0, 1))
    else:
        y = b.op(consumer, [p], pool_size=(3, 3))
    return b.build([y])


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_fold_pad_into_conv_padding(dtype):
    before = _pad_graph(0.0, dtype=dtype)
    after = fold_pad(before)
    assert [n.op for n in after.nodes] == ["conv2d"]
    assert after.nodes[0].attrs["padding"] == (1, 1, 2, 2)
    assert after.nodes[0].inputs[0] is before.inputs[0]
    assert_same_semantics(before, after)


def test_fold_pad_refuses_a_value_other_than_zero_and_average_pools():
    g = _pad_graph(1.0)  # quantizes to zero point + 10: real padding data
    assert fold_pad(g) is g
    g = _pad_graph(0.0, consumer="avg_pool2d")  # explicit pad counts in the average
    assert fold_pad(g) is g


def test_fold_pad_into_max_pool_when_padding_with_the_lowest_value():
    before = _pad_graph(-1000.0, consumer="max_pool2d")
    after = fold_pad(before)
    assert [n.op for n in after.nodes] == ["max_pool2d"]
    assert after.nodes[0].attrs["padding"] == (1, 0, 2, 1)
    assert_same_semantics(before, after)
    assert fold_pad(_pad_graph(0.0, consumer="max_pool2d")).nodes[0].op == "pad"


# ----------------------------------------------------------------------- check_layout

def test_check_layout_accepts_nhwc_and_refuses_other_layouts():
    g = _pad_graph(0.0)
    assert check_layout(g) is g
    with PassContext(config={"layout": "NCHW"}), pytest.raises(PassError, match="NHWC"):
        check_layout(g)


@pytest.mark.parametrize("op", ["depthwise_conv2d", "dense"])
def test_simplify_inference_scales_the_right_weight_axis(op):
    """Depthwise weights hold channels on axis 3 (1HWC), dense on axis 0 ([units, K])."""
    rng = np.random.default_rng(8)
    b = GraphBuilder("g")
    x = b.input("x", (1, 5, 5, 3), "float32")
    if op == "dense":
        w = b.constant("w", rng.standard_normal((6, 75)).astype(np.float32))
        y = b.op("dense", [x, w, None])
    else:
        w = b.constant("w", rng.standard_normal((1, 3, 3, 6)).astype(np.float32))
        y = b.op("depthwise_conv2d", [x, w, None], depth_multiplier=2)
    s = b.constant("s", rng.uniform(0.5, 2, 6).astype(np.float32))
    before = b.build([b.op("sub", [b.op("mul", [s, y]), b.constant("t", np.float32(0.5))])])
    after = simplify_inference(before)
    assert [n.op for n in after.nodes] == [op]
    assert after.nodes[0].inputs[2] is not None  # the subtraction became a bias
    assert_same_semantics(before, after, rtol=1e-5, atol=1e-5)
