"""BATCH_MATMUL: ``y[..., i, j] = sum_k a[..., i, k] b[..., k, j]``, the
operands read through their optional transposes and the broadcast of their
leading axes (an axis of size 1 is read at index 0).

float32 accumulates ``k`` ascending from 0, TFLM's order; int8 accumulates
``(a - zp_a)(b - zp_b)`` in int32 and int16 in int64, then one
``MultiplyByQuantizedMultiplier`` with ``QM(s_a s_b / s_y)`` (the int64
variant for int16), the output zero point and the type's range.  The
schedule computes one output at a time with its dot product innermost.
"""

from __future__ import annotations

from aot import te
from aot.ir.analysis import node_macs
from aot.kernels.common import requantize
from aot.kernels.kernel import KernelError
from aot.kernels.registry import Computed, compute_rule, strategy
from aot.quant import arith as quant
from aot.quant.arith import qrange
from aot.quant.params import f32


def _reader(t, value, adj: bool, batch_rank: int):
    """``read(b, i, k)``: element ``(i, k)`` of the (transposed when ``adj``)
    matrix at broadcast batch index ``b``."""
    shape = tuple(int(d) for d in t.shape)
    lead = shape[:-2]
    skip = batch_rank - len(lead)

    def read(b, i, k):
        idx = [0 if d == 1 else b[skip + n] for n, d in enumerate(lead)]
        idx += [k, i] if adj else [i, k]
        return value[tuple(idx)]
    return read


@compute_rule("batch_matmul")
def batch_matmul(ctx, node) -> Computed:
    a_t, b_t = node.inputs
    y_t = node.outputs[0]
    shape = tuple(int(d) for d in y_t.shape)
    batch_rank = len(shape) - 2
    a = _reader(a_t, ctx.value(a_t), node.attrs["adj_x"], batch_rank)
    b = _reader(b_t, ctx.value(b_t), node.attrs["adj_y"], batch_rank)
    depth = int(a_t.shape[-2] if node.attrs["adj_x"] else a_t.shape[-1])
    k = te.reduce_axis((0, depth), "k")
    macs = node_macs(node)
    if y_t.dtype == "float32":
        def body(*i):
            return te.sum(a(i[:-2], i[-2], k) * b(i[:-2], k, i[-1]), axis=k)
        acc = te.compute(shape, body, name="acc")
        return Computed(acc, {"acc": acc}, macs)
    if any(t.quant is None for t in (a_t, b_t, y_t)):
        raise KernelError(f"batch_matmul ({node.name}): integer operands must be quantized")
    wide = y_t.dtype == "int16"
    acc_dtype = "int64" if wide else "int32"
    za, zb = int(a_t.quant.zero_point[0]), int(b_t.quant.zero_point[0])

    def term(v, zp):
        v = v.astype(acc_dtype)
        return v - te.const(zp, acc_dtype) if zp else v

    def qbody(*i):
        return te.sum(term(a(i[:-2], i[-2], k), za) * term(b(i[:-2], k, i[-1]), zb), axis=k)
    acc = te.compute(shape, qbody, name="acc")
    mult, shift = quant.quantize_multiplier(
        f32(a_t.quant.scale[0]) * f32(b_t.quant.scale[0]) / f32(y_t.quant.scale[0]))
    zy = int(y_t.quant.zero_point[0])
    y = te.compute(shape, lambda *i: requantize(acc[i], mult, shift, zy, qrange(y_t.dtype),
                                                y_t.dtype, wide=wide), name="y")
    return Computed(y, {"acc": acc}, macs)


@strategy("batch_matmul")
def schedule_generic(s, final, stages) -> None:
    """One output at a time, its dot product innermost (in its own
    one-element accumulator when an epilogue follows)."""
    acc = stages["acc"]
    if acc is not final:
        s[acc].compute_at(s[final], final.op.axis[-1])
