"""SVDF: singular-value-decomposition filter, stateful (TFLM reference arithmetic).

Shapes as TFLite stores them: ``x`` [batch, input], ``weights_feature``
[filters, input], ``weights_time`` [filters, memory], ``bias`` [units] with
``units = filters / rank``, ``state`` [batch, filters * memory] where each
filter's ``memory`` samples are contiguous, oldest first.

One step: the state shifts left by one sample; the newest sample of filter
``f`` is ``weights_feature[f] . x``; each filter's memory is dotted with its
``weights_time`` row; ``rank`` consecutive filters are summed per unit and
the bias added.

Integer (int8 input/output, int8 feature weights, int32 bias; time weights
and state both int16 or both int8, TFLM's two integer kernels): the feature
dot product ``sum(wf * (x - zp_x))`` is requantized into the state by
``QM(s_x * s_wf / s_state)``, saturated to the state type, offset by
``zp_state`` and narrowed to the state type with wrapping (the order of the
TFLM the project pins; later TFLM saturates after the offset); each
filter's time sum is ``sum(wt * (state - zp_state))`` (int32, wrapping);
the unit sums (with the bias) are requantized by
``QM(s_state * s_wt / s_y)``, offset by ``zp_y`` and saturated to int8.  The
time weights' zero point is not used (TFLM ignores it).  The fused
activation is not applied on the integer path (TFLM does not; the output
quantization carries it).
Float: the same in float32, then the fused activation.
"""

from __future__ import annotations

import numpy as np

from aot.quant import arith as quant
from aot.quant.params import f32


def svdf(x, weights_feature, weights_time, bias, state, *, rank: int, activation=None,
         x_scale=1.0, x_zero_point=0, wf_scale=1.0, wt_scale=1.0, state_scale=1.0,
         state_zero_point=0, y_scale=1.0, y_zero_point=0):
    """One SVDF step.  Returns ``(y, new_state)``; ``state`` is not modified.

    ``y`` is [batch, units] (int8 or float32); ``new_state`` has the shape
    and dtype of ``state`` and must be passed to the next step.
    """
    x = np.asarray(x)
    wf = np.asarray(weights_feature)
    wt = np.asarray(weights_time)
    batch = x.shape[0]
    filters, memory = wt.shape
    units = filters // rank
    st = np.asarray(state).reshape(batch, filters, memory)
    # Shift the whole buffer left by one sample; the last sample of every
    # filter is overwritten below.
    flat = np.asarray(state).reshape(-1)
    shifted = np.concatenate([flat[1:], flat[-1:]]).reshape(batch, filters, memory)
    if x.dtype == np.float32:
        new = shifted.astype(np.float32).copy()
        new[:, :, -1] = (x.reshape(batch, -1).astype(np.float64) @ wf.T.astype(np.float64))
        scratch = (new.astype(np.float64) * wt.astype(np.float64)).sum(axis=-1)
        y = scratch.reshape(batch, units, rank).sum(axis=-1)
        if bias is not None:
            y = y + np.asarray(bias, dtype=np.float64)
        lo, hi = quant.activation_range_float(activation)
        return np.clip(y, lo, hi).astype(np.float32), new.reshape(st.shape[0], -1)
    m1, s1 = quant.quantize_multiplier(f32(x_scale) * f32(wf_scale) / f32(state_scale))
    m2, s2 = quant.quantize_multiplier(f32(state_scale) * f32(wt_scale) / f32(y_scale))
    info = np.iinfo(np.asarray(state).dtype)
    new = shifted.astype(np.int64).copy()
    dot = (x.reshape(batch, -1).astype(np.int64) - int(x_zero_point)) @ wf.T.astype(np.int64)
    dot = quant.multiply_by_quantized_multiplier(quant.wrap_int32(dot), m1, s1)
    # Saturated to the state type, then offset, then narrowed with wrapping
    # (the pinned TFLM's order: an int8 state near its limits wraps around).
    sample = np.clip(dot, info.min, info.max) + int(state_zero_point)
    new[:, :, -1] = sample.astype(np.asarray(state).dtype)
    scratch = quant.wrap_int32(((new - int(state_zero_point)) * wt.astype(np.int64)).sum(axis=-1))
    acc = scratch.reshape(batch, units, rank).sum(axis=-1)
    if bias is not None:
        acc = acc + np.asarray(bias, dtype=np.int64)
    y = quant.multiply_by_quantized_multiplier(quant.wrap_int32(acc), m2, s2) + int(y_zero_point)
    out_state = new.astype(np.asarray(state).dtype).reshape(np.asarray(state).shape)
    return quant.clamp_cast(y, -128, 127, np.int8), out_state
