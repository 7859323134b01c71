"""Randomized sweeps of the core kernels against TFLM (slow).

Draws attribute combinations (kernel size, stride, dilation, padding,
activation, per-channel or per-tensor, int8 or int16x8) and scales, and
reuses the one-operator model builders of the per-operator test modules.
"""

from __future__ import annotations

import numpy as np
import pytest

import test_ops_conv as conv_cases
import test_ops_softmax_add as sa_cases

pytestmark = pytest.mark.slow


def _same(want, got):
    return got.shape == want.shape and np.array_equal(got.astype(np.int64), want)


def test_random_convolutions(tflm):
    checked = 0
    for seed in range(150):
        r = np.random.default_rng(seed)
        kw = dict(k=(int(r.integers(1, 5)), int(r.integers(1, 5))),
                  hw=(int(r.integers(5, 10)), int(r.integers(5, 10))),
                  stride=(int(r.integers(1, 3)), int(r.integers(1, 3))),
                  dilation=(int(r.integers(1, 3)), int(r.integers(1, 3))),
                  padding=["SAME", "VALID"][r.integers(2)],
                  act=[None, "RELU", "RELU6"][r.integers(3)],
                  per_channel=bool(r.integers(2)), c=int(r.integers(1, 5)))
        eff = [(kw["k"][i] - 1) * kw["dilation"][i] + 1 for i in range(2)]
        if kw["padding"] == "VALID" and (eff[0] > kw["hw"][0] or eff[1] > kw["hw"][1]):
            continue   # empty output: TFLM refuses the model
        model, x, got = conv_cases._case(1000 + seed, depthwise=bool(r.integers(2)),
                                         dtype=["int8", "int16"][r.integers(2)], **kw)
        assert _same(tflm.run1(model, x), got), f"seed {seed}: {kw}"
        checked += 1
    assert checked > 100


@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_random_softmax(tflm, dtype):
    for seed in range(100):
        r = np.random.default_rng(seed)
        x_scale = r.uniform(0.001, 2) if dtype == "int8" else r.uniform(1e-5, 0.01)
        model, xs, got = sa_cases._softmax_case(500 + seed, dtype,
                                                shape=(2, int(r.integers(2, 40))),
                                                x_scale=float(x_scale))
        assert _same(tflm.run1(model, *xs), got), f"seed {seed}"


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_random_arith(tflm, op, dtype):
    for seed in range(100):
        shapes = sa_cases.BINARY_SHAPES[seed % len(sa_cases.BINARY_SHAPES)]
        model, xs, got = sa_cases._binary_case(900 + seed, op, dtype, shapes)
        assert _same(tflm.run1(model, *xs), got), f"seed {seed}"
