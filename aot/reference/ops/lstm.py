"""UNIDIRECTIONAL_SEQUENCE_LSTM, stateful (TFLM reference arithmetic).

Gates in TFLite's order ``(input, forget, cell, output)``; weights ``[units,
input]`` and ``[units, units]``; no peepholes, projection, layer norm or CIFG
(TFLM's kernel handles none of those either).  ``x`` is ``[batch, time, in]``
(``[time, batch, in]`` when ``time_major``); the output stacks the hidden
state of every step in the same layout.

Integer (int8 activations and weights, int16 cell state with a power-of-two
scale, int32 biases), per step:

* gate pre-activations in int16 with scale 2**-12: two fully connected
  layers (``x`` with the bias, ``h`` without) requantized to int16 and added
  with int16 saturation;
* input/forget/output gates: int16 ``LOGISTIC``; cell gate: int16 ``TANH``
  (both in :mod:`aot.reference.ops.activations`, Q0.15 outputs);
* ``c = sat16(MUL(f, c) + MUL(i, g))`` with the int16 MUL arithmetic and
  multipliers ``QM(2**-15)`` and ``QM(2**-30 / s_c)``, then clipped to
  ``+-int(cell_clip / s_c)`` when ``cell_clip > 0``;
* ``h = MUL(tanh(c), o)`` into int8 with ``QM(2**-30 / s_h)`` and ``zp_h``,
  where tanh reads ``c`` on its power-of-two scale.

Float: the textbook cell with the same clip, in float32.
"""

from __future__ import annotations

import numpy as np

from aot.quant import arith as quant
from aot.reference.ops import activations
from aot.quant.params import GATE_INPUT_SCALE, GATE_OUTPUT_SCALE, f32, log2_rounded
from aot.reference.ops.fully_connected import fully_connected



def _mul(a, b, scale_a, scale_b, scale_out, zp_out, out_dtype):
    m, s = quant.quantize_multiplier(f32(scale_a) * f32(scale_b) / f32(scale_out))
    prod = np.asarray(a, dtype=np.int64) * np.asarray(b, dtype=np.int64)
    y = quant.multiply_by_quantized_multiplier(prod, m, s) + int(zp_out)
    lo, hi = quant.qrange(out_dtype)
    return np.clip(y, lo, hi)


def unidirectional_sequence_lstm(
        x, input_weights, recurrent_weights, biases, hidden, cell, *,
        time_major=False, cell_clip=0.0, activation="TANH",
        x_scale=1.0, x_zero_point=0, input_weight_scales=(1.0,) * 4,
        recurrent_weight_scales=(1.0,) * 4, hidden_scale=1.0, hidden_zero_point=0,
        cell_scale=1.0):
    """Run the whole sequence.  Returns ``(y, hidden, cell)``.

    ``input_weights``, ``recurrent_weights``, ``biases`` and the two scale
    tuples hold four entries each, in gate order (input, forget, cell,
    output).  ``hidden`` [batch, units] and ``cell`` [batch, units] are the
    state before the first step; the returned ones are the state after the
    last step (inputs are not modified).  The output shares the hidden
    state's quantization.
    """
    if activation not in ("TANH", None):
        raise NotImplementedError(f"LSTM: cell activation {activation} is not supported yet")
    if any(w is None for w in (*input_weights, *recurrent_weights)):
        raise NotImplementedError("LSTM: CIFG (no input gate) is not supported")
    x = np.asarray(x)
    seq = x if time_major else np.swapaxes(x, 0, 1)          # [time, batch, in]
    h = np.asarray(hidden)
    c = np.asarray(cell)
    outs = []
    if x.dtype == np.float32:
        h = h.astype(np.float32)
        c = c.astype(np.float32)
        for xt in seq:
            pre = [fully_connected(xt, wi, b) + fully_connected(h, wr, None)
                   for wi, wr, b in zip(input_weights, recurrent_weights, biases)]
            i, f, o = (activations.logistic(p) for p in (pre[0], pre[1], pre[3]))
            g = activations.tanh(pre[2])
            c = (f * c + i * g).astype(np.float32)
            if cell_clip > 0:
                c = np.clip(c, -cell_clip, cell_clip)
            h = (o * activations.tanh(c)).astype(np.float32)
            outs.append(h)
    else:
        log2, pot = log2_rounded(cell_scale)
        if not pot:
            raise NotImplementedError("LSTM: the cell state scale must be a power of two")
        tanh_shift = 15 + log2 - 3
        tanh_mult = 0 if tanh_shift >= 0 else 3
        tanh_shift = abs(tanh_shift)
        qclip = int(np.clip(float(cell_clip) / f32(cell_scale), -32768, 32767))
        h = h.astype(np.int64)
        c = c.astype(np.int64)
        for xt in seq:
            pre = []
            for k in range(4):
                a = fully_connected(xt, input_weights[k], biases[k], x_scale=x_scale,
                                    x_zero_point=x_zero_point, w_scale=input_weight_scales[k],
                                    y_scale=GATE_INPUT_SCALE, out_dtype=np.int16)
                r = fully_connected(h.astype(x.dtype), recurrent_weights[k], None,
                                    x_scale=hidden_scale, x_zero_point=hidden_zero_point,
                                    w_scale=recurrent_weight_scales[k],
                                    y_scale=GATE_INPUT_SCALE, out_dtype=np.int16)
                pre.append(np.clip(a.astype(np.int64) + r, -32768, 32767))
            i, f, o = (activations.logistic_int16_raw(p) for p in (pre[0], pre[1], pre[3]))
            g = activations.tanh_int16_raw(pre[2])
            fc = _mul(f, c, GATE_OUTPUT_SCALE, cell_scale, cell_scale, 0, np.int16)
            ig = _mul(i, g, GATE_OUTPUT_SCALE, GATE_OUTPUT_SCALE, cell_scale, 0, np.int16)
            c = np.clip(fc + ig, -32768, 32767)
            if cell_clip > 0:
                c = np.clip(c, -qclip, qclip)
            t = activations.tanh_int16_raw(c, tanh_mult, tanh_shift)
            h = _mul(t, o, GATE_OUTPUT_SCALE, GATE_OUTPUT_SCALE, hidden_scale,
                     hidden_zero_point, x.dtype)
            outs.append(h)
        h = h.astype(np.asarray(hidden).dtype)
        c = c.astype(np.asarray(cell).dtype)
    y = np.stack(outs).astype(x.dtype)
    if not time_major:
        y = np.swapaxes(y, 0, 1)
    return np.ascontiguousarray(y), h, c
