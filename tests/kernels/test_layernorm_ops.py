"""The integer operators of an int8 LayerNorm (Keras LayerNormalization as the
TFLite converter emits it: MEAN, SQUARED_DIFFERENCE, RSQRT, MUL, ADD, SUB):
SQUARED_DIFFERENCE in int8, int16 and int32 and RSQRT in int8 and int16, imported, run
by the reference and compiled to C on the host, bit for bit as TFLM runs them."""

from __future__ import annotations

import numpy as np
import pytest

from aot.frontend import load_model
from aot.frontend.errors import ModelError
from support.parity import assert_matches_tflm
from support.tflite_builder import ModelBuilder

_SQD_QUANT = {
    # (a, b, y): unequal scales and zero points; the LayerNorm case shares a's scale
    "int8": ({"scale": 0.05, "zero_point": -3}, {"scale": 0.031, "zero_point": 9},
             {"scale": 0.07, "zero_point": -128}),
    "int8-shared": ({"scale": 0.04, "zero_point": 5}, {"scale": 0.04, "zero_point": 5},
                    {"scale": 0.02, "zero_point": -128}),
    "int16": ({"scale": 0.002, "zero_point": 0}, {"scale": 0.003, "zero_point": 0},
              {"scale": 0.5, "zero_point": 0}),
    "int32": ({}, {}, {}),
}


def _values(rng, dtype, shape):
    if dtype == "int32":
        return rng.integers(-3000, 3000, shape).astype(np.int32)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


@pytest.mark.parametrize("case", sorted(_SQD_QUANT))
@pytest.mark.one_fast
def test_squared_difference_matches_tflm(case, tflm, tmp_path):  # noqa: F811
    dtype = case.split("-")[0]
    qa, qb, qy = _SQD_QUANT[case]
    rng = np.random.default_rng(4)
    # every int8 value of a against a broadcast b (LayerNorm's x - mean)
    a_shape, b_shape = ((2, 256), (2, 1)) if dtype == "int8" else ((3, 40), (40,))
    av = _values(rng, dtype, a_shape)
    if dtype == "int8":
        av[:] = np.arange(-128, 128, dtype=np.int8)
        bv = np.array([[-128], [127]], np.int8)
    else:
        bv = _values(rng, dtype, b_shape)
        av[0, :4] = [np.iinfo(dtype).min, np.iinfo(dtype).max, 0, -1]
        bv[:4] = [np.iinfo(dtype).max, np.iinfo(dtype).min, 0, 1]
    mb = ModelBuilder()
    a = mb.input("a", list(a_shape), dtype, **qa)
    b = mb.input("b", list(b_shape), dtype, **qb)
    y = mb.output("y", list(a_shape), dtype, **qy)
    mb.op("SQUARED_DIFFERENCE", [a, b], [y])
    assert_matches_tflm(tflm, mb.finish(), [av, bv], tmp_path)


@pytest.mark.parametrize("qx, qy", [
    ({"scale": 0.0004, "zero_point": -128}, {"scale": 0.2, "zero_point": -128}),
    ({"scale": 0.03, "zero_point": -20}, {"scale": 0.01, "zero_point": 3}),
    ({"scale": 2.5e-6, "zero_point": -128}, {"scale": 3.0, "zero_point": -128}),
])
@pytest.mark.one_fast
def test_rsqrt_int8_matches_tflm_on_every_valid_input(qx, qy, tflm, tmp_path):  # noqa: F811
    zp = qx["zero_point"]
    xs = np.arange(zp, 128, dtype=np.int64).astype(np.int8)  # TFLM refuses x < zero point
    mb = ModelBuilder()
    x = mb.input("x", [xs.size], "int8", **qx)
    mb.op("RSQRT", [x], [mb.output("y", [xs.size], "int8", **qy)])
    assert_matches_tflm(tflm, mb.finish(), [xs], tmp_path)


@pytest.mark.parametrize("sx, sy", [(0.0004, 0.002), (3e-6, 0.5), (0.05, 1e-4)])
@pytest.mark.one_fast
def test_rsqrt_int16_matches_tflm(sx, sy, tflm, tmp_path):  # noqa: F811
    rng = np.random.default_rng(16)
    xs = np.concatenate([np.arange(0, 300), rng.integers(300, 32768, 500),
                         [32767, 16384, 4096, 1024]]).astype(np.int16)
    mb = ModelBuilder()
    x = mb.input("x", [xs.size], "int16", scale=sx, zero_point=0)
    mb.op("RSQRT", [x], [mb.output("y", [xs.size], "int16", scale=sy, zero_point=0)])
    assert_matches_tflm(tflm, mb.finish(), [xs], tmp_path)


def test_int16_squared_difference_needs_zero_points_0(tmp_path):
    mb = ModelBuilder()
    a = mb.input("a", [4], "int16", scale=0.1, zero_point=0)
    b = mb.input("b", [4], "int16", scale=0.1, zero_point=3)
    mb.op("SQUARED_DIFFERENCE", [a, b], [mb.output("y", [4], "int16", scale=0.1)])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=r"operator 0 \(SQUARED_DIFFERENCE\): int16 input 1 "
                                         r"with zero point 3: not supported"):
        load_model(path)


def _loops(func) -> list[tuple[int, str]]:
    """(depth, loop variable) of every loop in ``func``, outermost first."""
    from aot.tir import stmt as S
    out = []

    def walk(s, depth):
        if isinstance(s, S.For):
            out.append((depth, s.var.name))
            walk(s.body, depth + 1)
            return
        children = list(getattr(s, "seq", None) or [])
        for attr in ("body", "then_case", "else_case"):
            if isinstance(getattr(s, attr, None), S.Stmt):
                children.append(getattr(s, attr))
        for child in children:
            walk(child, depth)
    walk(func.body, 0)
    return out


