"""Helium (MVE) inner loops of the arm_cpu int8 kernels, for Armv8.1-M cores.

On a target with Helium (``Target.has_mve``: Cortex-M55, Cortex-M85), GCC
defines ``__ARM_FEATURE_MVE``; the support headers
(:mod:`aot.kernels.support`) then use ``include/aot_kernel_mve.h``, so the
dot product helpers, which every arm_cpu conv2d and dense kernel reaches
through tensorize, run on 128-bit vectors instead of SMLAD pairs:

* one ``VMLADAVA.S8`` multiplies 16 int8 pairs and adds all products to a
  32-bit scalar accumulator (wrapping, as the portable loops do);
* conv2d keeps its 2 pixel x 2 output channel blocks: four vector loads feed
  four VMLADAVAs, 64 multiply-accumulates for 8 instructions; no widening
  buffer is needed, so the conv helpers use no stack for it;
* kernel rows shorter than a vector (few channels, e.g. KWS's first layer
  with C = 1): each pixel's patch is first copied into a small int8 im2col
  buffer (512 bytes of stack), so the dot products run in full vectors;
* dense: four units share each loaded input vector (five loads, four
  VMLADAVAs per 16 inputs);
* lengths that are not a multiple of 16 end with one tail-predicated step
  (``VCTP.8``): the lanes past the end are neither loaded nor added, so no
  buffer is read beyond its last byte;
* depthwise (multiplier 1): MVE has no lane-wise integer multiply-accumulate,
  so eight channels x two pixels per step widen int8 to int32 lanes
  (``VLDRB.S32``) and use a VMUL and a VADD per four products; the weights
  are loaded once for both pixels; fused with the epilogue
  (``aot_mve_depthwise_requant_s8``, :mod:`aot.kernels.conv2d.fuse`), four
  channels x two pixels, each input column loaded once for both pixels and
  the requantization in vector registers (VRMULH for SMMLAR).

That choice is made by the C preprocessor of the core the firmware is built
for, so one generated kernel runs on every Cortex-M.  The schedule changes
only for targets with the ``arm_mve`` key (the qemu/mps3-an547 board record
lists it first): there the conv2d and depthwise templates
(:mod:`aot.kernels.conv2d.schedules`) default to the arm_cpu schedule plus
the requantizing epilogue of each output row (or pixel) as one call of
``aot_requant_row_s8`` (this module's intrinsic, when the epilogue has the
plain one-rounding form), which Helium computes four outputs per vector
step, exactly as the scalar ``aot_requant`` + ``aot_clamp_s8``.  The
``arm_cpu`` templates make the same call; with the DSP extension it runs
``aot_requant_pairs_s8`` (two outputs per step, out of line), elsewhere the
scalar loop.
"""

from __future__ import annotations

from aot import te, tir
from aot.kernels.template import extent
from aot.tir import expr as E


def requant_pattern(final):
    """``(acc, bias, table, lo, hi)`` when ``final`` is exactly the one-rounding
    int8 epilogue ``clamp_s8(requant(acc + bias[c], table[c, 0..3]), lo, hi)``
    over its last axis (:func:`aot.kernels.conv2d.compute._fast_epilogue` with a
    per-channel table and the output offset folded), else None."""
    axes = [iv.var for iv in final.op.axis]
    body = final.op.body
    if not (isinstance(body, E.Cast) and body.dtype == "int8"):
        return None
    clamp = body.value
    if not (isinstance(clamp, E.Call) and clamp.name == "aot_clamp_s8"
            and all(isinstance(a, E.IntImm) for a in clamp.args[1:])):
        return None
    req = clamp.args[0]
    if not (isinstance(req, E.Call) and req.name == "aot_requant" and len(req.args) == 5):
        return None
    add, rows = req.args[0], req.args[1:]
    if not (isinstance(add, E.Binary) and add.op == "add"
            and isinstance(add.a, E.ProducerLoad) and isinstance(add.b, E.ProducerLoad)):
        return None
    acc, bias, c = add.a, add.b, axes[-1]
    if not (list(acc.indices) == axes and list(bias.indices) == [c]
            and acc.dtype == bias.dtype == "int32"):
        return None
    table = rows[0].tensor if isinstance(rows[0], E.ProducerLoad) else None
    for j, r in enumerate(rows):
        if not (isinstance(r, E.ProducerLoad) and r.tensor is table
                and r.indices[0] is c and E.is_const_int(r.indices[1], j)):
            return None
    return acc.tensor, bias.tensor, table, clamp.args[1].value, clamp.args[2].value


def requant_row_intrin(pixels: int | None, channels: int, lo: int, hi: int):
    """``y[p, c] = clamp_s8(requant(acc[p, c] + bias[c], table[c, :]), lo, hi)``
    over ``pixels`` pixels (``None``: one pixel, no pixel axis) of ``channels``
    outputs, as one call of ``aot_requant_row_s8`` (Helium: four outputs per
    vector step; DSP: two, the whole row in one out-of-line call; elsewhere
    the scalar helpers in a loop)."""
    shape = (channels,) if pixels is None else (pixels, channels)
    acc = te.placeholder(shape, "int32", "acc")
    bias = te.placeholder((channels,), "int32", "bias")
    table = te.placeholder((channels, 4), "int32", "table")

    def value(a, c):
        q = te.call_pure("int32", "aot_requant", a + bias[c],
                         *[table[c, j] for j in range(4)])
        return te.call_pure("int32", "aot_clamp_s8", q, lo, hi).astype("int8")
    if pixels is None:
        y = te.compute(shape, lambda c: value(acc[c], c), name="y")
    else:
        y = te.compute(shape, lambda p, c: value(acc[p, c], c), name="y")

    def intrin_func(ins, outs):
        a, b, t = ins
        yy = outs[0]
        y_ps, acc_ps = (0, 0) if pixels is None else (yy.strides[0], a.strides[0])
        return tir.call_extern("int32", "aot_requant_row_s8", yy.access_ptr("w"), y_ps,
                               a.access_ptr("r"), acc_ps, b.access_ptr("r"),
                               t.access_ptr("r"), pixels or 1, channels, lo, hi)
    binds = {
        acc: tir.decl_buffer(shape, "int32", "acc", elem_offset=te.var("acc_off"),
                             strides=None if pixels is None else [te.var("acc_ps"), 1]),
        y: tir.decl_buffer(shape, "int8", "y", elem_offset=te.var("y_off"),
                           strides=None if pixels is None else [te.var("y_ps"), 1]),
        **{t: tir.decl_buffer(t.shape, t.dtype, t.name, elem_offset=te.var(f"{t.name}_off"))
           for t in (bias, table)},
    }
    return te.decl_tensor_intrin(y.op, intrin_func, binds=binds, name="requant_row_s8")


def tensorize_epilogue(s, final, whole_row: bool) -> None:
    """The requantizing epilogue of each output row (``whole_row``, when the
    accumulators are a row: one call instead of one per pixel, about 34
    estimated M4 cycles each against 17 per pixel inside the call) or pixel
    as one helper call, when it has the plain one-rounding form."""
    found = requant_pattern(final)
    if found is None:
        return
    _, _, _, lo, hi = found
    w, c = final.op.axis[-2], final.op.axis[-1]
    channels = extent(c.dom.extent)
    if whole_row:
        s[final].tensorize(w, requant_row_intrin(extent(w.dom.extent), channels, lo, hi))
    else:
        s[final].tensorize(c, requant_row_intrin(None, channels, lo, hi))
