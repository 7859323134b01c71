"""SVDF against TFLM over sequences of invocations from a fresh state."""

from __future__ import annotations

import numpy as np
import pytest

from aot.reference.ops.svdf import svdf
from support.quant_cases import rand_int
from support.tflite_builder import ModelBuilder

STEPS = 6


def _case(seed, dtype, batch=1, n_input=12, units=5, rank=2, memory=4, act="RELU",
          state_zp=0):
    """``dtype``: float32, int8 (int16 time weights and state) or int8/int8 (int8 time
    weights and state, TFLM's other integer kernel)."""
    rng = np.random.default_rng(seed)
    filters = units * rank
    mb = ModelBuilder()
    if dtype == "float32":
        xs = [rng.standard_normal((batch, n_input)).astype(np.float32) for _ in range(STEPS)]
        wf = rng.standard_normal((filters, n_input)).astype(np.float32)
        wt = rng.standard_normal((filters, memory)).astype(np.float32)
        b = rng.standard_normal(units).astype(np.float32)
        xi = mb.input("x", (batch, n_input), "float32")
        ins = [mb.const("wf", wf), mb.const("wt", wt), mb.const("b", b),
               mb.tensor("state", (batch, filters * memory), "float32", variable=True)]
        yi = mb.output("y", (batch, units), "float32")
        kw = {}
        state = np.zeros((batch, filters * memory), np.float32)
    else:
        state_t = "int8" if dtype == "int8/int8" else "int16"
        sx, swf, swt, sst, sy = (np.float32(v) for v in (0.06, 0.009, 0.0037, 0.0044, 0.5))
        if state_t == "int8":  # a coarser state, so that it saturates now and then
            sst, swt, sy = np.float32(0.1), np.float32(0.02), np.float32(2.0)
        zx, zy = -128 if seed % 2 else 5, -128 if act == "RELU" else 3
        xs = [rand_int(rng, (batch, n_input), "int8") for _ in range(STEPS)]
        wf = rand_int(rng, (filters, n_input), "int8", edges=False)
        wt = rng.integers(-300, 300, (filters, memory)).astype(np.int16)
        if state_t == "int8":
            wt = rand_int(rng, (filters, memory), "int8")
        b = rng.integers(-20000, 20000, units).astype(np.int32)
        xi = mb.input("x", (batch, n_input), "int8", scale=sx, zero_point=zx)
        ins = [mb.const("wf", wf, scale=swf, zero_point=0),
               mb.const("wt", wt, scale=swt, zero_point=0),
               mb.const("b", b, scale=np.float32(sst * swt), zero_point=0),
               mb.tensor("state", (batch, filters * memory), state_t, scale=sst,
                         zero_point=state_zp, variable=True)]
        yi = mb.output("y", (batch, units), "int8", scale=sy, zero_point=zy)
        kw = dict(x_scale=sx, x_zero_point=zx, wf_scale=swf, wt_scale=swt, state_scale=sst,
                  state_zero_point=state_zp, y_scale=sy, y_zero_point=zy)
        # TFLM starts an int8 variable at its zero point, an int16 one at 0
        state = np.full((batch, filters * memory), state_zp if state_t == "int8" else 0,
                        state_t)
    mb.op("SVDF", [xi, *ins], [yi], rank=rank, fused_activation_function=act or "NONE")
    got = []
    for x in xs:
        y, state = svdf(x, wf, wt, b, state, rank=rank, activation=act, **kw)
        got.append(y)
    return mb.finish(), xs, got


VARIANTS = [dict(), dict(rank=1), dict(batch=2), dict(act=None), dict(memory=1, rank=3),
            dict(state_zp=-7), dict(state_zp=11, batch=2)]


@pytest.mark.parametrize("dtype", ["int8", "int8/int8", "float32"])
@pytest.mark.parametrize("variant", range(len(VARIANTS)))
def test_svdf_sequence(tflm, dtype, variant):
    model, xs, got = _case(variant, dtype, **VARIANTS[variant])
    want = [outs[0] for outs in tflm.run(model, [[x] for x in xs])]
    for step, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape
        if w.dtype == np.float32:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"step {step}")
        else:
            diff = np.abs(g.astype(np.int64) - w)
            assert diff.max() == 0, (f"step {step}: {np.count_nonzero(diff)} differ, "
                                     f"max {diff.max()}")
