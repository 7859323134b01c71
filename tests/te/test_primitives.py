"""Each primitive: the scheduled kernel computes what the unscheduled one
computes and what numpy computes, on random inputs, compiled by host gcc."""

from __future__ import annotations

import numpy as np
import pytest

import aot
from aot import te, tir

RNG = np.random.default_rng(1234)


def random(shape, dtype):
    if dtype == "float32":
        return RNG.standard_normal(shape).astype(np.float32)
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max + 1, shape).astype(dtype)


def run(s, args, inputs, name="k"):
    """Build ``s`` for the host, run it on ``inputs`` and return the output."""
    mod = aot.build(s, args, target="c", name=name)
    out = np.zeros([int(d.value) for d in args[-1].shape], args[-1].dtype)
    mod(*inputs, out)
    return out


def check(make, schedule, ref, dtype="float32", exact=None):
    """``make()`` -> (args, inputs-shapes); compare scheduled, default, numpy."""
    args = make()
    inputs = [random([int(d.value) for d in t.shape], t.dtype) for t in args[:-1]]
    base = run(te.create_schedule(args[-1].op), args, inputs)
    args2 = make()
    s = te.create_schedule(args2[-1].op)
    schedule(s, *args2)
    got = run(s, args2, inputs)
    want = ref(*inputs)
    if exact if exact is not None else dtype != "float32":
        np.testing.assert_array_equal(got, base)
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, base, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    return s, args2


def vadd(n, m, dtype="float32"):
    def make():
        A = te.placeholder((n, m), dtype, "A")
        B = te.placeholder((n, m), dtype, "B")
        C = te.compute((n, m), lambda i, j: A[i, j] + B[i, j], name="C")
        return [A, B, C]
    return make


def matmul(n, m, k_, dtype="float32", acc="float32"):
    def make():
        A = te.placeholder((n, k_), dtype, "A")
        B = te.placeholder((k_, m), dtype, "B")
        k = te.reduce_axis((0, k_), "k")
        C = te.compute((n, m), lambda i, j: te.sum(
            A[i, k].astype(acc) * B[k, j].astype(acc), axis=k), name="C")
        return [A, B, C]
    return make


def np_matmul(acc):
    return lambda a, b: (a.astype(np.int64) @ b.astype(np.int64)).astype(acc) \
        if acc != "float32" else a @ b


@pytest.mark.parametrize("factor", [4, 7, 64])
def test_split_factor(factor):
    def sched(s, A, B, C):
        s[C].split(C.op.axis[0], factor=factor)
        s[C].split(C.op.axis[1], factor=factor)
    check(vadd(30, 17), sched, lambda a, b: a + b)


@pytest.mark.parametrize("nparts", [1, 3, 8])
def test_split_nparts(nparts):
    def sched(s, A, B, C):
        s[C].split(C.op.axis[1], nparts=nparts)
    check(vadd(5, 21), sched, lambda a, b: a + b)


def test_split_reduction_axis_non_divisible():
    def sched(s, A, B, C):
        s[C].split(C.op.reduce_axis[0], factor=8)
    check(matmul(6, 5, 21), sched, np_matmul("float32"))


@pytest.mark.parametrize("shape", [(32, 32), (33, 19)])
def test_tile(shape):
    def sched(s, A, B, C):
        s[C].tile(C.op.axis[0], C.op.axis[1], 8, 4)
    check(vadd(*shape), sched, lambda a, b: a + b)


def test_fuse_data_axes():
    def sched(s, A, B, C):
        f = s[C].fuse(*C.op.axis)
        s[C].split(f, factor=10)
    check(vadd(7, 9), sched, lambda a, b: a + b)


def test_fuse_split_reduction():
    def make():
        A = te.placeholder((100,), "float32", "A")
        k = te.reduce_axis((0, 100), "k")
        B = te.compute((1,), lambda i: te.sum(A[k], axis=k), name="B")
        return [A, B]

    def sched(s, A, B):
        ko, ki = s[B].split(B.op.reduce_axis[0], factor=32)
        s[B].fuse(ko, ki)
    check(make, sched, lambda a: np.array([a.sum()], np.float32))


def test_reorder_matmul_int8_int32():
    def sched(s, A, B, C):
        i, j = C.op.axis
        (k,) = C.op.reduce_axis
        s[C].reorder(k, i, j)
    check(matmul(7, 9, 13, "int8", "int32"), sched, np_matmul("int32"), dtype="int32")


@pytest.mark.parametrize("extent", [8, 10])
def test_unroll(extent):
    def sched(s, A, B, C):
        jo, ji = s[C].split(C.op.axis[1], factor=4)
        s[C].unroll(ji)
    check(vadd(3, extent), sched, lambda a, b: a + b)


