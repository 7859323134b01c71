"""conv2d, depthwise_conv2d and dense kernels: bit-exact with the reference interpreter.

Each case builds a tiny graph, optimizes it, lowers every group, runs each
kernel (host gcc, ASan + UBSan) on seeded random inputs and compares with
aot.reference; each kernel also cross-compiles for Cortex-M4.
"""

from __future__ import annotations

import pytest
from graphs import conv_graph, dense_graph
from kernel_checks import check_graph, seeded_inputs

CONV_VARIANTS = [
    {},
    {"strides": (2, 2)},
    {"strides": (2, 1), "padding": (0, 1, 1, 0)},
    {"padding": (0, 0, 0, 0)},
    {"dilation": (2, 2), "padding": (2, 2, 2, 2)},
    {"k": (1, 1), "padding": (0, 0, 0, 0)},
    {"k": (3, 1), "hw": (9, 1), "padding": (1, 0, 1, 0)},
    {"per_channel": False},
    {"bias": False},
    {"activation": "relu"},
    {"activation": "relu6"},
    {"activation": "relu_n1_to_1"},
    {"residual": True},
]


def _id(v):
    return ",".join(f"{k}={v}" for k, v in v.items()) or "default"


@pytest.mark.parametrize("variant", CONV_VARIANTS, ids=_id)
@pytest.mark.one_fast
def test_conv2d_int8(variant):
    g = conv_graph("conv2d", seed=1, **variant)
    kernels = check_graph(g, seeded_inputs(g, 1))
    assert kernels[0].op_names[0] == "conv2d"
    assert kernels[0].macs > 0 and kernels[0].constant_bytes > 0


@pytest.mark.parametrize("variant", CONV_VARIANTS + [{"depth_multiplier": 2},
                                                     {"depth_multiplier": 3, "cin": 1}],
                         ids=_id)
@pytest.mark.one_fast
def test_depthwise_conv2d_int8(variant):
    g = conv_graph("depthwise_conv2d", seed=2, **variant)
    check_graph(g, seeded_inputs(g, 2))


@pytest.mark.parametrize("op", ["conv2d", "depthwise_conv2d"])
@pytest.mark.parametrize("variant", [{}, {"strides": (2, 2), "activation": "relu"},
                                     {"bias": False, "activation": "relu6"}], ids=_id)
@pytest.mark.one_fast
def test_conv_float32(op, variant):
    g = conv_graph(op, seed=3, dtype="float32", **variant)
    check_graph(g, seeded_inputs(g, 3))


DENSE_VARIANTS = [
    {},
    {"per_channel": True},
    {"bias": False},
    {"activation": "relu"},
    {"w_zp": 3},
    {"keep_num_dims": True},
    {"rows": 1, "depth": 1, "units": 1},
    {"dtype": "int16"},
    {"dtype": "int16", "per_channel": True, "activation": "relu"},
    {"dtype": "float32"},
    {"dtype": "float32", "activation": "relu", "bias": False},
]


@pytest.mark.parametrize("variant", DENSE_VARIANTS, ids=_id)
@pytest.mark.one_fast
def test_dense(variant):
    g = dense_graph(seed=4, **variant)
    check_graph(g, seeded_inputs(g, 4))
