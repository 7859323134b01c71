"""Random sequences of primitives on a matmul with a consumer stage: every
schedule must compute what numpy computes (seeded, so failures reproduce)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from support.schedules import random_schedule

import aot
from aot import te


@pytest.mark.parametrize("seed", range(16))
def test_random_schedule_matches_numpy(seed):
    rng = random.Random(seed)
    n, m, k_ = rng.randint(2, 11), rng.randint(2, 11), rng.randint(1, 9)
    A = te.placeholder((n, k_), "int8", "A")
    B = te.placeholder((k_, m), "int8", "B")
    k = te.reduce_axis((0, k_), "k")
    C = te.compute((n, m), lambda i, j: te.sum(
        A[i, k].astype("int32") * B[k, j].astype("int32"), axis=k), name="C")
    D = te.compute((n, m), lambda i, j: (C[i, j] >> 1) + 3, name="D")
    s = te.create_schedule(D.op)
    random_schedule(rng, s, s[C])
    random_schedule(rng, s, s[D], steps=3)
    if rng.random() < 0.6:
        s[C].compute_at(s[D], rng.choice(s[D].leaf_iter_vars))
    nr = np.random.default_rng(seed)
    a = nr.integers(-128, 128, (n, k_)).astype(np.int8)
    b = nr.integers(-128, 128, (k_, m)).astype(np.int8)
    out = np.zeros((n, m), np.int32)
    aot.build(s, [A, B, D], name="k")(a, b, out)
    want = ((a.astype(np.int32) @ b.astype(np.int32)) >> 1) + 3
    np.testing.assert_array_equal(out, want, err_msg=str(aot.lower(s, [A, B, D])))


@pytest.mark.parametrize("seed", range(12))
def test_random_stencil_chain_with_nested_compute_at(seed):
    """B -> C (a 3-point stencil) -> D, with B and C placed inside their
    consumers' loops at random depths, or B inlined."""
    rng = random.Random(1000 + seed)
    n, m = rng.randint(3, 12), rng.randint(3, 12)
    A = te.placeholder((n, m), "int32", "A")
    B = te.compute((n, m), lambda i, j: A[i, j] * 3, name="B")
    C = te.compute((n - 2, m - 1), lambda i, j: B[i, j] + B[i + 2, j + 1] - B[i + 1, j],
                   name="C")
    D = te.compute((n - 2, m - 1), lambda i, j: C[i, j] * 2 + 1, name="D")
    s = te.create_schedule(D.op)
    for st in (s[B], s[C], s[D]):
        random_schedule(rng, s, st, steps=3)
    r = rng.random()
    if r < 0.4:
        s[C].compute_at(s[D], rng.choice(s[D].leaf_iter_vars))
        if rng.random() < 0.6:
            s[B].compute_at(s[C], rng.choice(s[C].leaf_iter_vars))
    elif r < 0.7:
        s[B].compute_at(s[C], rng.choice(s[C].leaf_iter_vars))
    elif r < 0.85:
        s[B].compute_inline()
        s[C].compute_at(s[D], rng.choice(s[D].leaf_iter_vars))
    a = np.random.default_rng(seed).integers(-100, 100, (n, m)).astype(np.int32)
    b = a * 3
    want = (b[:-2, :-1] + b[2:, 1:] - b[1:-1, :-1]) * 2 + 1
    out = np.zeros((n - 2, m - 1), np.int32)
    aot.build(s, [A, D])(a, out)
    np.testing.assert_array_equal(out, want, err_msg=str(aot.lower(s, [A, D])))
