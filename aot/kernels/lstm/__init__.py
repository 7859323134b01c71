"""UNIDIRECTIONAL_SEQUENCE_LSTM (int8 and 16x8, stateful): one call of ``aot_lstm``.

Like SVDF, the hidden and cell states are updated in place, so this kernel's
loop IR is one call of the helper in ``include/aot_lstm.h`` with the shapes
and parameters as constants (:func:`aot.kernels.kernel.helper_kernel`)
rather than a tensor expression.
Both states are parameters with role ``"state"``.  The arithmetic is
:mod:`aot.reference.ops.lstm`'s integer path: per step and gate, two fully
connected layers into int16 Q3.12 (requantized per gate and unit, summed
with saturation), TFLM's int16 logistic and tanh from the sigmoid table,
the int16 MUL arithmetic for the cell update and the int8 hidden output.
16x8 (int16 input and hidden state, int8 weights, int64 biases, as TFLM's
EvalLstm<int16_t, int8_t, int16_t, int64_t>): the fully connected layers sum
in int64 and requantize with the 64-bit multiply; the rest is the same.
Float LSTM, peepholes, projection, layer norm and CIFG are not supported.
"""

from __future__ import annotations

import numpy as np

from aot.ir.analysis import node_macs
from aot.kernels.kernel import KernelError, helper_kernel
from aot.kernels.registry import handwritten
from aot.quant.params import log2_rounded
from aot.quant.params import f32
from aot.quant.params import GATE_INPUT_SCALE, GATE_OUTPUT_SCALE
from aot.quant.arith import quantize_multiplier, quantize_multipliers
from aot.quant.sigmoid_table import SIGMOID_TABLE_UINT16

_INPUT_WEIGHTS = (1, 2, 3, 4)
_RECURRENT_WEIGHTS = (5, 6, 7, 8)
_BIASES = (12, 13, 14, 15)
_UNSUPPORTED = {9: "peephole", 10: "peephole", 11: "peephole", 16: "projection",
                17: "projection", 20: "layer norm", 21: "layer norm", 22: "layer norm",
                23: "layer norm"}


def _scales(t, n: int) -> np.ndarray:
    q = t.quant
    s = q.scales() if q.is_per_axis else np.array(q.scale[:1])
    return np.broadcast_to(np.asarray(s, dtype=np.float32).reshape(-1), (n,))


def _requant_tables(x_scale, weights, n_cell):
    eff = [f32(x_scale) * float(s) / GATE_INPUT_SCALE
           for w in weights for s in _scales(w, n_cell)]
    mult, shift = quantize_multipliers(eff)
    return mult.astype(np.int32), shift.astype(np.int32)


def _refuse(node, what):
    return KernelError(f"lstm ({node.name}) with {what}: not supported yet (int8 or 16x8 LSTM "
                       "without peepholes, projection, layer norm or CIFG)")


@handwritten("lstm", headers=("aot_lstm.h",))
def lstm(group, ag, target, name):
    node = group.nodes[0]
    ins = node.inputs
    x, hidden, cell, y = ins[0], ins[18], ins[19], node.outputs[0]
    for slot, what in _UNSUPPORTED.items():
        if ins[slot] is not None:
            raise _refuse(node, f"{what} weights")
    if any(ins[i] is None for i in _INPUT_WEIGHTS + _RECURRENT_WEIGHTS):
        raise _refuse(node, "CIFG (no input gate)")
    if x.dtype not in ("int8", "int16") or cell.dtype != "int16" or hidden.dtype != x.dtype:
        raise _refuse(node, f"{x.dtype} data, {hidden.dtype} hidden and {cell.dtype} cell state")
    wide = x.dtype == "int16"
    if node.attrs["activation"] != "tanh":
        raise _refuse(node, f"cell activation {node.attrs['activation']}")
    if hidden.kind != "variable" or cell.kind != "variable":
        raise _refuse(node, "states that are not variables")
    n_cell, depth = ins[1].shape
    time_major = node.attrs["time_major"]
    steps, batch = (x.shape[0], x.shape[1]) if time_major else (x.shape[1], x.shape[0])
    cell_scale = f32(cell.quant.scale[0])
    log2, pot = log2_rounded(cell_scale)
    if not pot:
        raise _refuse(node, "a cell state scale that is not a power of two")
    tanh_shift = 15 + log2 - 3
    h_scale, h_zp = f32(hidden.quant.scale[0]), int(hidden.quant.zero_point[0])
    mi, si = _requant_tables(x.quant.scale[0], [ins[i] for i in _INPUT_WEIGHTS], n_cell)
    mr, sr = _requant_tables(h_scale, [ins[i] for i in _RECURRENT_WEIGHTS], n_cell)
    bias_dtype = np.int64 if wide else np.int32
    biases = [np.zeros(n_cell, bias_dtype) if ins[i] is None else np.asarray(ins[i].data)
              for i in _BIASES]
    if wide and any(ins[i] is not None and ins[i].dtype != "int64" for i in _BIASES):
        raise _refuse(node, "int16 data and biases that are not int64")
    m_fc, s_fc = quantize_multiplier(f32(GATE_OUTPUT_SCALE) * cell_scale / cell_scale)
    m_ig, s_ig = quantize_multiplier(f32(GATE_OUTPUT_SCALE) * f32(GATE_OUTPUT_SCALE)
                                     / cell_scale)
    m_h, s_h = quantize_multiplier(f32(GATE_OUTPUT_SCALE) * f32(GATE_OUTPUT_SCALE) / h_scale)
    clip = float(node.attrs["cell_clip"])
    qclip = int(np.clip(clip / cell_scale, -32768, 32767)) if clip > 0 else 0
    consts = {
        "wi": np.stack([np.asarray(ins[i].data) for i in _INPUT_WEIGHTS]),
        "wr": np.stack([np.asarray(ins[i].data) for i in _RECURRENT_WEIGHTS]),
        "bias": np.stack(biases).astype(bias_dtype),
        "mi": mi, "si": si, "mr": mr, "sr": sr,
        "table": SIGMOID_TABLE_UINT16.astype(np.int32),
    }
    params = [(x, "input", "x"), (hidden, "state", "hidden"), (cell, "state", "cell"),
              (y, "output", "y")]
    args = ("x", "hidden", "cell", "y", "wi", "wr", "bias", "mi", "si", "mr", "sr", "table",
            "gates", int(wide), int(bool(time_major)), batch, steps, depth, n_cell,
            -int(x.quant.zero_point[0]), -h_zp, h_zp, m_fc, s_fc, m_ig, s_ig, m_h, s_h,
            qclip, tanh_shift, int(np.iinfo(x.dtype).min), int(np.iinfo(x.dtype).max))
    macs = node_macs(node)
    return helper_kernel(name, target, params, consts, "aot_lstm", args,
                         macs=macs, op_names=("lstm",), scratch={"gates": ("int16", 4 * n_cell)})
