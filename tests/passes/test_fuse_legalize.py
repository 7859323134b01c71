"""fuse_ops and legalize_quantized: groups in the printed graph, folded constants that compute."""

from __future__ import annotations

import numpy as np
import pytest
from pass_checks import assert_same_semantics

from aot.ir import GraphBuilder, Quantization, TensorType
from aot.passes import PassContext, annotations, canonicalize, fuse_ops, legalize_quantized
from aot.reference.interpreter import run
from aot.quant import arith as quant

Q = Quantization.per_tensor


def _float_net():
    rng = np.random.default_rng(1)
    b = GraphBuilder("net")
    x = b.input("x", (1, 4, 4, 2), "float32")
    w = b.constant("w", rng.standard_normal((3, 1, 1, 2)).astype(np.float32))
    y = b.op("conv2d", [x, w, None])
    y = b.op("add", [y, b.constant("t", np.ones(3, np.float32))])
    y = b.op("relu", [y])
    r = b.op("reshape", [y], newshape=(1, 48))
    t = b.op("transpose", [x], perm=(0, 3, 1, 2))
    t = b.op("relu6", [t])
    s = b.op("softmax", [r])
    return b.build([s, t])


EXPECTED_GROUPS = """\
graph net(%0: float32[1,4,4,2]) {
  @0: constant float32[3,1,1,2]
  @1: constant float32[3]
  group fused_0_conv2d_add_relu fused anchor=conv2d {
    %1 = conv2d(%0, @0, _) {activation=none, dilation=[1,1], padding=[0,0,0,0], strides=[1,1]} : float32[1,4,4,3]
    %2 = add(%1, @1) {activation=none} : float32[1,4,4,3]
    %3 = relu(%2) : float32[1,4,4,3]
  }
  group view_1_reshape view {
    %4 = reshape(%3) {newshape=[1,48]} : float32[1,48]  # view
  }
  group fused_2_transpose_relu6 fused {
    %5 = transpose(%0) {perm=[0,3,1,2]} : float32[1,2,4,4]
    %6 = relu6(%5) : float32[1,2,4,4]
  }
  group opaque_3_softmax opaque {
    %7 = softmax(%4) {beta=1, out_dtype=same} : float32[1,48]
  }
  return %7, %6
}
"""  # noqa: E501 (the printer's real line)


def test_fusion_groups_by_pattern_and_the_printer_shows_them():
    """conv + bias add + activation fuse; a view and softmax stand alone; injective
    transpose takes the following elementwise op."""
    before = _float_net()
    after = fuse_ops(canonicalize(before))
    assert str(after) == EXPECTED_GROUPS
    groups = annotations(after).groups
    assert [n for g in groups for n in g.nodes] == after.nodes
    assert_same_semantics(before, after)


def test_fusion_respects_max_depth_and_injective_switch():
    g = canonicalize(_float_net())
    with PassContext(config={"fuse.max_depth": 2}):
        names = [grp.name for grp in annotations(fuse_ops(g)).groups]
    assert names[:2] == ["fused_0_conv2d_add", "fused_1_relu"]
    with PassContext(config={"fuse.injective": False}):
        names = [grp.name for grp in annotations(fuse_ops(g)).groups]
    assert "fused_2_transpose" in names and "fused_3_relu6" in names


def test_fusion_reorders_a_residual_branch_into_one_contiguous_group():
    """add(conv_b(conv_a(x)), conv_c(x)): the add joins conv_c's group, which moves after
    conv_b, so every group's nodes are contiguous and the values are unchanged."""
    rng = np.random.default_rng(2)
    b = GraphBuilder("res")
    x = b.input("x", (1, 3, 3, 2), "float32")

    def conv(t):
        return b.op("conv2d", [t, b.constant("", rng.standard_normal((2, 1, 1, 2))
                                                .astype(np.float32)), None])

    a = conv(x)
    c = conv(x)
    bb = conv(a)
    before = b.build([b.op("add", [c, bb])])
    after = fuse_ops(before)
    assert [[n.op for n in g.nodes] for g in annotations(after).groups] == [
        ["conv2d"], ["conv2d"], ["conv2d", "add"]]
    assert after.nodes[1] is before.nodes[2]
    assert_same_semantics(before, after)


# ----------------------------------------------------------------------- legalize_quantized

def _int8_dense(per_channel: bool):
    rng = np.random.default_rng(4)
    units = 5
    ws = rng.uniform(0.002, 0.05, units if per_channel else 1).astype(np.float32)
    wq = Quantization(tuple(ws), (0,) * units, 0) if per_channel else Q(float(ws[0]), 0)
    xq, yq = Q(0.05, -7), Q(0.3, 9)
    b = GraphBuilder("d")
    x = b.input("x", (3, 8), "int8", xq)
    w = b.constant("w", rng.integers(-127, 128, (units, 8)).astype(np.int8), quant=wq)
    bias = b.constant("b", rng.integers(-3000, 3000, units).astype(np.int32))
    y = b.op("dense", [x, w, bias], activation="relu",
             out_type=TensorType((3, units), "int8", yq))
    return b.build([y])


