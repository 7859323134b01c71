"""Tensor intrinsic of the int8 dense layers: ``aot_dense_s8`` over a row of units.

The accumulators of a whole input row (one int32 per unit, on the stack; in
chunks of :func:`dense_chunk` units for wide layers) are one call of the
support header's ``aot_dense_s8`` (four units share each widened input
word; DSP and Helium paths chosen by the C preprocessor).  Units that have
no chunk that fits go one output at a time with conv2d's ``dot_s8``.
"""

from __future__ import annotations

from aot import te, tir
from aot.kernels.template import extent


def dense_s8_intrin(units: int, depth: int):
    """``c[u] = sum_k a[k] * b[u, k]`` for all units of one input row, as one
    call of ``aot_dense_s8`` (four units share each input word)."""
    a = te.placeholder((depth,), "int8", "a")
    b = te.placeholder((units, depth), "int8", "b")
    k = te.reduce_axis((0, depth), "k")
    c = te.compute((units,), lambda u: te.sum(a[k].astype("int32") * b[u, k].astype("int32"),
                                               axis=k), name="c")

    def intrin_func(ins, outs):
        aa, bb = ins
        return tir.call_extern("int32", "aot_dense_s8", outs[0].access_ptr("w"),
                               aa.access_ptr("r"), bb.access_ptr("r"), units, depth)
    binds = {t: tir.decl_buffer(t.shape, t.dtype, t.name, elem_offset=te.var(f"{t.name}_off"))
             for t in (a, b, c)}
    return te.decl_tensor_intrin(c.op, intrin_func, binds=binds, name="dense_s8")


#: Bytes of int32 accumulators the dense row intrinsic keeps on the stack: a
#: layer with more units runs them in chunks (one ``aot_dense_s8`` each).  With
#: the 256-byte widened input segment of ``aot_dense_wide_s8`` this keeps a
#: dense layer's scratch below 800 bytes, small beside the activations of the
#: models that are all dense layers (the autoencoder: 2.4 KB in all, TFLM's
#: arena 2.6 KB).  Measured on the autoencoder: 256 bytes (64 units) saves
#: another 256 bytes but costs 0.4% instructions on the Cortex-M4 and 18% on
#: the Cortex-M55, where GCC then spills an accumulator of the Helium loop;
#: each chunk costs one more widening of the input row.
DENSE_ACC_BUDGET = 512


def dense_chunk(units: int) -> int:
    """Units per ``aot_dense_s8`` call: all of them when their accumulators fit
    :data:`DENSE_ACC_BUDGET`, else the largest divisor of ``units`` that fits
    (a multiple of four when there is one, for the four-unit blocks); 0 when
    no divisor of at least four fits, so the caller goes one unit at a time."""
    most = DENSE_ACC_BUDGET // 4
    if units <= most:
        return units
    divisors = [d for d in range(most, 3, -1) if units % d == 0]
    blocks = [d for d in divisors if d % 4 == 0]
    return (blocks or divisors or [0])[0]


def rows_fit(stages, final) -> bool:
    """Whether :func:`tensorize_dense_rows` applies: an int8 dot product whose
    units have a chunk that fits (chunks only over a plain ``[rows, units]``
    output)."""
    if "dot_s8" not in stages:
        return False
    units = extent(stages["acc"].shape[1])
    chunk = dense_chunk(units)
    axes = final.op.axis
    return chunk > 0 and (chunk == units or (len(axes) == 2
                                             and extent(axes[1].dom.extent) == units))


def tensorize_dense_rows(s, final, stages):
    """Accumulate each input row's units in chunks of :func:`dense_chunk`
    (``aot_dense_s8`` per chunk, the epilogue right after it); only where
    :func:`rows_fit`.  Returns the epilogue's loop over the units of one chunk
    (for further scheduling)."""
    acc = stages["acc"]
    units, depth = extent(acc.shape[1]), extent(acc.op.reduce_axis[0].dom.extent)
    chunk = dense_chunk(units)
    axes = final.op.axis
    at, inner = axes[0], axes[-1]
    if chunk < units:
        at, inner = s[final].split(inner, factor=chunk)
    s[acc].compute_at(s[final], at)
    s[acc].tensorize(acc.op.axis[1], dense_s8_intrin(chunk, depth))
    return inner
