"""The C semantics stated in aot.tir.expr, checked by running generated code
of both backends (``target``: C and LLVM)."""

from __future__ import annotations

import numpy as np
import pytest

import aot
from aot import te
from aot.errors import AotError

RNG = np.random.default_rng(7)


@pytest.fixture(params=["c", "llvm"])
def target(request):
    return request.param


def elementwise(target, fn, dtypes, out_dtype=None, n=257, inputs=None):
    """Build ``C[i] = fn(A0[i], A1[i], ...)`` and run it on ``inputs``."""
    args = [te.placeholder((n,), dt, f"A{k}") for k, dt in enumerate(dtypes)]
    C = te.compute((n,), lambda i: fn(*[a[i] for a in args]), name="C")
    mod = aot.build(te.create_schedule(C.op), args + [C], target=target, name="f")
    out = np.zeros(n, out_dtype or C.dtype)
    mod(*inputs, out)
    return out


def ints(dtype, n=257, lo=None, hi=None):
    info = np.iinfo(dtype)
    return RNG.integers(info.min if lo is None else lo, (info.max if hi is None else hi) + 1,
                        n).astype(dtype)


def test_truncating_and_floor_division(target):
    a = ints("int32", lo=-1000, hi=1000)
    b = ints("int32", lo=-50, hi=50)
    b[b == 0] = 7
    np.testing.assert_array_equal(elementwise(target, te.truncdiv, ["int32"] * 2, inputs=[a, b]),
                                  np.trunc(a / b).astype(np.int32))
    np.testing.assert_array_equal(elementwise(target, te.truncmod, ["int32"] * 2, inputs=[a, b]),
                                  np.fmod(a, b))
    np.testing.assert_array_equal(
        elementwise(target, lambda x, y: x // y, ["int32"] * 2, inputs=[a, b]), a // b)
    np.testing.assert_array_equal(
        elementwise(target, lambda x, y: x % y, ["int32"] * 2, inputs=[a, b]), a % b)
    # constant power-of-two divisors take the shift/mask path
    np.testing.assert_array_equal(
        elementwise(target, lambda x: x // 8, ["int32"], inputs=[a]), a // 8)
    np.testing.assert_array_equal(
        elementwise(target, lambda x: x % 8, ["int32"], inputs=[a]), a % 8)


def test_narrow_integers_wrap_after_each_operation(target):
    a, b = ints("int8"), ints("int8")
    got = elementwise(target, lambda x, y: (x * y) >> 2, ["int8"] * 2, inputs=[a, b])
    want = ((a.astype(np.int32) * b).astype(np.int8) >> 2).astype(np.int8)
    np.testing.assert_array_equal(got, want)
    u, v = ints("uint8"), ints("uint8")
    np.testing.assert_array_equal(
        elementwise(target, lambda x, y: x + y, ["uint8"] * 2, inputs=[u, v]),
        (u.astype(np.int32) + v).astype(np.uint8))


def test_narrow_division_and_shifts_wrap_like_promoted_c(target):
    """Narrow / and >> are computed as C's int and wrap back to the type, even
    when the result is widened afterwards; shifts by the width or more are defined."""
    a = np.array([-128, -128, 100, -7], np.int8)
    b = np.array([-1, 3, -3, 2], np.int8)
    np.testing.assert_array_equal(
        elementwise(target, lambda x, y: te.truncdiv(x, y).astype("int32"), ["int8"] * 2, n=4,
                    inputs=[a, b]), [-128, -42, -33, -3])
    np.testing.assert_array_equal(
        elementwise(target, lambda x, y: (x // y).astype("int32"), ["int8"] * 2, n=4,
                    inputs=[a, b]), [-128, -43, -34, -4])
    s = np.array([9, 12, 1, 8], np.int16)
    v = np.array([-300, 1000, -3, 255], np.int16)
    np.testing.assert_array_equal(
        elementwise(target, lambda x, y: x << y, ["int16"] * 2, n=4, inputs=[v, s]),
        (v.astype(np.int32) << s).astype(np.int16))
    np.testing.assert_array_equal(
        elementwise(target, lambda x, y: x >> y, ["int16"] * 2, n=4, inputs=[v, s]),
        v.astype(np.int32) >> s)


def test_shifts_are_arithmetic_for_signed(target):
    a = ints("int32", lo=-(1 << 20), hi=1 << 20)
    np.testing.assert_array_equal(
        elementwise(target, lambda x: x >> 3, ["int32"], inputs=[a]), a >> 3)
    np.testing.assert_array_equal(
        elementwise(target, lambda x: (x & 0xFF) << 4, ["int32"], inputs=[a]), (a & 0xFF) << 4)


def test_saturating_cast_and_clamp(target):
    a = ints("int32", lo=-1000, hi=1000)
    np.testing.assert_array_equal(
        elementwise(target, lambda x: te.saturate_cast("int8", x), ["int32"], inputs=[a]),
        np.clip(a, -128, 127).astype(np.int8))
    np.testing.assert_array_equal(
        elementwise(target, lambda x: te.clamp(x, -5, 9), ["int32"], inputs=[a]), np.clip(a, -5, 9))
    f = (RNG.standard_normal(257) * 300).astype(np.float32)
    np.testing.assert_array_equal(
        elementwise(target, lambda x: te.saturate_cast("uint8", x), ["float32"], inputs=[f]),
        np.clip(f, 0, 255).astype(np.uint8))


def test_float_to_int_cast_truncates(target):
    f = (RNG.standard_normal(257) * 100).astype(np.float32)
    np.testing.assert_array_equal(
        elementwise(target, lambda x: x.astype("int32"), ["float32"], inputs=[f]), np.trunc(f))


def test_if_then_else_and_logic(target):
    a = ints("int16")
    got = elementwise(
        target, lambda x: te.if_then_else(te.all(x > -100, x < 100), x, te.const(0, "int16")),
        ["int16"], inputs=[a])
    np.testing.assert_array_equal(got, np.where((a > -100) & (a < 100), a, 0))


def test_float_intrinsics(target):
    f = np.abs(RNG.standard_normal(257).astype(np.float32)) + 0.5
    np.testing.assert_allclose(elementwise(target, te.sqrt, ["float32"], inputs=[f]), np.sqrt(f),
                               rtol=1e-6)
    np.testing.assert_allclose(elementwise(target, te.exp, ["float32"], inputs=[f]), np.exp(f),
                               rtol=1e-6)
    a = ints("int32", lo=-100, hi=100)
    np.testing.assert_array_equal(elementwise(target, te.abs, ["int32"], inputs=[a]), np.abs(a))


def test_reductions_and_comm_reducer(target):
    A = te.placeholder((6, 9), "int32", "A")
    k = te.reduce_axis((0, 9), "k")
    prod = te.comm_reducer(lambda x, y: x * y, lambda t: te.const(1, t), "prod")
    outs = {
        "max": (te.max, np.max), "min": (te.min, np.min), "sum": (te.sum, np.sum),
        "prod": (prod, np.prod),
    }
    a = ints("int32", 54, lo=-3, hi=3).reshape(6, 9)
    for name, (red, ref) in outs.items():
        # te.compute calls the lambda at once, within this iteration.
        B = te.compute((6,), lambda i: red(A[i, k], axis=k), name=name)  # noqa: B023
        out = np.zeros(6, np.int32)
        aot.build(te.create_schedule(B.op), [A, B], target=target)(a, out)
        np.testing.assert_array_equal(out, ref(a, axis=1), err_msg=name)


def test_reduction_where_and_init(target):
    A = te.placeholder((10,), "int32", "A")
    k = te.reduce_axis((0, 10), "k")
    B = te.compute((1,), lambda i: te.sum(A[k], axis=k, where=A[k] > 0, init=100), name="B")
    a = ints("int32", 10, lo=-5, hi=5)
    out = np.zeros(1, np.int32)
    aot.build(te.create_schedule(B.op), [A, B], target=target)(a, out)
    assert out[0] == 100 + a[a > 0].sum()


def test_call_pure_with_imported_helper(target):
    A = te.placeholder((16,), "int32", "A")
    C = te.compute((16,), lambda i: te.call_pure("int32", "twice", A[i]), name="C")
    s = te.create_schedule(C.op)
    s[C].pragma(C.op.axis[0], "import_c",
                "static inline int32_t twice(int32_t x) { return 2 * x; }")
    a = ints("int32", 16, lo=-100, hi=100)
    out = np.zeros(16, np.int32)
    aot.build(s, [A, C], target=target)(a, out)
    np.testing.assert_array_equal(out, 2 * a)


@pytest.mark.parametrize("build", [
    lambda A: A[0] + A[0].astype("int8"),
    lambda A: A[0] + 1.5,
    lambda A: A[0, 1],
    lambda A: te.if_then_else(A[0], 1, 2),
])
def test_malformed_expressions_are_aot_errors(build):
    A = te.placeholder((4,), "int32", "A")
    with pytest.raises(AotError):
        build(A)


def test_python_truth_value_is_refused():
    A = te.placeholder((4,), "int32", "A")
    with pytest.raises(AotError, match="use aot.te.if_then_else"):
        bool(A[0] > 1)


@pytest.mark.parametrize("shift", [-9, -1, 0, 3])
def test_q_multiply_shift_matches_the_reference_requantization(shift, target):
    from aot.quant.arith import multiply_by_quantized_multiplier
    x = np.concatenate([ints("int32", 250, lo=-(1 << 20), hi=1 << 20),
                        np.array([0, 1, -1, 1 << 30, -(1 << 30), 2 ** 31 - 1, -2 ** 31],
                                 np.int32)])
    if shift > 0:
        x = np.clip(x, -(1 << 27), 1 << 27).astype(np.int32)  # x << shift must fit int32
    mult = 1518500250
    got = elementwise(target, lambda v: te.q_multiply_shift(v, mult, shift), ["int32"], n=len(x),
                      inputs=[x])
    np.testing.assert_array_equal(got, multiply_by_quantized_multiplier(x, mult, shift))


def test_q_multiply_shift_per_channel_vectorized(target):
    from aot.quant.arith import multiply_by_quantized_multiplier
    X = te.placeholder((4, 16), "int32", "X")
    M = te.placeholder((16,), "int32", "M")
    S = te.placeholder((16,), "int32", "S")
    Y = te.compute((4, 16), lambda i, c: te.saturate_cast(
        "int8", te.q_multiply_shift(X[i, c], M[c], S[c]) + 5), name="Y")
    s = te.create_schedule(Y.op)
    co, ci = s[Y].split(Y.op.axis[1], factor=8)
    s[Y].vectorize(ci)
    x = ints("int32", 64, lo=-(1 << 16), hi=1 << 16).reshape(4, 16)
    m = ints("int32", 16, lo=1 << 30, hi=(1 << 31) - 1)
    sh = ints("int32", 16, lo=-12, hi=2)
    assert "ramp(" in str(aot.lower(s, [X, M, S, Y]))
    out = np.zeros((4, 16), np.int8)
    aot.build(s, [X, M, S, Y], target=target)(x, m, sh, out)
    want = np.clip(multiply_by_quantized_multiplier(x, m, sh) + 5, -128, 127)
    np.testing.assert_array_equal(out, want)


def test_q_multiply_shift_saturates_the_one_overflowing_product(target):
    from aot.quant.arith import multiply_by_quantized_multiplier
    x = np.array([-2 ** 31, -2 ** 31, 5], np.int32)
    m = np.array([-2 ** 31, 2 ** 30, -2 ** 31], np.int32)
    got = elementwise(target, lambda v, w: te.q_multiply_shift(v, w, 0), ["int32", "int32"], n=3,
                      inputs=[x, m])
    np.testing.assert_array_equal(got, multiply_by_quantized_multiplier(x, m, 0))
    assert got[0] == 2 ** 31 - 1
