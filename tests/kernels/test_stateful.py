"""Stateful kernels (SVDF): outputs and the state updated in place match the
reference on the second invocation (so the state read is not trivial)."""

from __future__ import annotations

import pytest
from graphs import svdf_graph
from kernel_checks import check_graph, seeded_inputs

SVDF_VARIANTS = [
    {},
    {"rank": 1, "filters": 3},
    {"bias": False},
    {"batch": 1, "memory": 1},
    {"dtype": "float32"},
    {"dtype": "float32", "activation": "relu", "bias": False},
]


def _id(v):
    return ",".join(f"{k}={v}" for k, v in v.items()) or "default"


@pytest.mark.parametrize("variant", SVDF_VARIANTS, ids=_id)
def test_svdf(variant):
    g = svdf_graph(seed=12, **variant)
    kernels = check_graph(g, seeded_inputs(g, 12))
    assert [p.role for p in kernels[0].params] == ["input", "state", "output"]
