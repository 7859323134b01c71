"""aot.inputs.check_inputs: the one check every run path makes before building."""

from __future__ import annotations

import numpy as np
import pytest
from support.models import MODELS_DIR

from aot.frontend import load_model
from aot.inputs import InputError, check_inputs


@pytest.fixture(scope="module")
def mnist():
    return load_model(MODELS_DIR / "onnx_mnist8.onnx")   # one float32 input [1, 1, 28, 28]


def test_converts_exact_values_and_keeps_the_invocation_axis(mnist):
    (x,) = check_inputs(mnist, [np.zeros((3, 1, 1, 28, 28), np.int16)])
    assert x.shape == (3, 1, 1, 28, 28) and x.dtype == np.float32


def test_metadata_and_graph_give_the_same_answer(mnist):
    meta = {"inputs": [{"name": "Input3", "shape": [1, 1, 28, 28], "dtype": "float32"}]}
    bad = [np.zeros((1, 28, 28), np.float32)]
    messages = []
    for model in (mnist, meta):
        with pytest.raises(InputError) as err:
            check_inputs(model, bad)
        messages.append(str(err.value))
    assert messages[0] == messages[1] == (
        "input 'Input3': expected an array of shape [N, 1, 1, 28, 28] of float32 "
        "(N invocations), got [1, 28, 28] of float32")


def test_float64_values_that_float32_cannot_hold_are_named(mnist):
    x = np.zeros((1, 1, 1, 28, 28))
    x[0, 0, 0, 3, 4] = 0.1
    with pytest.raises(InputError, match=r"do not convert exactly to float32 \(e\.g\. 0\.1\)"):
        check_inputs(mnist, [x], source="x.npy")


def test_counts_of_inputs_and_invocations():
    graph = load_model(MODELS_DIR / "tflm_hello_world_int8.tflite")
    with pytest.raises(InputError, match=r"takes 1 input \('serving_default_dense_input:0'\), "
                                         "got 2 arrays"):
        check_inputs(graph, [np.zeros((1, 1, 1), np.int8)] * 2)
    with pytest.raises(InputError, match="do not convert exactly"):
        check_inputs(graph, [np.array([[[None]]], dtype=object)])
