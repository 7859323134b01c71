"""Pooling, elementwise (with broadcasting), quantize/dequantize and softmax kernels
against the reference interpreter (bit-exact for integers, 1e-5 for float)."""

from __future__ import annotations

import numpy as np
import pytest
from graphs import binary_graph, pool_graph, quantize_graph, softmax_graph
from kernel_checks import check_graph, seeded_inputs

POOL_VARIANTS = [
    {},
    {"strides": (1, 1)},
    {"padding": (1, 1, 1, 1)},
    {"padding": (0, 1, 1, 0), "strides": (2, 1)},
    {"pool": (7, 6), "strides": (1, 1)},
    {"activation": "relu"},
    {"activation": "relu6"},
    {"dtype": "int16"},
    {"dtype": "float32", "padding": (1, 1, 1, 1)},
    {"dtype": "float32", "activation": "relu6"},
]


def _id(v):
    return ",".join(f"{k}={v}" for k, v in v.items()) or "default"


@pytest.mark.parametrize("op", ["avg_pool2d", "max_pool2d"])
@pytest.mark.parametrize("variant", POOL_VARIANTS, ids=_id)
@pytest.mark.one_fast
def test_pool(op, variant):
    g = pool_graph(op, **variant)
    check_graph(g, seeded_inputs(g, 5))


BINARY_VARIANTS = [
    {},
    {"activation": "relu"},
    {"activation": "relu6"},
    {"b_shape": (4,)},
    {"a_shape": (2, 1, 4), "b_shape": (1, 3, 1)},
    {"b_shape": (1,)},
    {"scales": (0.03, 0.05, 0.02)},
    {"dtype": "int16"},
    {"dtype": "float32", "b_shape": (3, 1)},
]


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@pytest.mark.parametrize("variant", BINARY_VARIANTS, ids=_id)
@pytest.mark.one_fast
def test_binary(op, variant):
    g = binary_graph(op, **variant)
    check_graph(g, seeded_inputs(g, 6))


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_min_max(op):
    g = binary_graph(op, dtype="float32", b_shape=(4,))
    check_graph(g, seeded_inputs(g, 7))


@pytest.mark.parametrize("src, dst", [("float32", "int8"), ("float32", "int16"),
                                      ("int8", "int16"), ("int16", "int8"), ("int8", "int8")])
@pytest.mark.one_fast
def test_quantize_and_dequantize(src, dst):
    g = quantize_graph(src=src, dst=dst)
    inputs = seeded_inputs(g, 8)
    if src == "float32":
        inputs = [inputs[0] * 20]  # reach both saturation ends
    check_graph(g, inputs)


SOFTMAX_VARIANTS = [
    {},
    {"beta": 0.5},
    {"x_scale": 0.5},
    {"x_scale": 0.002},
    {"shape": (1, 700)},  # the last rounding shift passes 31 bits
    {"out_dtype": "int16"},
    {"dtype": "int16"},
    {"dtype": "int16", "x_scale": 0.001, "shape": (2, 40)},
    {"dtype": "float32", "beta": 2.0},
]


@pytest.mark.parametrize("variant", SOFTMAX_VARIANTS, ids=_id)
@pytest.mark.one_fast
def test_softmax(variant):
    g = softmax_graph(**variant)
    check_graph(g, seeded_inputs(g, 9))


def test_softmax_rows_with_equal_and_extreme_values():
    g = softmax_graph(shape=(3, 6))
    x = np.array([[-128] * 6, [127] * 6, [127, -128, 0, 1, -1, 127]], dtype=np.int8)
    check_graph(g, [x])
