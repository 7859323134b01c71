"""The topk kernel alone (ranks, then each rank's position): every group's C
against the reference on inputs full of ties, and cross-compiled for Cortex-M4."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_checks import check_graph

from aot.ir import GraphBuilder, Quantization


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("output", ["values", "indices"])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.one_fast
def test_topk_kernel_equals_the_reference_and_cross_compiles(dtype, output, largest):
    b = GraphBuilder()
    q = Quantization.per_tensor(0.1, 3) if dtype == "int8" else None
    x = b.input("x", (3, 7, 5), dtype, quant=q)
    graph = b.build([b.op("topk", [x], k=3, axis=1, largest=largest, output=output)])
    data = np.random.default_rng(0).integers(-4, 4, (3, 7, 5)).astype(dtype)
    check_graph(graph, [data])
