"""FULLY_CONNECTED with keep_num_dims (Keras Dense on a rank-3 input) followed by
an int8 ADD: the model of issue 34's wrong rows, built without TensorFlow."""

from __future__ import annotations

import numpy as np

from support.tflite_builder import ModelBuilder


def _q(scale, zp=0):
    return {"scale": scale, "zero_point": zp}


def dense_keep_dims_add(rng, lead=(4, 1), depth=8, units=5, residual=None) -> bytes:
    """x[*lead, depth] -> FULLY_CONNECTED(keep_num_dims) -> ADD(r) -> y[*lead, units];
    ``r`` is a second int8 input of shape ``residual`` (default: the output's)."""
    mb = ModelBuilder()
    x = mb.input("x", [*lead, depth], "int8", **_q(0.05, 4))
    w = mb.const("w", rng.integers(-127, 128, (units, depth)), "int8", **_q(0.02))
    b = mb.const("b", rng.integers(-3000, 3000, units), "int32", **_q(0.05 * 0.02))
    shape = [*lead, units]
    t = mb.tensor("t", shape, "int8", **_q(0.07, -6))
    mb.op("FULLY_CONNECTED", [x, w, b], [t], keep_num_dims=True,
          fused_activation_function="NONE")
    r = mb.input("r", list(residual or shape), "int8", **_q(0.06, -7))
    y = mb.output("y", shape, "int8", **_q(0.1, 2))
    mb.op("ADD", [t, r], [y], fused_activation_function="NONE")
    return mb.finish()


def int8_inputs(rng, model_inputs) -> list[np.ndarray]:
    """Random int8 arrays of the given shapes over the whole range."""
    return [rng.integers(-128, 128, s).astype(np.int8) for s in model_inputs]
