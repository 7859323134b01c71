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
from aot.kernels.dense.intrin import dense_chunk, dense_s8_intrin
from aot.kernels.elementwise import requant_s8
from aot.kernels.template import extent
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


# each output row's raw products are one aot_dense_s8 call (dense.intrin)
@compute_rule("batch_matmul", headers=("aot_dense.h",))
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
    if y_t.dtype == "int8" and batch_rank and dense_chunk(shape[-1]) == shape[-1]:
        return _int8_rows(ctx, node, shape, depth, macs)
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


def _int8_rows(ctx, node, shape, depth: int, macs: int) -> Computed:
    """int8 with both operands read along ``k`` from contiguous rows: the
    right-hand matrix of each batch copied as ``[cols, depth]`` (the
    ``rhs_cols`` stage, a stack buffer; the left one too when ``adj_x``),
    the raw products of an output row summed by one ``aot_dense_s8`` call
    (four columns share each widened word of the row with the DSP
    extension), and the zero points folded in afterwards::

        sum (a - za)(b - zb) = sum a b - zb sum a - za sum b + depth za zb

    with ``sum a`` per row and ``sum b`` per column (int32 arithmetic
    wraps identically on both sides, so the result is TFLM's bit for bit)."""
    a_t, b_t = node.inputs
    y_t = node.outputs[0]
    lead, (rows, cols) = shape[:-2], shape[-2:]
    a = _reader(a_t, ctx.value(a_t), node.attrs["adj_x"], len(lead))
    b = _reader(b_t, ctx.value(b_t), node.attrs["adj_y"], len(lead))
    lhs = te.compute(lead + (rows, depth), lambda *i: a(i[:-2], i[-2], i[-1]), name="lhs_rows")
    rhs = te.compute(lead + (cols, depth), lambda *i: b(i[:-2], i[-1], i[-2]), name="rhs_cols")
    k = te.reduce_axis((0, depth), "k")
    raw = te.compute(shape, lambda *i: te.sum(
        lhs[i[:-1] + (k,)].astype("int32") * rhs[i[:-2] + (i[-1], k)].astype("int32"), axis=k),
        name="acc")
    ka, kb = te.reduce_axis((0, depth), "ka"), te.reduce_axis((0, depth), "kb")
    lhs_sum = te.compute(lead + (rows,), lambda *i: te.sum(lhs[i + (ka,)].astype("int32"),
                                                           axis=ka), name="lhs_sum")
    rhs_sum = te.compute(lead + (cols,), lambda *i: te.sum(rhs[i + (kb,)].astype("int32"),
                                                           axis=kb), name="rhs_sum")
    za, zb = int(a_t.quant.zero_point[0]), int(b_t.quant.zero_point[0])
    const = quant.wrap_int32(depth * za * zb)

    def corrected(i):
        v = raw[i]
        if zb:
            v = v - lhs_sum[i[:-1]] * zb
        if za:
            v = v - rhs_sum[i[:-2] + (i[-1],)] * za
        return v + int(const) if const else v
    mult, shift = quant.quantize_multiplier(
        f32(a_t.quant.scale[0]) * f32(b_t.quant.scale[0]) / f32(y_t.quant.scale[0]))
    zy = int(y_t.quant.zero_point[0])
    # |acc| <= depth * 255 * 255: the one-rounding forms of requant_s8 apply
    reach = depth * 255 * 255
    y = te.compute(shape, lambda *i: requant_s8(corrected(i), reach, mult, shift, zy,
                                                qrange("int8")), name="y")
    stages = {"acc": raw, "rhs_cols": rhs}
    if zb:  # the sums exist only where a zero point multiplies them
        stages["lhs_sum"] = lhs_sum
    if za:
        stages["rhs_sum"] = rhs_sum
    if node.attrs["adj_x"]:
        stages["lhs_rows"] = lhs
    return Computed(y, stages, macs)


@strategy("batch_matmul")
def schedule_generic(s, final, stages) -> None:
    """int8 with batch axes (:func:`_int8_rows`): first the right-hand
    columns of every batch and their sums (and the transposed left-hand
    rows), then per output row the left-hand sum and one ``aot_dense_s8``
    call for the row's raw products.
    Otherwise one output at a time, its dot product innermost (in its own
    one-element accumulator when an epilogue follows)."""
    acc = stages["acc"]
    if "rhs_cols" not in stages:
        if acc is not final:
            s[acc].compute_at(s[final], final.op.axis[-1])
        return
    row = final.op.axis[-2]
    # rhs_cols, rhs_sum (and lhs_rows when transposed) stay at the root: one
    # loop nest each ahead of the output's, into stack buffers for all batches
    # (each is read by two stages, so no one loop of the output's owns it)
    if "lhs_sum" in stages:
        s[stages["lhs_sum"]].compute_at(s[final], row)
    s[acc].compute_at(s[final], row)
    cols, depth = extent(acc.shape[-1]), extent(acc.op.reduce_axis[0].dom.extent)
    s[acc].tensorize(acc.op.axis[-1], dense_s8_intrin(cols, depth))
