"""Stateful kernels (SVDF): outputs and the state updated in place match the
reference on the second invocation (so the state read is not trivial)."""

from __future__ import annotations

import pytest
from graphs import lstm_graph, svdf_graph
from kernel_checks import check_graph, seeded_inputs

SVDF_VARIANTS = [
    {},
    {"rank": 1, "filters": 3},
    {"bias": False},
    {"batch": 1, "memory": 1},
    {"state": "int8"},
    {"state": "int8", "state_zp": 100, "bias": False},
    {"state": "int16", "state_zp": -300},
    {"dtype": "float32"},
    {"dtype": "float32", "activation": "relu", "bias": False},
]


def _id(v):
    return ",".join(f"{k}={v}" for k, v in v.items()) or "default"


@pytest.mark.parametrize("variant", SVDF_VARIANTS, ids=_id)
@pytest.mark.one_fast
def test_svdf(variant):
    g = svdf_graph(seed=12, **variant)
    kernels = check_graph(g, seeded_inputs(g, 12))
    assert [p.role for p in kernels[0].params] == ["input", "state", "output"]


LSTM_VARIANTS = [
    {},
    {"time_major": True},
    {"cell_clip": 0.5},
    {"h_zp": 0, "batch": 1, "steps": 1},
    {"cell_scale": 2.0 ** -15},
    {"cell_scale": 2.0 ** -8},
    {"dtype": "int16"},
    {"dtype": "int16", "time_major": True, "cell_clip": 0.5},
]


@pytest.mark.parametrize("variant", LSTM_VARIANTS, ids=_id)
@pytest.mark.one_fast
def test_lstm_int8(variant):
    g = lstm_graph(seed=13, **variant)
    kernels = check_graph(g, seeded_inputs(g, 13))
    assert [p.role for p in kernels[0].params] == ["input", "state", "state", "output"]