@pytest.mark.parametrize("dtype", ["float32", "int8", "int32", "int16", "uint8"])
@pytest.mark.parametrize("m", [16, 21])
def test_vectorize(dtype, m):
    def sched(s, A, B, C):
        jo, ji = s[C].split(C.op.axis[1], factor=8)
        s[C].vectorize(ji)
    wrap = (lambda a, b: (a.astype(np.int64) + b).astype(dtype)) if dtype != "float32" \
        else (lambda a, b: a + b)
    s, args = check(vadd(3, m, dtype), sched, wrap, dtype=dtype)
    assert "ramp(" in str(aot.lower(s, args))


def test_vectorize_int8_matmul_with_casts():
    def sched(s, A, B, C):
        i, j = C.op.axis
        (k,) = C.op.reduce_axis
        jo, ji = s[C].split(j, factor=4)
        s[C].reorder(i, jo, k, ji)
        s[C].vectorize(ji)
    s, args = check(matmul(5, 12, 9, "int8", "int32"), sched, np_matmul("int32"), dtype="int32")
    assert "int32x4(" in str(aot.lower(s, args))


def test_vectorize_falls_back_to_scalar_loop():
    def make():
        A = te.placeholder((4, 8), "float32", "A")
        C = te.compute((4, 8), lambda i, j: te.exp(A[i, j]), name="C")
        return [A, C]

    def sched(s, A, C):
        s[C].vectorize(C.op.axis[1])
    s, args = check(make, sched, np.exp)
    assert "ramp(" not in str(aot.lower(s, args))


def test_parallel_on_host():
    def sched(s, A, B, C):
        s[C].parallel(C.op.axis[0])
    s, args = check(vadd(16, 8), sched, lambda a, b: a + b)
    assert "omp parallel for" in aot.build(s, args).source


def matmul_relu(n, m, k_):
    def make():
        A = te.placeholder((n, k_), "float32", "A")
        B = te.placeholder((k_, m), "float32", "B")
        k = te.reduce_axis((0, k_), "k")
        C = te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
        D = te.compute((n, m), lambda i, j: te.if_then_else(C[i, j] > 0.0, C[i, j], 0.0),
                       name="D")
        return [A, B, D]
    return make


@pytest.mark.parametrize("shape", [(16, 16, 8), (13, 10, 7)])
def test_compute_at(shape):
    def sched(s, A, B, D):
        C = D.op.input_tensors[0]
        io, jo, ii, ji = s[D].tile(D.op.axis[0], D.op.axis[1], 4, 4)
        s[C].compute_at(s[D], jo)
    s, args = check(matmul_relu(*shape), sched, lambda a, b: np.maximum(a @ b, 0))
    text = str(aot.lower(s, args))
    assert "allocate C: float32[4, 4]" in text


def test_compute_at_sliding_window_producer():
    def make():
        A = te.placeholder((20,), "float32", "A")
        B = te.compute((20,), lambda i: A[i] * 2.0, name="B")
        C = te.compute((18,), lambda i: B[i] + B[i + 1] + B[i + 2], name="C")
        return [A, C]

    def sched(s, A, C):
        B = C.op.input_tensors[0]
        xo, xi = s[C].split(C.op.axis[0], factor=5)
        s[B].compute_at(s[C], xo)
    check(make, sched, lambda a: 2 * (a[:-2] + a[1:-1] + a[2:]))


def test_compute_inline_and_root():
    def sched(s, A, B, D):
        C = D.op.input_tensors[0]
        s[C].compute_root()
    check(matmul_relu(5, 6, 7), sched, lambda a, b: np.maximum(a @ b, 0))

    def make():
        A = te.placeholder((10,), "int32", "A")
        B = te.compute((10,), lambda i: A[i] * 3, name="B")
        C = te.compute((10,), lambda i: B[i] + 1, name="C")
        return [A, C]

    def sched2(s, A, C):
        s[C.op.input_tensors[0]].compute_inline()
    s, args = check(make, sched2, lambda a: a * 3 + 1, dtype="int32")
    assert "allocate" not in str(aot.lower(s, args))


def test_cache_read_and_write():
    def sched(s, A, B, C):
        AA = s.cache_read(A, "local", [C])
        CL = s.cache_write(C, "local")
        io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], 4, 4)
        s[CL].compute_at(s[C], jo)
        s[AA].compute_at(s[CL], s[CL].op.reduce_axis[0])
    s, args = check(matmul(9, 8, 5), sched, np_matmul("float32"))
    text = str(aot.lower(s, args))
    assert "allocate C.local: float32[4, 4]" in text
    assert "allocate A.local" in text