@pytest.mark.parametrize("per_channel", [True, False])
def test_legalized_dense_constants_reproduce_the_reference_bits(per_channel):
    g = legalize_quantized(_int8_dense(per_channel))
    node = g.nodes[0]
    p = annotations(g).quant[node]
    assert p.multiplier.shape == (5,) and p.shift.shape == (5,)
    assert p.input_offset == 7 and p.output_offset == 9 and p.clamp == (9, 127)
    x = np.random.default_rng(0).integers(-128, 128, (3, 8)).astype(np.int8)
    # A kernel that only sees the folded constants: integer ops, no float scale anywhere.
    acc = (x.astype(np.int64) + p.input_offset) @ node.inputs[1].data.astype(np.int64).T
    acc = quant.wrap_int32(acc + node.inputs[2].data)
    y = quant.multiply_by_quantized_multiplier(acc, p.multiplier, p.shift) + p.output_offset
    y = np.clip(y, *p.clamp).astype(np.int8)
    np.testing.assert_array_equal(y, run(g, [x])[0])


def test_legalized_add_constants_reproduce_the_reference_bits():
    q1, q2, qy = Q(0.03, -4), Q(0.08, 11), Q(0.1, -2)
    b = GraphBuilder("a")
    x1 = b.input("x1", (2, 6), "int8", q1)
    x2 = b.input("x2", (2, 6), "int8", q2)
    y = b.op("add", [x1, x2], out_type=TensorType((2, 6), "int8", qy))
    g = legalize_quantized(b.build([y]))
    p = annotations(g).quant[g.nodes[0]]
    assert "left_shift=20" in str(g)
    rng = np.random.default_rng(7)
    a = rng.integers(-128, 128, (2, 6)).astype(np.int8)
    c = rng.integers(-128, 128, (2, 6)).astype(np.int8)
    shift = p.extra["left_shift"]
    s1 = quant.multiply_by_quantized_multiplier(
        (a.astype(np.int64) + p.input_offset) << shift, *p.extra["input1"])
    s2 = quant.multiply_by_quantized_multiplier(
        (c.astype(np.int64) + p.extra["input2_offset"]) << shift, *p.extra["input2"])
    out = quant.multiply_by_quantized_multiplier(quant.wrap_int32(s1 + s2), p.multiplier,
                                                 p.shift) + p.output_offset
    np.testing.assert_array_equal(np.clip(out, *p.clamp).astype(np.int8), run(g, [a, c])[0])


def test_legalize_leaves_float_nodes_without_constants():
    g = _float_net()
    assert legalize_quantized(g) is g


def test_legalized_int16_dense_uses_the_wide_single_rounding_path():
    rng = np.random.default_rng(9)
    b = GraphBuilder("d16")
    x = b.input("x", (2, 6), "int16", Q(0.002, 0))
    w = b.constant("w", rng.integers(-127, 128, (4, 6)).astype(np.int8),
                   quant=Quantization((0.01, 0.02, 0.015, 0.03), (0,) * 4, 0))
    bias = b.constant("b", rng.integers(-10**6, 10**6, 4).astype(np.int64))
    y = b.op("dense", [x, w, bias], out_type=TensorType((2, 4), "int16", Q(0.004, 0)))
    g = legalize_quantized(b.build([y]))
    p = annotations(g).quant[g.nodes[0]]
    assert p.wide and ", wide" in str(g)
    xs = rng.integers(-32768, 32768, (2, 6)).astype(np.int16)
    acc = xs.astype(np.int64) @ w.data.astype(np.int64).T + bias.data
    out = quant.multiply_by_quantized_multiplier_int64(acc, p.multiplier, p.shift)
    out = np.clip(out + p.output_offset, *p.clamp).astype(np.int16)
    np.testing.assert_array_equal(out, run(g, [xs])[0])


def test_legalized_conv_constants_reproduce_the_reference_bits():
    from aot.reference.ops.common import windows

    rng = np.random.default_rng(10)
    b = GraphBuilder("c")
    x = b.input("x", (1, 5, 5, 3), "int8", Q(0.04, 6))
    scales = tuple(rng.uniform(0.002, 0.05, 4))
    w = b.constant("w", rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8),
                   quant=Quantization(scales, (0,) * 4, 0))
    bias = b.constant("b", rng.integers(-2000, 2000, 4).astype(np.int32))
    y = b.op("conv2d", [x, w, bias], padding=(1, 1, 1, 1), strides=(2, 2), activation="relu6",
             out_type=TensorType((1, 3, 3, 4), "int8", Q(0.05, -3)))
    g = legalize_quantized(b.build([y]))
    p = annotations(g).quant[g.nodes[0]]
    xs = rng.integers(-128, 128, (1, 5, 5, 3)).astype(np.int8)
    # Padded positions hold the zero point, so they add nothing once offset.
    patches = windows(xs.astype(np.int64), 3, 3, (2, 2), (1, 1), (3, 3), ((1, 1), (1, 1)),
                      -p.input_offset) + p.input_offset
    acc = np.einsum("nhwijc,oijc->nhwo", patches, w.data.astype(np.int64)) + bias.data
    out = quant.multiply_by_quantized_multiplier(quant.wrap_int32(acc), p.multiplier, p.shift)
    out = np.clip(out + p.output_offset, *p.clamp).astype(np.int8)
    assert p.clamp[1] < 127  # relu6 narrows the range
    np.testing.assert_array_equal(out, run(g, [xs])[0])
