"""Several subgraphs: resource variables (VAR_HANDLE, READ_VARIABLE,
ASSIGN_VARIABLE) with CALL_ONCE's init subgraph, as streaming models use
them (the variable is state kept between invocations), and IF's branches.
Sequences of invocations run bit for bit as TFLM runs them, through the
reference and the host build; WHILE is unrolled at import when its trip
count is known there.  What is not supported yet (loops bounded at run
time, init subgraphs that compute) is refused at import, naming the
operator."""

from __future__ import annotations

import numpy as np
import pytest

from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.frontend import load_model
from aot.frontend.errors import ModelError
from aot.reference import Session
from support.tflite_builder import ModelBuilder


def _streaming_model(dtype="float32", init_value=0, shape=(1, 4), op="ADD") -> bytes:
    """y = op(x, v); v := y, with v starting at ``init_value`` (CALL_ONCE)."""
    q = {"scale": 0.25, "zero_point": -3} if dtype == "int8" else {}
    mb = ModelBuilder()
    x = mb.input("x", list(shape), dtype, **q)
    h = mb.tensor("h", [], "resource")
    v = mb.tensor("v", list(shape), dtype, **q)
    y = mb.output("y", list(shape), dtype, **q)
    mb.op("CALL_ONCE", [], [], init_subgraph_index=1)
    mb.op("VAR_HANDLE", [], [h], container="", shared_name="acc")
    mb.op("READ_VARIABLE", [h], [v])
    mb.op(op, [x, v], [y])
    mb.op("ASSIGN_VARIABLE", [h, y], [])
    mb.next_subgraph()
    h1 = mb.tensor("h", [], "resource")
    zero = mb.const("zero", np.full(shape, init_value), dtype, **q)
    mb.op("VAR_HANDLE", [], [h1], container="", shared_name="acc")
    mb.op("ASSIGN_VARIABLE", [h1, zero], [])
    return mb.finish()


@pytest.mark.parametrize("dtype, op", [("float32", "ADD"), ("int8", "ADD"),
                                       ("float32", "MAXIMUM")])
@pytest.mark.one_fast
def test_state_carries_across_invocations_as_in_tflm(dtype, op, tflm, tmp_path):  # noqa: F811
    zero = -3 if dtype == "int8" else 0
    model = _streaming_model(dtype, zero, op=op)
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    rng = np.random.default_rng(0)
    if dtype == "int8":
        xs = [rng.integers(-20, 20, (1, 4)).astype(np.int8) for _ in range(4)]
    else:
        xs = [rng.normal(size=(1, 4)).astype(np.float32) for _ in range(4)]
    want = [outs[0] for outs in tflm.run(model, [[x] for x in xs])]
    assert not np.array_equal(want[0], want[-1])  # the state did change
    session = Session(load_model(path))
    got = [session.invoke([x])[0] for x in xs]
    np.testing.assert_array_equal(np.stack(got), np.stack(want))
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    host = run_on_host(compiled, [np.stack(xs)], workdir=tmp_path)[0]
    np.testing.assert_array_equal(host, np.stack(want))


@pytest.mark.parametrize("dtype, start", [("float32", 1.5), ("int8", 7)])
@pytest.mark.one_fast
def test_start_values_from_the_init_subgraph_as_in_tflm(dtype, start, tflm,  # noqa: F811
                                                         tmp_path):
    model = _streaming_model(dtype, start)
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    rng = np.random.default_rng(1)
    if dtype == "int8":
        xs = [rng.integers(-20, 20, (1, 4)).astype(np.int8) for _ in range(3)]
    else:
        xs = [rng.normal(size=(1, 4)).astype(np.float32) for _ in range(3)]
    want = np.stack([outs[0] for outs in tflm.run(model, [[x] for x in xs])])
    session = Session(load_model(path))
    np.testing.assert_array_equal(np.stack([session.invoke([x])[0] for x in xs]), want)
    session.reset()  # back to the start values
    np.testing.assert_array_equal(session.invoke([xs[0]])[0], want[0])
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    np.testing.assert_array_equal(run_on_host(compiled, [np.stack(xs)], workdir=tmp_path)[0],
                                  want)
    # The llvm JIT (its hand-written read/assign kernels built by the host
    # compiler) starts from the same values.
    jit = compile_model(path, "llvm", name="m", measure_code=False)
    np.testing.assert_array_equal(run_on_host(jit, [np.stack(xs)])[0], want)


def test_read_of_an_unknown_resource_is_refused(tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [2], "float32")
    v = mb.output("v", [2], "float32")
    mb.op("READ_VARIABLE", [x], [v])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=r"operator 0 \(READ_VARIABLE\): input 0 is not a "
                                         r"resource made by VAR_HANDLE"):
        load_model(path)


