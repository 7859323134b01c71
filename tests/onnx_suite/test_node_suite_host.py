"""The ONNX node tests that pass on the reference, built with gcc and run on the
host: the generated C must give the test's outputs too (slow: one build each)."""

from __future__ import annotations

import numpy as np
import pytest
from support import onnx_node_suite as suite

_PROBLEM = suite.version_problem()
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(_PROBLEM is not None, reason=str(_PROBLEM))]

_PASSING = sorted(n for n, e in suite.load_expectations().items() if e["outcome"] == "pass")


@pytest.mark.parametrize("name", _PASSING)
def test_node_on_the_host(name, tmp_path):
    from aot.commands.run import run_on_host
    from aot.compile import compile_model

    got = suite.run_case(name)
    assert got.status == "pass", got.detail
    compiled = compile_model(got.graph, "host/native", measure_code=False)
    # One invocation per data set, the inputs stacked along a leading axis.
    inputs = [np.stack(xs) for xs in zip(*got.feeds)]
    stacked = run_on_host(compiled, inputs, workdir=tmp_path)
    if not inputs:  # a model without inputs runs once; every data set expects the same
        stacked = [np.repeat(y, len(got.expected), axis=0) for y in stacked]
    outputs = [[y[k] for y in stacked] for k in range(len(got.expected))]
    for k, (ours, want) in enumerate(zip(outputs, got.expected)):
        for j, (a, b) in enumerate(zip(ours, want)):
            why = suite.agree(a, b)
            assert why is None, f"data set {k}, output {j}: {why}"
