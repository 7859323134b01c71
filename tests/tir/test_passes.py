"""Loop passes: before/expected programs, and both sides run on random inputs."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import aot
from aot import te
from aot.tir import expr as E
from aot.tir import stmt as S
from aot.tir.passes import DEFAULT_PIPELINE, PASSES, PassError, run_pipeline


def text(body: str) -> str:
    return textwrap.dedent(body).strip()


def run_both(before, after, inputs, out_shape, dtype="float32"):
    outs = []
    for f in (before, after):
        out = np.zeros(out_shape, dtype)
        aot.build(f)(*inputs, out)
        outs.append(out)
    np.testing.assert_array_equal(outs[0], outs[1])


def vadd_func(n, factor, kind=None):
    A = te.placeholder((n,), "float32", "A")
    B = te.placeholder((n,), "float32", "B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    io, ii = s[C].split(C.op.axis[0], factor=factor)
    if kind == "unroll":
        s[C].unroll(ii)
    elif kind == "vectorize":
        s[C].vectorize(ii)
    return aot.lower(s, [A, B, C], name="f", passes=[])


def test_the_pass_registry_is_explicit():
    assert set(PASSES) == {"simplify", "loop_partition", "unroll", "vectorize",
                           "remove_no_op", "storage_rewrite"}
    assert set(DEFAULT_PIPELINE) == set(PASSES)
    with pytest.raises(PassError, match="unknown loop pass 'unrol' \\(did you mean 'unroll'\\?\\)"):
        run_pipeline(vadd_func(8, 4), ["unrol"])


def test_loop_partition_peels_the_tail_of_a_split():
    """The guard of a non-divisible split disappears from the main loop."""
    before = run_pipeline(vadd_func(10, 4), ["simplify"])
    assert "likely" in str(before)
    after = run_pipeline(before, ["loop_partition", "remove_no_op", "simplify"])
    assert str(after) == text("""
        primfn f(A: float32[10], B: float32[10], C: float32[10]) {
          for (i.outer, 0, 2) {
            for (i.inner, 0, 4) {
              C[((i.outer*4) + i.inner)] = (A[((i.outer*4) + i.inner)] + B[((i.outer*4) + i.inner)])
            }
          }
          for (i.inner, 0, 2) {
            C[(i.inner + 8)] = (A[(i.inner + 8)] + B[(i.inner + 8)])
          }
        }""")
    a, b = np.arange(10, dtype=np.float32), np.ones(10, np.float32)
    run_both(before, after, [a, b], (10,))


def test_unroll_replicates_the_body():
    before = vadd_func(8, 4, "unroll")
    after = run_pipeline(before, ["unroll", "simplify"])
    assert str(after) == text("""
        primfn f(A: float32[8], B: float32[8], C: float32[8]) {
          for (i.outer, 0, 2) {
            C[(i.outer*4)] = (A[(i.outer*4)] + B[(i.outer*4)])
            C[((i.outer*4) + 1)] = (A[((i.outer*4) + 1)] + B[((i.outer*4) + 1)])
            C[((i.outer*4) + 2)] = (A[((i.outer*4) + 2)] + B[((i.outer*4) + 2)])
            C[((i.outer*4) + 3)] = (A[((i.outer*4) + 3)] + B[((i.outer*4) + 3)])
          }
        }""")
    a, b = np.arange(8, dtype=np.float32), np.ones(8, np.float32)
    run_both(run_pipeline(before, ["simplify"]), after, [a, b], (8,))


def test_vectorize_makes_ramps_or_stays_scalar():
    after = run_pipeline(vadd_func(8, 4, "vectorize"), ["vectorize", "simplify"])
    assert str(after) == text("""
        primfn f(A: float32[8], B: float32[8], C: float32[8]) {
          for (i.outer, 0, 2) {
            C[ramp((i.outer*4), 1, 4)] = (A[ramp((i.outer*4), 1, 4)] + B[ramp((i.outer*4), 1, 4)])
          }
        }""")
    # three lanes are not a C vector type: the loop stays scalar (serial)
    scalar = run_pipeline(vadd_func(9, 3, "vectorize"), ["vectorize", "simplify"])
    assert "ramp" not in str(scalar) and '"vectorized"' not in str(scalar)


def test_remove_no_op():
    A = S.Buffer("A", "int32", [4])
    i = E.Var("i")
    body = S.seq(
        S.For(i, 0, 0, "serial", S.Store(A, E.const(1), i)),          # empty loop
        S.For(i, 0, 1, "serial", S.Store(A, E.const(2), i)),          # one iteration
        S.IfThenElse(E.const(False), S.Store(A, E.const(3), E.const(1))),
        S.Store(A, E.Load("int32", A, E.const(2)), E.const(2)),       # self copy
        S.Evaluate(E.const(0)),
    )
    after = run_pipeline(S.PrimFunc("f", [A], body), ["remove_no_op", "simplify"])
    assert str(after) == text("""
        primfn f(A: int32[4]) {
          A[0] = 2
        }""")


def test_remove_no_op_binds_nested_one_iteration_loops_like_substitution():
    """Loops of one iteration inside each other, whose starts, extents,
    conditions and stores name the outer ones' variables: every variable is
    replaced by its loop's start (not simplified), and what that makes a
    no-op (an extent that is a variable bound to 0, a store of a value into
    its own place) is dropped as if written so."""
    A = S.Buffer("A", "int32", [64])
    i, j, k, m, z = (E.Var(n) for n in "ijkmz")
    body = S.For(i, 3, 1, "serial", S.seq(
        S.For(j, i * 2, 1, "serial", S.For(z, 0, 1, "serial", S.seq(
            S.For(k, 0, z, "serial", S.Store(A, E.const(9), k)),        # extent 0
            S.For(m, 0, i - 2, "serial", S.Store(A, E.const(5), m + j)),  # not folded
            S.Store(A, E.Load("int32", A, i * 2), j),                   # A[3*2] = A[3*2]
            S.IfThenElse(E.Binary("lt", j, i), S.Store(A, E.const(7), j),
                         S.Store(A, E.const(8), j + i))))),
        S.For(j, 0, 4, "serial", S.Store(A, i + j, j + 40))))
    after = run_pipeline(S.PrimFunc("f", [A], body), ["remove_no_op"])
    assert str(after) == text("""
        primfn f(A: int32[64]) {
          for (m, 0, (3 - 2)) {
            A[(m + (3*2))] = 5
          }
          if (((3*2) < 3)) {
            A[(3*2)] = 7
          } else {
            A[((3*2) + 3)] = 8
          }
          for (j, 0, 4) {
            A[(j + 40)] = (3 + j)
          }
        }""")


def test_storage_rewrite_shares_dead_scratch_buffers():
    """Three chained stages at the root: the first and third share memory."""
    A = te.placeholder((64,), "float32", "A")
    B = te.compute((64,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((64,), lambda i: B[i] * 2.0, name="C")
    D = te.compute((64,), lambda i: C[i] + 3.0, name="D")
    E_ = te.compute((64,), lambda i: D[i] * 4.0, name="E")
    s = te.create_schedule(E_.op)
    before = aot.lower(s, [A, E_], name="f", disabled=["storage_rewrite"])
    after = aot.lower(s, [A, E_], name="f")
    assert str(before).count("allocate") == 3
    assert str(after).count("allocate") == 2
    assert "allocate B_D: float32[64], local" in str(after)
    a = np.arange(64, dtype=np.float32)
    run_both(before, after, [a], (64,))
    out = np.zeros(64, np.float32)
    aot.build(after)(a, out)
    np.testing.assert_allclose(out, ((a + 1) * 2 + 3) * 4)


def test_dump_after_each_pass_in_order():
    seen = []
    run_pipeline(vadd_func(10, 4), dump=lambda name, f: seen.append(name))
    assert seen == list(DEFAULT_PIPELINE)


def test_storage_rewrite_declares_a_partitioned_scratch_buffer_once():
    """Partitioning copies the loop body holding B's declaration into the
    tail; after the rewrite B is declared once, at the function level."""
    A = te.placeholder((20,), "float32", "A")
    B = te.compute((20,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((18,), lambda i: B[i] + B[i + 1] + B[i + 2], name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=5)
    s[B].compute_at(s[C], xo)
    before = aot.lower(s, [A, C], name="blur", disabled=["storage_rewrite"])
    after = aot.lower(s, [A, C], name="blur")
    assert str(before).count("allocate B: float32[7]") == 2
    assert str(after).count("allocate B: float32[7]") == 1
    a = np.arange(20, dtype=np.float32)
    run_both(before, after, [a], (18,))


def test_remove_no_op_drops_a_scratch_buffer_nobody_reads():
    A = S.Buffer("A", "int32", [4])
    T = S.Buffer("T", "int32", [4], scope="local")
    i = E.Var("i")
    body = S.seq(S.Allocate(T, S.For(i, 0, 4, "serial", S.Store(T, E.Load("int32", A, i), i))),
                 S.Store(A, E.const(7), E.const(0)))
    after = run_pipeline(S.PrimFunc("f", [A], body), ["remove_no_op"])
    assert str(after) == text("""
        primfn f(A: int32[4]) {
          A[0] = 7
        }""")


def test_vectorize_refuses_non_affine_indices():
    """``C[i] = A[i + i // 4]`` moves by one element per lane only within a
    group of four: it must stay a scalar loop."""
    A = te.placeholder((16,), "float32", "A")
    C = te.compute((8,), lambda i: A[i + i // 4], name="C")
    s = te.create_schedule(C.op)
    s[C].vectorize(C.op.axis[0])
    func = aot.lower(s, [A, C], name="f")
    assert "ramp" not in str(func)
    a = np.arange(16, dtype=np.float32)
    out = np.zeros(8, np.float32)
    aot.build(func)(a, out)
    np.testing.assert_array_equal(out, a[np.arange(8) + np.arange(8) // 4])
