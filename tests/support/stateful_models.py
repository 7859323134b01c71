"""Small stateful TFLite models for tests run against TFLM (host and boards)."""

from __future__ import annotations

import numpy as np

from support.tflite_builder import ModelBuilder


def _quant(scale, zp=0):
    return {"scale": scale, "zero_point": zp}


def lstm_16x8(rng, batch=2, time=4, n_in=5, units=3) -> bytes:
    """UNIDIRECTIONAL_SEQUENCE_LSTM with int16 activations (zero points 0), int8 weights
    and int64 biases, as TFLM's EvalLstm<int16_t, int8_t, int16_t, int64_t> runs it."""
    mb = ModelBuilder()
    sx, sh = np.float32(0.00005), np.float32(0.00003)
    x = mb.input("x", [batch, time, n_in], "int16", **_quant(sx))
    swi = rng.uniform(0.005, 0.012, 4).astype(np.float32)
    swr = rng.uniform(0.004, 0.01, 4).astype(np.float32)
    wi = [mb.const(f"wi{k}", rng.integers(-127, 128, (units, n_in)), "int8", **_quant(s))
          for k, s in enumerate(swi)]
    wr = [mb.const(f"wr{k}", rng.integers(-127, 128, (units, units)), "int8", **_quant(s))
          for k, s in enumerate(swr)]
    bs = [mb.const(f"b{k}", rng.integers(-3000000, 3000000, units), "int64",
                   **_quant(np.float32(sx * s))) for k, s in enumerate(swi)]
    h = mb.tensor("h", [batch, units], "int16", variable=True, **_quant(sh))
    c = mb.tensor("c", [batch, units], "int16", variable=True, **_quant(2.0 ** -12))
    y = mb.output("y", [batch, time, units], "int16", **_quant(sh))
    mb.op("UNIDIRECTIONAL_SEQUENCE_LSTM", [x, *wi, *wr, -1, -1, -1, *bs, -1, -1, h, c,
                                           -1, -1, -1, -1], [y],
          fused_activation_function="TANH", cell_clip=3.0, proj_clip=0.0, time_major=False)
    return mb.finish()
