"""The tensor expression of FULLY_CONNECTED: data flattened to rows of ``depth``,
weights ``[units, depth]``.

int8: ``acc[b,u] = sum_k (x[b,k] + input_offset) * (w[u,k] + weight_offset)``,
then conv2d's requantization (per tensor or per unit); the input offset is
folded into the bias at compile time (``off * sum_k w'[u,k]``).  The weight offset
(TFLite allows a non-zero weight zero point here) is folded into the packed
weights at compile time when they still fit int8, else added in the loop.
On a core with the DSP extension and without Helium, int8 weights that
:func:`aot.kernels.dense.intrin.packable` accepts are offered to the schedule
as the ``dense_packed`` stage (stored packed by the arm_cpu default).
int16x8 accumulates in int64; float32 is a plain product with the fused
activation.
"""

from __future__ import annotations

import numpy as np

from aot import te
from aot.kernels.conv2d.compute import epilogue, fast_requant_tables, fold_bias
from aot.kernels.dense.fuse import dense_requant_rows
from aot.kernels.dense.intrin import packable
from aot.kernels.registry import Computed, compute_rule


@compute_rule("dense", headers=("aot_dense.h",))
def dense(ctx, node) -> Computed:
    x_t, w_t, b_t = node.inputs
    weights = np.asarray(w_t.data)
    units, depth = weights.shape
    rows = x_t.type.size // depth
    x = ctx.value(x_t, (rows, depth))
    is_float = x_t.dtype == "float32"
    qp = None if is_float else ctx.quant(node)
    acc_dtype = "float32" if is_float else ("int64" if qp.wide else "int32")
    w_off = 0 if is_float else int(qp.extra.get("weight_offset", 0))
    w_eff = weights.astype(np.int64) + w_off  # the values the products use
    if not is_float and w_eff.min() >= -128 and w_eff.max() <= 127:
        w = ctx.const(f"{node.name}_weight", w_eff.astype(np.int8))
        w_off = 0
    else:
        w = ctx.const(f"{node.name}_weight", weights)
    k = te.reduce_axis((0, depth), "k")

    def body(b, u):
        if is_float:
            return te.sum(x[b, k] * w[u, k], axis=k)
        wv = w[u, k].astype(acc_dtype)
        if w_off:
            wv = wv + te.const(w_off, acc_dtype)
        return te.sum(x[b, k].astype(acc_dtype) * wv, axis=k)
    acc = te.compute((rows, units), body, name="acc")
    correction = None if is_float else qp.input_offset * w_eff.sum(axis=1)
    bias = fold_bias(ctx, node, b_t, correction)
    stages = {"acc": acc}
    if acc_dtype == "int32" and x_t.dtype == "int8" and not w_off:
        stages["dot_s8"] = acc  # a plain int8 dot product (see conv2d.intrin)
        # may be stored packed (dense.intrin): only where SMLAD runs the
        # packed pairs (without the DSP extension decoding them costs more)
        # and Helium does not (its VMLADAVA reads plain int8 weights)
        target = ctx.builder.target
        if (getattr(target, "has_dsp", False) and not getattr(target, "has_mve", False)
                and packable(w_eff)):
            stages["dense_packed"] = w
            _fused_rows(ctx, node, qp, w_eff, b_t, correction, stages)
    return Computed(epilogue(ctx, node, acc, bias, qp), stages, rows * units * depth)


def _fused_rows(ctx, node, qp, w_eff, b_t, correction, stages) -> None:
    """The fused chunk-and-epilogue helper's rows (dense.fuse) as the stage
    ``dense_requant``, read instead of the bias when the schedule fuses,
    where the per-tensor one-rounding epilogue applies: built from the same
    ``fast_requant_tables`` immediates as the epilogue itself."""
    if node.outputs[0].dtype != "int8":
        return
    fast = fast_requant_tables(ctx, node, qp)
    if fast is None or isinstance(fast[0], te.Tensor) or fast[1] != 0:
        return
    imm = tuple(int(v.value) for v in fast[0])
    bias = None
    if b_t is not None or correction is not None:
        base = 0 if b_t is None else np.asarray(b_t.data, np.int64)
        bias = base + (0 if correction is None else correction)
        bias = ((bias + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)  # the kernel's int32 bias
    rows = dense_requant_rows(w_eff, bias, qp, imm)
    if rows is not None:
        stages["dense_requant"] = ctx.const(f"{node.name}_dq", rows)
