"""Tensor intrinsics of the int8 dense layers: ``aot_dense_s8`` (or, with packed
weights, ``aot_dense_packed_s8``) over a row of units.

The accumulators of a whole input row (one int32 per unit, on the stack; in
chunks of :func:`dense_chunk` units for wide layers) are one call of the
support header's ``aot_dense_s8`` (four units share each widened input
word; DSP and Helium paths chosen by the C preprocessor).  Units that have
no chunk that fits go one output at a time with conv2d's ``dot_s8``.

``dense_packed`` is the same call over weights stored in the layout of
:func:`pack_dense_weights` (the schedule's ``store_constant_as``): with the
DSP extension three instructions per four products instead of four.
"""

from __future__ import annotations

import numpy as np

from aot import te, tir
from aot.kernels.template import extent


def _dot_rows_intrin(units: int, depth: int, name: str, call):
    """``c[u] = sum_k a[k] * b[u, k]`` for ``units`` rows of ``b``, as the one
    extern call ``call(a, b, c)`` builds from the bound buffers."""
    a = te.placeholder((depth,), "int8", "a")
    b = te.placeholder((units, depth), "int8", "b")
    k = te.reduce_axis((0, depth), "k")
    c = te.compute((units,), lambda u: te.sum(a[k].astype("int32") * b[u, k].astype("int32"),
                                               axis=k), name="c")

    def intrin_func(ins, outs):
        return call(*ins, outs[0])
    binds = {t: tir.decl_buffer(t.shape, t.dtype, t.name, elem_offset=te.var(f"{t.name}_off"))
             for t in (a, b, c)}
    return te.decl_tensor_intrin(c.op, intrin_func, binds=binds, name=name)


def dense_s8_intrin(units: int, depth: int):
    """``c[u] = sum_k a[k] * b[u, k]`` for all units of one input row, as one
    call of ``aot_dense_s8`` (four units share each input word)."""
    return _dot_rows_intrin(units, depth, "dense_s8", lambda aa, bb, cc: tir.call_extern(
        "int32", "aot_dense_s8", cc.access_ptr("w"), aa.access_ptr("r"), bb.access_ptr("r"),
        units, depth))


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


def tensorize_dense_rows(s, final, stages, packed: bool = False):
    """Accumulate each input row's units in chunks of :func:`dense_chunk`
    (``aot_dense_s8`` per chunk, the epilogue right after it; ``packed``:
    ``aot_dense_packed_s8`` over the weights stored by
    :func:`pack_dense_weights`, only where ``stages`` has ``dense_packed``);
    only where :func:`rows_fit`.  Returns the epilogue's loop over the units
    of one chunk (for further scheduling)."""
    acc = stages["acc"]
    units, depth = extent(acc.shape[1]), extent(acc.op.reduce_axis[0].dom.extent)
    chunk = dense_chunk(units)
    axes = final.op.axis
    at, inner = axes[0], axes[-1]
    if chunk < units:
        at, inner = s[final].split(inner, factor=chunk)
    s[acc].compute_at(s[final], at)
    if packed:
        s.store_constant_as(stages["dense_packed"], pack_dense_weights)
        s[acc].tensorize(acc.op.axis[1], dense_packed_intrin(chunk, depth, units))
    else:
        s[acc].tensorize(acc.op.axis[1], dense_s8_intrin(chunk, depth))
    return inner


#: |x . w - 127 * sum(odd weights)| must stay below this for every int8 input:
#: the packed helper's sums are that value times 256 in an int32.
PACKED_BOUND = 1 << 23


def packable(weights) -> bool:
    """Whether int8 ``weights`` ``[units, depth]`` fit :func:`pack_dense_weights`:
    depth a multiple of four, no weight -128 (the odd byte stores
    ``w[odd] - [w[even] < 0]``), and for every unit and int8 input
    ``|x . w - 127 * sum(w[odd])| < 2^23`` (the sums are kept times 256)."""
    w = np.asarray(weights, np.int64)
    if w.ndim != 2 or w.shape[1] % 4 or w.size == 0 or w.min() < -127 or w.max() > 127:
        return False
    reach = 128 * np.abs(w).sum(axis=1) + 127 * np.abs(w[:, 1::2].sum(axis=1))
    return bool((reach < PACKED_BOUND).all())


def packs(stages) -> bool:
    """Whether the packed row intrinsic is worth offering: the weights are
    :func:`packable` (the compute rule's ``dense_packed`` stage) and a chunk
    has more than four units.  Its input widening (about 8 estimated M4
    cycles per input word) pays only when more than one block of four units
    shares it: with four or fewer, ``aot_dense_s8`` reads the input words
    directly (VWW's two-unit layer: 1,058 cycles more packed)."""
    return "dense_packed" in stages and dense_chunk(extent(stages["acc"].shape[1])) > 4


def pack_dense_weights(weights) -> np.ndarray:
    """The bytes ``aot_dense_packed_s8`` reads: per unit its row of ``depth``
    bytes, the odd byte of each pair ``(w[2j], w[2j+1])`` stored as
    ``w[2j+1] - [w[2j] < 0]``, so that the pair read as a little-endian signed
    halfword is exactly ``256 * w[2j+1] + w[2j]``; then one int32 per unit
    (little-endian bytes), ``127 * sum_j w[u, 2j+1]``.

    With the DSP extension the helper widens each input word ``x0..x3`` into
    ``p = (x1 - 127, x3 - 127)`` and ``q = (256 x0 - x1 + 127, 256 x2 - x3 + 127)``
    (both within int16 for every int8 input) and adds per weight word ``v``
    ``SMLAD(p, v) + SMLAD(q, SXTB16(v))``; per halfword pair that is
    ``(x1 - 127)(256 w1 + w0) + (256 x0 - x1 + 127) w0 = 256 (x0 w0 + x1 w1) - 256 * 127 w1``,
    so the sum is ``256 * (x . w - 127 * sum(w[odd]))`` and the result
    ``(sum >> 8) + 127 * sum(w[odd])``: exact while :func:`packable` holds."""
    w = np.asarray(weights, np.int64)
    packed = w.copy()
    packed[:, 1::2] -= w[:, 0::2] < 0
    corrections = (127 * w[:, 1::2].sum(axis=1)).astype("<i4").view(np.int8)
    return np.concatenate([packed.astype(np.int8).reshape(-1), corrections])


def dense_packed_intrin(units: int, depth: int, total_units: int):
    """``c[u] = sum_k a[k] * b[u, k]`` as one call of ``aot_dense_packed_s8``
    over ``b`` stored by :func:`pack_dense_weights` (``total_units`` rows):
    the call gets the byte distance from the chunk's first row to its
    corrections after the last row."""
    def call(aa, bb, cc):
        off = bb.elem_offset
        koff = total_units * depth + (off // depth) * 4 - off
        return tir.call_extern("int32", "aot_dense_packed_s8", cc.access_ptr("w"),
                               aa.access_ptr("r"), bb.access_ptr("r"), koff, units, depth)
    return _dot_rows_intrin(units, depth, "dense_packed", call)
