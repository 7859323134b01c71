"""SVDF (stateful): a hand-written C template with the constants folded at compile time.

The state is updated in place (a shift of one sample and a new sample per
filter), which tensor expressions cannot say without aliasing an input and
an output, so this kernel is rendered from ``templates/svdf.c.j2``.  It keeps
the Kernel contract; the state is one parameter with role ``"state"``
(``T* restrict``, read and written).  Arithmetic as
:mod:`aot.reference.ops.svdf`: int8 input and output, int8 feature
weights, time weights and state both int16 or both int8 (with the state's
zero point), int32 bias; sums wrap as int32 (the C code adds in
``uint32_t`` so that wrapping is defined), and a new state sample offset by
the zero point wraps into the state type through unsigned arithmetic.
Float32: the same in float with the fused activation.
"""

from __future__ import annotations

import numpy as np

from aot.kernels.kernel import KernelError, render_template_kernel
from aot.kernels.registry import handwritten
from aot.quant.params import f32
from aot.quant.arith import quantize_multiplier

_FLOAT_ACT = {"none": "v", "relu": "fmaxf(v, 0.0f)", "relu6": "fminf(fmaxf(v, 0.0f), 6.0f)",
              "relu_n1_to_1": "fminf(fmaxf(v, -1.0f), 1.0f)"}


@handwritten("svdf")
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
    is_float = x.dtype == "float32"
    ctx = {"node": node.name, "batch": batch, "depth": depth, "filters": filters,
           "memory": memory, "rank": rank, "units": filters // rank,
           "state_size": int(np.prod(state.shape)), "float": is_float,
           "has_bias": bias is not None, "x_type": "float" if is_float else "int8_t",
           "w_type": "float" if is_float else "int8_t",
           "wt_type": "float" if is_float else f"{wt.dtype}_t",
           "state_type": "float" if is_float else f"{state.dtype}_t"}
    consts = {"wf": np.asarray(wf.data), "wt": np.asarray(wt.data)}
    if bias is not None:
        consts["bias"] = np.asarray(bias.data)
    if is_float:
        act = node.attrs["activation"]
        ctx["clamp_float"] = _FLOAT_ACT[act].replace("v", "acc")
    else:
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
        ctx.update(m1=m1, s1=s1, m2=m2, s2=s2, input_offset=-int(x.quant.zero_point[0]),
                   output_offset=int(y.quant.zero_point[0]),
                   state_zero_point=int(state.quant.zero_point[0]),
                   state_min=int(info.min), state_max=int(info.max), state_span=1 << info.bits)
    params = [(x, "input", "x"), (state, "state", "state"), (y, "output", "y")]
    macs = batch * filters * (depth + memory)
    return render_template_kernel(__name__, "svdf.c.j2", name, target, params, consts, ctx,
                                  macs=macs, op_names=("svdf",))
