"""SVDF (stateful): one call of the header helper ``aot_svdf_s8``/``aot_svdf_f32``.

The state is updated in place (a shift of one sample and a new sample per
filter), which tensor expressions cannot say without aliasing an input and
an output, so the kernel's loop IR is one call of the helper in
``include/aot_svdf.h`` with the shapes and quantization as constants
(:func:`aot.kernels.kernel.helper_kernel`).  The state is one parameter with
role ``"state"`` (``T* restrict``, read and written).  Arithmetic as
:mod:`aot.reference.ops.svdf`: int8 input and output, int8 feature
weights, time weights and state both int16 or both int8 (with the state's
zero point), int32 bias; sums wrap as int32 (the C code adds in
``uint32_t`` so that wrapping is defined), and a new state sample offset by
the zero point wraps into the state type through unsigned arithmetic.
Float32: the same in float with the fused activation.
"""

from __future__ import annotations

import numpy as np

from aot.ir.analysis import node_macs
from aot.kernels.kernel import KernelError, helper_kernel
from aot.kernels.registry import handwritten
from aot.quant.params import f32
from aot.quant.arith import quantize_multiplier

#: The helper's activation codes of float SVDF.
_FLOAT_ACT = {"none": 0, "relu": 1, "relu6": 2, "relu_n1_to_1": 3}


@handwritten("svdf", headers=("aot_svdf.h",))
def svdf(group, ag, target, name):
    node = group.nodes[0]
    x, wf, wt, bias, state = node.inputs
    y = node.outputs[0]
    if wf.kind != "constant" or wt.kind != "constant" or state.kind != "variable":
        raise KernelError(f"svdf ({node.name}): weights must be constants and the state a "
                          "variable: not supported yet otherwise")
    batch, depth = x.shape
    filters, memory = wt.shape
    rank = node.attrs["rank"]
    units = filters // rank
    is_float = x.dtype == "float32"
    zero = np.zeros(units, np.float32 if is_float else np.int32)
    consts = {"wf": np.asarray(wf.data), "wt": np.asarray(wt.data),
              # no bias adds zeros (the sums start at 0 either way)
              "bias": zero if bias is None else np.asarray(bias.data)}
    params = [(x, "input", "x"), (state, "state", "state"), (y, "output", "y")]
    macs = node_macs(node)
    shape = (batch, depth, filters, memory, rank)
    if is_float:
        args = ("x", "state", "y", "wf", "wt", "bias", *shape,
                _FLOAT_ACT[node.attrs["activation"]])
        return helper_kernel(name, target, params, consts, "aot_svdf_f32", args,
                             macs=macs, op_names=("svdf",))
    types = (x.dtype, wf.dtype, wt.dtype, state.dtype, y.dtype)
    if types not in (("int8", "int8", "int16", "int16", "int8"),
                     ("int8", "int8", "int8", "int8", "int8")):
        raise KernelError(f"svdf ({node.name}) with {x.dtype} input, {wf.dtype}/{wt.dtype} "
                          f"weights and {state.dtype} state: not supported (int8 input, "
                          "int8 feature weights, time weights and state both int16 or "
                          "both int8)")
    sx, sf, st = (f32(t.quant.scale[0]) for t in (x, wf, state))
    sw, sy = f32(wt.quant.scale[0]), f32(y.quant.scale[0])
    m1, s1 = quantize_multiplier(sx * sf / st)
    m2, s2 = quantize_multiplier(st * sw / sy)
    info = np.iinfo(state.dtype)
    args = ("x", "state", "y", "wf", "wt", "bias", info.bits // 8, *shape,
            -int(x.quant.zero_point[0]), m1, s1, m2, s2, int(y.quant.zero_point[0]),
            int(state.quant.zero_point[0]), int(info.min), int(info.max))
    return helper_kernel(name, target, params, consts, "aot_svdf_s8", args,
                         macs=macs, op_names=("svdf",))