def test_pragma_unroll_hint_and_comment():
    def sched(s, A, B, C):
        s[C].pragma(C.op.axis[1], "unroll_hint", 4)
        s[C].pragma(C.op.axis[0], "note", "hello")
    s, args = check(vadd(4, 8), sched, lambda a, b: a + b)
    src = aot.build(s, args).source
    assert "#pragma GCC unroll 4" in src and "/* pragma note = hello */" in src


GEMV_C = """
static int32_t gemv_reset(float *cc, int32_t m) {
  for (int32_t i = 0; i < m; ++i) cc[i] = 0.0f;
  return 0;
}
static int32_t gemv_update(float *cc, const float *aa, const float *bb,
                           int32_t m, int32_t l, int32_t stride) {
  for (int32_t i = 0; i < m; ++i)
    for (int32_t j = 0; j < l; ++j) cc[i] += aa[j] * bb[i * stride + j];
  return 0;
}
"""


def intrin_gemv(m, l):
    a = te.placeholder((l,), "float32", "a")
    b = te.placeholder((m, l), "float32", "b")
    k = te.reduce_axis((0, l), "k")
    c = te.compute((m,), lambda i: te.sum(a[k] * b[i, k], axis=k), name="c")
    abuf = tir.decl_buffer(a.shape, a.dtype, "A", strides=[1])
    bbuf = tir.decl_buffer(b.shape, b.dtype, "B", strides=[te.var("s1"), 1])
    cbuf = tir.decl_buffer(c.shape, c.dtype, "C", strides=[1])

    def intrin_func(ins, outs):
        aa, bb = ins
        cc = outs[0]
        reset = tir.call_extern("int32", "gemv_reset", cc.access_ptr("w"), m)
        update = tir.call_extern("int32", "gemv_update", cc.access_ptr("rw"),
                                 aa.access_ptr("r"), bb.access_ptr("r"), m, l, bb.strides[0])
        ib = tir.ir_builder.create()
        ib.emit(reset)
        ib.emit(update)
        return ib.get(), reset, update
    return te.decl_tensor_intrin(c.op, intrin_func, binds={a: abuf, b: bbuf, c: cbuf})


def gemv_problem(n=6, m=32, l=24):
    def make():
        A = te.placeholder((n, l), "float32", "A")
        B = te.placeholder((m, l), "float32", "B")
        k = te.reduce_axis((0, l), "k")
        C = te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[j, k], axis=k), name="C")
        return [A, B, C]
    return make


def test_tensorize_whole_reduction():
    def sched(s, A, B, C):
        yo, yi = s[C].split(C.op.axis[1], factor=8)
        s[C].tensorize(yi, intrin_gemv(8, 24))
        s[C].pragma(C.op.axis[0], "import_c", GEMV_C)
    s, args = check(gemv_problem(), sched, lambda a, b: a @ b.T)
    assert "gemv_update" in aot.build(s, args).source


def test_tensorize_split_reduction_uses_reset_and_update():
    def sched(s, A, B, C):
        i, j = C.op.axis
        yo, yi = s[C].split(j, factor=8)
        ko, ki = s[C].split(C.op.reduce_axis[0], factor=6)
        s[C].reorder(i, yo, ko, yi, ki)
        s[C].tensorize(yi, intrin_gemv(8, 6))
        s[C].pragma(i, "import_c", GEMV_C)
    s, args = check(gemv_problem(), sched, lambda a, b: a @ b.T)
    text = str(aot.lower(s, args))
    assert text.count('call_extern("gemv_reset"') == 1
    assert text.count('call_extern("gemv_update"') == 1


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint8", "int16", "int32"])
def test_vectorize_selects_and_clamps_with_masks(dtype):
    lo, hi = (0.0, 0.5) if dtype == "float32" else (3, 50)

    def make():
        A = te.placeholder((40,), dtype, "A")
        B = te.placeholder((40,), dtype, "B")
        C = te.compute((40,), lambda i: te.clamp(
            te.if_then_else(A[i] > B[i], A[i], B[i]), lo, hi), name="C")
        return [A, B, C]

    def sched(s, A, B, C):
        o, i = s[C].split(C.op.axis[0], factor=8)
        s[C].vectorize(i)
    s, args = check(make, sched, lambda a, b: np.clip(np.maximum(a, b), lo, hi).astype(dtype),
                    exact=True)
    assert "ramp(" in str(aot.lower(s, args))


def test_vectorize_keeps_bool_results_scalar():
    def make():
        A = te.placeholder((16,), "int32", "A")
        C = te.compute((16,), lambda i: A[i] > 0, name="C")
        return [A, C]

    def sched(s, A, C):
        s[C].vectorize(C.op.axis[0])
    s, args = check(make, sched, lambda a: a > 0, exact=True)
    assert "ramp(" not in str(aot.lower(s, args))
