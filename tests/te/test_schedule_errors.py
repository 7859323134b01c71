"""Invalid schedules raise ScheduleError naming the stage, the axis and the rule."""

from __future__ import annotations

import pytest

import aot
from aot import te, tir
from aot.errors import AotError
from aot.te import ScheduleError


def matmul():
    A = te.placeholder((8, 8), "float32", "A")
    B = te.placeholder((8, 8), "float32", "B")
    k = te.reduce_axis((0, 8), "k")
    C = te.compute((8, 8), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((8, 8), lambda i, j: C[i, j] * 2.0, name="D")
    return A, B, C, D


def test_schedule_error_is_an_aot_error():
    assert issubclass(ScheduleError, AotError)


def test_split_axis_that_no_longer_exists():
    A, B, C, D = matmul()
    s = te.create_schedule(D.op)
    i = C.op.axis[0]
    s[C].split(i, factor=2)
    with pytest.raises(ScheduleError, match=r"stage C: cannot split axis i: it no longer exists"):
        s[C].split(i, factor=2)


def test_split_axis_of_another_stage():
    A, B, C, D = matmul()
    s = te.create_schedule(D.op)
    with pytest.raises(ScheduleError, match=r"stage D: cannot split axis k: it belongs to stage C"):
        s[D].split(C.op.reduce_axis[0], factor=2)


def test_reorder_axes_of_another_stage():
    A, B, C, D = matmul()
    s = te.create_schedule(D.op)
    with pytest.raises(ScheduleError,
                       match=r"stage C: cannot reorder axis i: it belongs to stage D"):
        s[C].reorder(D.op.axis[0], C.op.axis[1])


def test_compute_at_a_stage_that_does_not_consume():
    A, B, C, D = matmul()
    E = te.compute((8, 8), lambda i, j: A[i, j] + 1.0, name="E")
    s = te.create_schedule([D.op, E.op])
    with pytest.raises(ScheduleError,
                       match=r"stage C: cannot compute_at stage E: E does not read C"):
        s[C].compute_at(s[E], E.op.axis[0])


def test_fuse_non_adjacent_and_mixed_axes():
    A, B, C, D = matmul()
    s = te.create_schedule(D.op)
    i, j = C.op.axis
    (k,) = C.op.reduce_axis
    with pytest.raises(ScheduleError, match="must be adjacent"):
        s[C].fuse(i, k)
    with pytest.raises(ScheduleError, match="cannot mix output and reduction axes"):
        s[C].fuse(j, k)


def test_parallel_reduction_axis_and_inline_reduction():
    A, B, C, D = matmul()
    s = te.create_schedule(D.op)
    with pytest.raises(ScheduleError, match="stage C: cannot parallelize the reduction axis k"):
        s[C].parallel(C.op.reduce_axis[0])
    with pytest.raises(ScheduleError, match="stage C: cannot compute_inline a reduction"):
        s[C].compute_inline()


def test_split_needs_positive_factor():
    A, B, C, D = matmul()
    s = te.create_schedule(D.op)
    with pytest.raises(ScheduleError, match="split factor of i must be a positive integer"):
        s[C].split(C.op.axis[0], factor=0)


def test_parallel_rejected_for_microcontroller_target():
    A, B, C, D = matmul()
    s = te.create_schedule(D.op)
    s[D].parallel(D.op.axis[0])
    with pytest.raises(ScheduleError, match="parallel loops are accepted for host targets only"):
        aot.build(s, [A, B, D], target="c -mcpu=cortex-m4")


def test_missing_input_argument():
    A, B, C, D = matmul()
    s = te.create_schedule(D.op)
    with pytest.raises(ScheduleError, match="input B is read but missing from the argument list"):
        aot.lower(s, [A, D])


def _gemv(m, l, extent_check=True):
    a = te.placeholder((l,), "float32", "a")
    b = te.placeholder((m, l), "float32", "b")
    k = te.reduce_axis((0, l), "k")
    c = te.compute((m,), lambda i: te.sum(a[k] * b[i, k], axis=k), name="c")
    bb = tir.decl_buffer(b.shape, b.dtype, "B", strides=[te.var("s1"), 1])
    return te.decl_tensor_intrin(
        c.op, lambda ins, outs: tir.call_extern("int32", "f", outs[0].access_ptr("w")),
        binds={b: bb})


def _gemm_problem():
    A = te.placeholder((4, 16), "float32", "A")
    B = te.placeholder((32, 16), "float32", "B")
    k = te.reduce_axis((0, 16), "k")
    C = te.compute((4, 32), lambda i, j: te.sum(A[i, k] * B[j, k], axis=k), name="C")
    return A, B, C


def test_tensorize_extent_mismatch():
    A, B, C = _gemm_problem()
    s = te.create_schedule(C.op)
    jo, ji = s[C].split(C.op.axis[1], factor=8)
    s[C].tensorize(ji, _gemv(4, 16))
    with pytest.raises(ScheduleError, match=r"stage C: cannot tensorize at axis j.inner: loop "
                                            r"j.inner has extent 8, the intrinsic's axis i has 4"):
        aot.lower(s, [A, B, C])


def test_tensorize_expression_mismatch():
    A = te.placeholder((4, 16), "float32", "A")
    B = te.placeholder((32, 16), "float32", "B")
    k = te.reduce_axis((0, 16), "k")
    C = te.compute((4, 32), lambda i, j: te.sum(A[i, k] + B[j, k], axis=k), name="C")
    s = te.create_schedule(C.op)
    jo, ji = s[C].split(C.op.axis[1], factor=8)
    s[C].tensorize(ji, _gemv(8, 16))
    with pytest.raises(ScheduleError, match="does not match intrinsic c"):
        aot.lower(s, [A, B, C])


def test_tensorize_axis_count_mismatch():
    A, B, C = _gemm_problem()
    s = te.create_schedule(C.op)
    s[C].tensorize(C.op.axis[0], _gemv(8, 16))
    with pytest.raises(ScheduleError,
                       match="have 2 output and 1 reduction axes, intrinsic c has 1 and 1"):
        aot.lower(s, [A, B, C])


def test_tensorize_split_reduction_needs_reset_update():
    A, B, C = _gemm_problem()
    s = te.create_schedule(C.op)
    i, j = C.op.axis
    jo, ji = s[C].split(j, factor=8)
    ko, ki = s[C].split(C.op.reduce_axis[0], factor=8)
    s[C].reorder(i, jo, ko, ji, ki)
    s[C].tensorize(ji, _gemv(8, 8))
    with pytest.raises(ScheduleError, match=r"must return \(body, reset, update\)"):
        aot.lower(s, [A, B, C])
