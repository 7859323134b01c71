"""Comparisons, logical operators and SELECT_V2: imported, run by the
reference and compiled to C on the host, bit for bit as TFLM runs them."""

from __future__ import annotations

import numpy as np
import pytest

from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.frontend import load_model
from aot.reference import run as reference_run
from support.tflite_builder import ModelBuilder

COMPARISONS = ["EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL"]


def _check(model: bytes, xs, tflm, tmp_path):  # noqa: F811
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    want = tflm.run(model, [xs])[0]
    got = reference_run(load_model(path), xs)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    host = run_on_host(compiled, [x[None] for x in xs], workdir=tmp_path)
    for k, w in enumerate(want):
        np.testing.assert_array_equal(host[k][0], w)


@pytest.mark.parametrize("op", COMPARISONS)
@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.one_fast
def test_comparison_matches_tflm(op, dtype, tflm, tmp_path):  # noqa: F811
    """Two quantized operands of different scales (compared on a common scale),
    the second broadcast; float compared as it is."""
    q1 = {"scale": 0.05, "zero_point": -3} if dtype == "int8" else {}
    q2 = {"scale": 0.11, "zero_point": 7} if dtype == "int8" else {}
    mb = ModelBuilder()
    a = mb.input("a", [2, 3, 8], dtype, **q1)
    b = mb.input("b", [3, 1], dtype, **q2)
    y = mb.output("y", [2, 3, 8], "bool")
    mb.op(op, [a, b], [y])
    rng = np.random.default_rng(3)
    if dtype == "int8":
        xs = [rng.integers(-128, 128, (2, 3, 8)).astype(np.int8),
              rng.integers(-20, 20, (3, 1)).astype(np.int8)]
        xs[0][0, 0, :3] = [int(round(xs[1][0, 0] * 0.11 / 0.05)) - 3 + d for d in (-1, 0, 1)]
    else:
        xs = [rng.normal(size=(2, 3, 8)).astype(np.float32),
              rng.normal(size=(3, 1)).astype(np.float32)]
        xs[0][0, 0, 0] = xs[1][0, 0]
    _check(mb.finish(), xs, tflm, tmp_path)


@pytest.mark.parametrize("op", ["LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT"])
@pytest.mark.one_fast
def test_logical_operators_match_tflm(op, tflm, tmp_path):  # noqa: F811
    mb = ModelBuilder()
    ins = [mb.input("a", [4, 5], "bool")]
    if op != "LOGICAL_NOT":
        ins.append(mb.input("b", [5], "bool"))
    y = mb.output("y", [4, 5], "bool")
    mb.op(op, ins, [y])
    rng = np.random.default_rng(4)
    xs = [rng.integers(0, 2, (4, 5)).astype(bool)]
    if op != "LOGICAL_NOT":
        xs.append(rng.integers(0, 2, (5,)).astype(bool))
    _check(mb.finish(), xs, tflm, tmp_path)


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_select_v2_matches_tflm(dtype, tflm, tmp_path):  # noqa: F811
    q = {"scale": 0.05, "zero_point": -3} if dtype == "int8" else {}
    mb = ModelBuilder()
    c = mb.input("c", [3, 1], "bool")
    a = mb.input("a", [3, 6], dtype, **q)
    b = mb.input("b", [6], dtype, **q)
    y = mb.output("y", [3, 6], dtype, **q)
    mb.op("SELECT_V2", [c, a, b], [y])
    rng = np.random.default_rng(6)
    if dtype == "int8":
        vals = [rng.integers(-128, 128, s).astype(np.int8) for s in ((3, 6), (6,))]
    else:
        vals = [rng.normal(size=s).astype(np.float32) for s in ((3, 6), (6,))]
    _check(mb.finish(), [np.array([[True], [False], [True]]), *vals], tflm, tmp_path)


@pytest.mark.parametrize("const", ["condition", "operand"])
def test_constant_bool_tensors_compile(const, tflm, tmp_path):  # noqa: F811
    """A constant condition of SELECT_V2 (or a constant bool operand of a
    logical operator) is emitted into the kernel as 0/1 bytes."""
    rng = np.random.default_rng(8)
    mask = rng.integers(0, 2, (3, 6)).astype(bool)
    mb = ModelBuilder()
    if const == "condition":
        q = {"scale": 0.05, "zero_point": -3}
        a = mb.input("a", [3, 6], "int8", **q)
        b = mb.input("b", [6], "int8", **q)
        y = mb.output("y", [3, 6], "int8", **q)
        mb.op("SELECT_V2", [mb.const("c", mask, "bool"), a, b], [y])
        xs = [rng.integers(-128, 128, s).astype(np.int8) for s in ((3, 6), (6,))]
    else:
        a = mb.input("a", [3, 6], "bool")
        mb.op("LOGICAL_AND", [a, mb.const("m", mask, "bool")], [mb.output("y", [3, 6], "bool")])
        xs = [rng.integers(0, 2, (3, 6)).astype(bool)]
    _check(mb.finish(), xs, tflm, tmp_path)
