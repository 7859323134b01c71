"""Tensor expression objects: shapes, axes, inputs, printing, errors."""

from __future__ import annotations

import pytest

from aot import te
from aot.te import TEError


def test_compute_names_axes_after_the_lambda_parameters():
    A = te.placeholder((4, 5), "int8", "A")
    B = te.compute((4, 5), lambda row, col: A[row, col] + 1, name="B", tag="elemwise")
    assert [iv.name for iv in B.op.axis] == ["row", "col"]
    assert [int(d.value) for d in B.shape] == [4, 5]
    assert B.dtype == "int8" and B.op.tag == "elemwise"
    assert B.op.input_tensors == [A]
    assert str(B.op.body) == "(A[row, col] + int8(1))"


def test_reduction_records_its_axes():
    A = te.placeholder((4, 6), "float32", "A")
    k = te.reduce_axis((1, 6), "k")
    B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
    assert B.op.reduce_axis == [k]
    assert str(k.dom.extent) == "5"
    assert str(B.op.body) == "sum(A[i, k], axis=[k])"


def test_varargs_lambda_gets_generated_names():
    A = te.placeholder((2, 3, 4), "float32", "A")
    B = te.compute(A.shape, lambda *idx: A[idx] * 2.0, name="B")
    assert [iv.name for iv in B.op.axis] == ["i0", "i1", "i2"]


@pytest.mark.parametrize("make, message", [
    (lambda A: te.compute((4,), lambda i, j: A[i], name="X"), "takes 2 arguments"),
    (lambda A: te.compute((4,), lambda i: (A[i], A[i]), name="X"), "several outputs"),
    (lambda A: te.compute((4,), lambda i: A[i] + te.sum(A[i], axis=te.reduce_axis((0, 2))),
                          name="X"), "must be the whole body"),
    (lambda A: te.placeholder((4,), "float64", "X"), "unsupported dtype 'float64'"),
    (lambda A: te.sum(A[0], axis=A.op), "axis must be made by reduce_axis"),
    (lambda A: A[1.5], "index of A must be an integer, got float32"),
])
def test_malformed_tensor_expressions(make, message):
    A = te.placeholder((4,), "float32", "A")
    with pytest.raises(TEError, match=message):
        make(A)


def test_thread_axes_are_refused():
    with pytest.raises(TEError, match="thread axes are not supported"):
        te.thread_axis("threadIdx.x")