def _if_model(dtype="float32") -> bytes:
    """y = IF(c, x, w): then-branch min(x, w) + w, else-branch max(x, w) (both
    subgraphs take x and w)."""
    q = {"scale": 0.1, "zero_point": 2} if dtype == "int8" else {}
    mb = ModelBuilder()
    c = mb.input("c", [1], "bool")
    x = mb.input("x", [2, 3], dtype, **q)
    w = mb.input("w", [2, 3], dtype, **q)
    y = mb.output("y", [2, 3], dtype, **q)
    mb.op("IF", [c, x, w], [y], then_subgraph_index=1, else_subgraph_index=2)
    for branch in ("then", "else"):
        mb.next_subgraph()
        bx = mb.input("x", [2, 3], dtype, **q)
        bw = mb.input("w", [2, 3], dtype, **q)
        by = mb.output("y", [2, 3], dtype, **q)
        if branch == "then":
            r = mb.tensor("r", [2, 3], dtype, **q)
            mb.op("MINIMUM", [bx, bw], [r])
            mb.op("ADD", [r, bw], [by])
        else:
            mb.op("MAXIMUM", [bx, bw], [by])
    return mb.finish()


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.one_fast
def test_if_runs_the_taken_branch_as_tflm(dtype, tflm, tmp_path):  # noqa: F811
    model = _if_model(dtype)
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    rng = np.random.default_rng(2)

    def values():
        if dtype == "int8":
            return rng.integers(-60, 60, (2, 3)).astype(np.int8)
        return rng.normal(size=(2, 3)).astype(np.float32)
    seq = [[np.array([flag]), values(), values()] for flag in (True, False, True)]
    want = np.stack([outs[0] for outs in tflm.run(model, seq)])
    graph = load_model(path)
    session = Session(graph)
    np.testing.assert_array_equal(np.stack([session.invoke(s)[0] for s in seq]), want)
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    host = run_on_host(compiled, [np.stack(a) for a in zip(*seq)], workdir=tmp_path)[0]
    np.testing.assert_array_equal(host, want)


def _while_model(n: int, runtime_bound: bool = False) -> bytes:
    """(i, limit, x) -> WHILE i < limit: i + 1, limit, x * 1.5 + x; y is x."""
    mb = ModelBuilder()
    x = mb.input("x", [2, 3], "float32")
    i0 = mb.const("i0", np.array(0, np.int32), "int32")
    lim = mb.input("n", [], "int32") if runtime_bound else \
        mb.const("n", np.array(n, np.int32), "int32")
    i_out = mb.tensor("i_out", [], "int32")
    n_out = mb.tensor("n_out", [], "int32")
    y = mb.output("y", [2, 3], "float32")
    mb.op("WHILE", [i0, lim, x], [i_out, n_out, y], cond_subgraph_index=1,
          body_subgraph_index=2)
    mb.next_subgraph()  # condition
    ci, cn = mb.input("i", [], "int32"), mb.input("n", [], "int32")
    mb.input("x", [2, 3], "float32")
    c = mb.output("c", [], "bool")
    mb.op("LESS", [ci, cn], [c])
    mb.next_subgraph()  # body
    bi, bn = mb.input("i", [], "int32"), mb.input("n", [], "int32")
    bx = mb.input("x", [2, 3], "float32")
    i2 = mb.output("i2", [], "int32")
    mb.op("ADD", [bi, mb.const("one", np.array(1, np.int32), "int32")], [i2])
    mb.outputs.append(bn)
    t = mb.tensor("t", [2, 3], "float32")
    mb.op("MUL", [bx, mb.const("k", np.full((2, 3), 1.5, np.float32))], [t])
    x2 = mb.output("x2", [2, 3], "float32")
    mb.op("ADD", [t, bx], [x2])
    return mb.finish()


@pytest.mark.parametrize("n", [1, 4])
def test_while_with_a_known_trip_count_is_unrolled_as_tflm(n, tflm, tmp_path):  # noqa: F811
    model = _while_model(n)
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    assert [nd.op for nd in load_model(path).nodes] == ["mul", "add"] * n
    x = np.random.default_rng(5).normal(size=(2, 3)).astype(np.float32)
    want = tflm.run(model, [[x]])[0][-1]
    got = Session(load_model(path)).invoke([x])[0]
    np.testing.assert_array_equal(got, want)
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    np.testing.assert_array_equal(run_on_host(compiled, [x[None]], workdir=tmp_path)[0][0],
                                  want)


def test_a_loop_that_never_runs_passing_an_input_to_an_output_is_refused(tmp_path):
    # the compiled model would not copy a model input to a model output
    path = tmp_path / "m.tflite"
    path.write_bytes(_while_model(0))
    with pytest.raises(ModelError, match=r"model output 'x' is a model input passed through "
                                         r"unchanged: not supported yet"):
        load_model(path)


def test_while_with_a_runtime_trip_count_is_refused(tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(_while_model(0, runtime_bound=True))
    with pytest.raises(ModelError, match=r"operator 0 \(WHILE\): the loop's condition depends "
                                         r"on run-time values: not supported yet"):
        load_model(path)


def test_an_init_subgraph_computing_values_is_refused(tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [2], "float32")
    y = mb.output("y", [2], "float32")
    mb.op("CALL_ONCE", [], [], init_subgraph_index=1)
    mb.op("RELU", [x], [y])
    mb.next_subgraph()
    a = mb.const("a", np.zeros(2, np.float32))
    b = mb.tensor("b", [2], "float32")
    mb.op("RELU", [a], [b])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=r"operator 0 \(CALL_ONCE\): init subgraph 1 operator 0 "
                                         r"\(RELU\): not supported yet in an init subgraph"):
        load_model(path)