def test_a_reduction_broadcast_again_is_summed_once_per_row():
    """LayerNorm's ``x * f(mean(x))``: the mean's sum runs at the row loop,
    beside (not inside) the loop over the row's outputs."""
    from graphs import Q
    from kernel_checks import check_graph, seeded_inputs

    from aot.ir import GraphBuilder, TensorType
    from aot.kernels import lower_group
    from aot.passes import annotations, optimize
    b = GraphBuilder("ln")
    x = b.input("x", (4, 16), "int8", Q(0.05, -3))
    m = b.op("mean", [x], TensorType((4, 1), "int8", Q(0.05, -3)), axes=[1], keepdims=True)
    g = b.build([b.op("mul", [x, m], TensorType((4, 16), "int8", Q(0.1, 2)))])
    ag = optimize(g)
    (group,) = [gr for gr in annotations(ag).groups if gr.kind != "view"]
    loops = _loops(lower_group(group, ag, "c", name="ln").func)
    reduction = [d for d, v in loops if v.startswith("r")]
    inner = max(d for d, v in loops if not v.startswith("r"))
    assert reduction and max(reduction) <= inner, loops
    check_graph(g, seeded_inputs(g, 3), cross=False)  # and it computes the reference's values


def _c_lines(graph) -> list[str]:
    """The C of the graph's one kernel group, line by line."""
    from aot.codegen.c import generate_c
    from aot.kernels import lower_group
    from aot.passes import annotations, optimize
    ag = optimize(graph)
    (group,) = [gr for gr in annotations(ag).groups if gr.kind != "view"]
    return generate_c([lower_group(group, ag, "c", name="k").func]).splitlines()


def _loop_depth(lines, needle: str) -> int:
    """How many loops enclose the first line holding ``needle``."""
    stack = []
    for line in lines:
        if needle in line:
            return stack.count("for")
        text = line.strip()
        if text.startswith("}"):
            stack.pop()
        if text.endswith("{"):
            stack.append("for" if text.startswith("for (") else "block")
    raise AssertionError(f"{needle} is not in the C")


def test_int8_softmax_inverts_each_row_once():
    """The reciprocal of a row's sum (a Newton iteration) sits in the row
    loop, beside the loop over the row's outputs, not inside it."""
    from graphs import Q

    from aot.ir import GraphBuilder, TensorType
    b = GraphBuilder("sm")
    x = b.input("x", (4, 16), "int8", Q(0.05, -3))
    g = b.build([b.op("softmax", [x], TensorType((4, 16), "int8", Q(1 / 256, -128)),
                      beta=1.0)])
    lines = _c_lines(g)
    assert _loop_depth(lines, "aot_reciprocal") == 1, "\n".join(lines)
    assert _loop_depth(lines, "y[") == 2


@pytest.mark.parametrize("dtype, qx, qy", [
    ("int8", {"scale": 0.05, "zero_point": -3}, {"scale": 0.05, "zero_point": -128}),
    ("int8", {"scale": 0.05, "zero_point": 10}, {"scale": 0.03, "zero_point": -100}),
    ("int16", {"scale": 0.01}, {"scale": 0.01}),
    ("int16", {"scale": 0.01}, {"scale": 0.004}),
    ("int16", {}, {}),
])
@pytest.mark.one_fast
def test_abs_int_matches_tflm(dtype, qx, qy, tflm, tmp_path):  # noqa: F811
    """ABS on int8 and int16, which TFLM runs (the element-type probe found the gap)."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(1)
    xs = np.concatenate([[info.min, info.max, 0, -1, 1],
                         rng.integers(info.min, info.max + 1, 251)]).astype(dtype)
    mb = ModelBuilder()
    x = mb.input("x", [xs.size], dtype, **qx)
    mb.op("ABS", [x], [mb.output("y", [xs.size], dtype, **qy)])
    assert_matches_tflm(tflm, mb.finish(), [xs], tmp_path)


def test_uint8_dequantize_matches_tflm(tflm, tmp_path):  # noqa: F811
    """DEQUANTIZE of uint8, which TFLM runs (the element-type probe found the gap)."""
    xs = np.arange(256).astype(np.uint8)
    mb = ModelBuilder()
    x = mb.input("x", [256], "uint8", scale=0.02, zero_point=128)
    mb.op("DEQUANTIZE", [x], [mb.output("y", [256], "float32")])
    assert_matches_tflm(tflm, mb.finish(), [xs], tmp_path)


@pytest.mark.parametrize("n, qx, qy", [
    (2, {"scale": 0.05, "zero_point": -3}, {"scale": 0.1, "zero_point": 7}),
    (4, {"scale": 0.02, "zero_point": 20}, {"scale": 0.03, "zero_point": -128}),
])
def test_add_n_int8_matches_tflm(n, qx, qy, tflm, tmp_path):  # noqa: F811
    """ADD_N on int8, which TFLM runs (the element-type probe found the gap)."""
    rng = np.random.default_rng(n)
    xs = [rng.integers(-128, 128, (3, 50)).astype(np.int8) for _ in range(n)]
    xs[0][0, :2] = [-128, 127]
    mb = ModelBuilder()
    ins = [mb.input(f"x{i}", [3, 50], "int8", **qx) for i in range(n)]
    mb.op("ADD_N", ins, [mb.output("y", [3, 50], "int8", **qy)])
    assert_matches_tflm(tflm, mb.finish(), xs, tmp_path)
