"""The comparison rule of aot verify: integers bit for bit, floats within a tolerance."""

from __future__ import annotations

import numpy as np
from support.models import MODELS_DIR

from aot.firmware.verify import compare, random_inputs, sample_path
from aot.frontend import load_model

HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"
WAND = MODELS_DIR / "tflm_magic_wand_float.tflite"


def test_integer_outputs_must_be_identical():
    graph = load_model(HELLO)
    want = [np.zeros((3, 1, 1), np.int8)]
    got = [want[0].copy()]
    assert compare(graph, got, want)[0].passed
    got[0][2, 0, 0] = 1
    check = compare(graph, got, want, float_tolerance=10.0)[0]
    assert not check.passed and check.mismatches == 1 and check.first_mismatch == 2


def test_float_outputs_within_tolerance_times_magnitude():
    graph = load_model(WAND)
    shape = graph.outputs[0].shape
    want = [np.full((2, *shape), 5000.0, np.float32)]
    got = [want[0] + np.float32(0.002)]  # 4e-7 relative: a few rounding steps
    check = compare(graph, got, want, float_tolerance=1e-5)[0]
    assert check.passed and not check.exact and check.differing == got[0].size
    assert not compare(graph, got, want, float_tolerance=0.0)[0].passed
    got[0][1].flat[0] = np.nan
    check = compare(graph, got, want, float_tolerance=1e-5)[0]
    assert check.mismatches == 1 and check.first_mismatch == 1


def test_random_inputs_are_seeded_and_typed():
    graph = load_model(HELLO)
    a, b = random_inputs(graph, 4, seed=3), random_inputs(graph, 4, seed=3)
    assert a[0].shape == (4, 1, 1) and a[0].dtype == np.int8
    np.testing.assert_array_equal(a[0], b[0])
    assert sample_path(HELLO) == MODELS_DIR / "samples" / "tflm_hello_world_int8.npy"
