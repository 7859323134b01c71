"""UNIDIRECTIONAL_SEQUENCE_LSTM against TFLM, over repeated invocations."""

from __future__ import annotations

import numpy as np
import pytest

from aot.reference.ops.lstm import unidirectional_sequence_lstm
from support.quant_cases import rand_int
from support.tflite_builder import ModelBuilder

INVOCATIONS = 3


def _case(seed, dtype, batch=2, time=5, n_in=6, units=4, time_major=False, cell_clip=10.0,
          cell_scale=2.0 ** -12, hidden_q=(0.0078, 3)):
    rng = np.random.default_rng(seed)
    xshape = (time, batch, n_in) if time_major else (batch, time, n_in)
    mb = ModelBuilder()
    if dtype == "float32":
        xs = [rng.standard_normal(xshape).astype(np.float32) for _ in range(INVOCATIONS)]
        wi = [rng.standard_normal((units, n_in)).astype(np.float32) * 0.5 for _ in range(4)]
        wr = [rng.standard_normal((units, units)).astype(np.float32) * 0.5 for _ in range(4)]
        bs = [rng.standard_normal(units).astype(np.float32) for _ in range(4)]
        xi = mb.input("x", xshape, dtype)
        wii = [mb.const(f"wi{k}", w) for k, w in enumerate(wi)]
        wri = [mb.const(f"wr{k}", w) for k, w in enumerate(wr)]
        bi = [mb.const(f"b{k}", b) for k, b in enumerate(bs)]
        hi = mb.tensor("h", (batch, units), dtype, variable=True)
        ci = mb.tensor("c", (batch, units), dtype, variable=True)
        yi = mb.output("y", xshape[:2] + (units,), dtype)
        kw = {}
        h = np.zeros((batch, units), np.float32)
        c = np.zeros((batch, units), np.float32)
    else:
        # int8, or 16x8: int16 activations (zero points 0) and int64 biases
        wide = dtype == "int16"
        sx, zx = (np.float32(0.00005), 0) if wide else (np.float32(0.0039), -128)
        sh, zh = np.float32(hidden_q[0]), hidden_q[1]
        if wide:
            sh, zh = np.float32(hidden_q[0] / 256), 0
        swi = [np.float32(v) for v in rng.uniform(0.005, 0.012, 4)]
        swr = [np.float32(v) for v in rng.uniform(0.004, 0.01, 4)]
        xs = [rand_int(rng, xshape, dtype) for _ in range(INVOCATIONS)]
        wi = [rand_int(rng, (units, n_in), "int8", edges=False) for _ in range(4)]
        wr = [rand_int(rng, (units, units), "int8", edges=False) for _ in range(4)]
        bs = [rng.integers(-30000, 30000, units).astype(np.int64 if wide else np.int32)
              for _ in range(4)]
        xi = mb.input("x", xshape, dtype, scale=sx, zero_point=zx)
        wii = [mb.const(f"wi{k}", w, scale=s, zero_point=0)
               for k, (w, s) in enumerate(zip(wi, swi))]
        wri = [mb.const(f"wr{k}", w, scale=s, zero_point=0)
               for k, (w, s) in enumerate(zip(wr, swr))]
        bi = [mb.const(f"b{k}", b, scale=np.float32(sx * s), zero_point=0)
              for k, (b, s) in enumerate(zip(bs, swi))]
        hi = mb.tensor("h", (batch, units), dtype, scale=sh, zero_point=zh, variable=True)
        ci = mb.tensor("c", (batch, units), "int16", scale=cell_scale, zero_point=0, variable=True)
        yi = mb.output("y", xshape[:2] + (units,), dtype, scale=sh, zero_point=zh)
        kw = dict(x_scale=sx, x_zero_point=zx, input_weight_scales=swi,
                  recurrent_weight_scales=swr, hidden_scale=sh, hidden_zero_point=zh,
                  cell_scale=cell_scale)
        h = np.full((batch, units), zh, dtype)
        c = np.zeros((batch, units), np.int16)
    inputs = [xi, *wii, *wri, -1, -1, -1, *bi, -1, -1, hi, ci, -1, -1, -1, -1]
    mb.op("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [yi], fused_activation_function="TANH",
          cell_clip=cell_clip, proj_clip=0.0, time_major=time_major)
    got = []
    for x in xs:
        y, h, c = unidirectional_sequence_lstm(x, wi, wr, bs, h, c, time_major=time_major,
                                               cell_clip=cell_clip, **kw)
        got.append(y)
    return mb.finish(), xs, got


VARIANTS = [dict(), dict(batch=1), dict(time_major=True), dict(cell_clip=0.0),
            dict(cell_clip=1.5), dict(cell_scale=2.0 ** -11), dict(cell_scale=2.0 ** -14),
            dict(hidden_q=(0.02, -20))]


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.parametrize("variant", range(len(VARIANTS)))
def test_lstm_sequence(tflm, dtype, variant):
    model, xs, got = _case(variant, dtype, **VARIANTS[variant])
    want = [outs[0] for outs in tflm.run(model, [[x] for x in xs])]
    for step, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape
        if w.dtype == np.float32:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"invocation {step}")
        else:
            diff = np.abs(g.astype(np.int64) - w)
            assert diff.max() == 0, \
                f"invocation {step}: {np.count_nonzero(diff)} differ, max {diff.max()}"
