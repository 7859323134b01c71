"""Helpers for pass tests: random inputs and the semantic check."""

from __future__ import annotations

import numpy as np

from aot.ir import Graph
from aot.reference.interpreter import run


def random_inputs(graph: Graph, seed: int) -> list[np.ndarray]:
    """Seeded inputs: the full integer range, or standard normal floats."""
    rng = np.random.default_rng(seed)
    values = []
    for t in graph.inputs:
        if t.dtype == "float32":
            values.append(rng.standard_normal(t.shape).astype(np.float32))
        else:
            info = np.iinfo(t.type.np_dtype)
            values.append(rng.integers(info.min, info.max + 1, t.shape).astype(t.type.np_dtype))
    return values


def assert_same_semantics(before: Graph, after: Graph, seeds=(0, 1, 2), rtol=0.0,
                          atol=0.0) -> None:
    """Both graphs give the same outputs on seeded random inputs (bit for bit by default)."""
    for seed in seeds:
        xs = random_inputs(before, seed)
        want, got = run(before, xs), run(after, xs)
        assert len(want) == len(got)
        for w, g in zip(want, got):
            assert w.dtype == g.dtype and w.shape == g.shape
            if rtol == 0.0 and atol == 0.0:
                np.testing.assert_array_equal(g, w)
            else:
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
