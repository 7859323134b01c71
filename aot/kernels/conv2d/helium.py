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
  (``aot_mve_depthwise_requant_s8``, :mod:`aot.kernels.depthwise_conv2d.fuse`), four
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

from dataclasses import dataclass

from aot import te, tir
from aot.kernels.template import extent
from aot.te.tensor import ComputeOp
from aot.tir import expr as E
from aot.tir.functor import Mutator, substitute


def _at_output(indices, axes) -> bool:
    """``indices`` read the element of the output's iteration ``axes``: each
    index the axis's variable, or 0 on an axis of extent 1."""
    return len(indices) == len(axes) and all(
        i is iv.var or (E.is_const_int(i, 0) and E.is_const_int(iv.dom.extent, 1))
        for i, iv in zip(indices, axes))


def _requant_value(body, axes):
    """``(acc, bias, table, lo, hi)`` when ``body`` is exactly the one-rounding
    int8 epilogue ``clamp_s8(requant(acc + bias[c], table[c, 0..3]), lo, hi)``
    of the accumulators at the output's iteration ``axes`` (``c`` the last)."""
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
    acc, bias, c = add.a, add.b, axes[-1].var
    if not (_at_output(acc.indices, axes) and list(bias.indices) == [c]
            and acc.dtype == bias.dtype == "int32"):
        return None
    table = rows[0].tensor if isinstance(rows[0], E.ProducerLoad) else None
    for j, r in enumerate(rows):
        if not (isinstance(r, E.ProducerLoad) and r.tensor is table
                and r.indices[0] is c and E.is_const_int(r.indices[1], j)):
            return None
    return acc.tensor, bias.tensor, table, clamp.args[1].value, clamp.args[2].value


def requant_pattern(final):
    """``(acc, bias, table, lo, hi)`` when ``final`` is exactly the one-rounding
    int8 epilogue ``clamp_s8(requant(acc + bias[c], table[c, 0..3]), lo, hi)``
    over its last axis (:func:`aot.kernels.conv2d.compute._fast_epilogue` with a
    per-channel table and the output offset folded), else None."""
    return _requant_value(final.op.body, final.op.axis)


@dataclass(frozen=True)
class ResidualAdd:
    """The epilogue of a convolution with TFLM's int8 ADD of a residual input
    fused (:mod:`aot.kernels.elementwise`): the convolution's output ``q``
    (:func:`requant_pattern`'s form, clamped to ``[lo1, hi1]``) and the
    residual ``res`` (read at the output's indices) each as
    ``mbqm(shl32(v + off, ls), m, s)``, summed, then
    ``clamp(mbqm(sum, out_m, out_s) + out_off, lo, hi)``.  ``conv`` and
    ``resid`` are ``(off, m, s)``; ``body`` is ``final``'s expression with
    the convolution's output stage ``inlined`` (as lowering inlines it)."""

    body: object
    inlined: object
    acc: object
    bias: object
    table: object
    res: object
    lo1: int
    hi1: int
    conv: tuple
    resid: tuple
    ls: int
    out_m: int
    out_s: int
    out_off: int
    lo: int
    hi: int


def _offset(v):
    """``(v', k)`` for ``v = v' + k`` with a constant ``k`` (0 when there is none)."""
    if isinstance(v, E.Binary) and v.op in ("add", "sub") and isinstance(v.b, E.IntImm):
        return v.a, v.b.value if v.op == "add" else -v.b.value
    return v, 0


def _add_term(e):
    """``(v, off, ls, m, s)`` for ``mbqm(shl32(int32(v) + off, ls), m, s)``."""
    if not (isinstance(e, E.Call) and e.name == "aot_mbqm" and len(e.args) == 3
            and all(isinstance(a, E.IntImm) for a in e.args[1:])):
        return None
    sh = e.args[0]
    if not (isinstance(sh, E.Call) and sh.name == "aot_shl32" and len(sh.args) == 2
            and isinstance(sh.args[1], E.IntImm)):
        return None
    v, off = _offset(sh.args[0])
    if not (isinstance(v, E.Cast) and v.dtype == "int32"):
        return None
    return v.value, off, sh.args[1].value, e.args[1].value, e.args[2].value


def residual_pattern(final) -> ResidualAdd | None:
    """The :class:`ResidualAdd` ``final`` computes over its last axis, else None."""
    axes = final.op.axis
    body = final.op.body
    if not (isinstance(body, E.Cast) and body.dtype == "int8"):
        return None
    mn = body.value
    if not (isinstance(mn, E.Binary) and mn.op == "min" and isinstance(mn.b, E.IntImm)):
        return None
    mx = mn.a
    if not (isinstance(mx, E.Binary) and mx.op == "max" and isinstance(mx.b, E.IntImm)):
        return None
    lo, hi = mx.b.value, mn.b.value
    v, out_off = _offset(mx.a)
    if not (-128 <= lo <= hi <= 127 and isinstance(v, E.Call) and v.name == "aot_mbqm"
            and len(v.args) == 3 and all(isinstance(a, E.IntImm) for a in v.args[1:])):
        return None
    total = v.args[0]
    if not (isinstance(total, E.Binary) and total.op == "add"):
        return None
    terms = [_add_term(total.a), _add_term(total.b)]
    if None in terms or terms[0][2] != terms[1][2]:
        return None
    conv = resid = None
    for x, off, _, m, s in terms:
        if not (isinstance(x, E.ProducerLoad) and x.dtype == "int8"
                and _at_output(x.indices, axes)):
            return None
        op = x.tensor.op
        inlined = _inline(x) if isinstance(op, ComputeOp) else None
        found = None if inlined is None else _requant_value(inlined, axes)
        if found is not None:
            conv = (op, found, (off, m, s))
        else:
            resid = (x.tensor, (off, m, s))
    if conv is None or resid is None:
        return None
    acc, bias, table, lo1, hi1 = conv[1]
    full = _InlineOne(conv[0]).expr(body)
    return ResidualAdd(full, conv[0], acc, bias, table, resid[0], lo1, hi1, conv[2], resid[1],
                       terms[0][2], v.args[1].value, v.args[2].value, out_off, lo, hi)


def _inline(load):
    """The body of ``load``'s compute stage at the load's indices."""
    op = load.tensor.op
    return substitute(op.body, {iv.var: i for iv, i in zip(op.axis, load.indices)})


class _InlineOne(Mutator):
    """Inline the loads of one compute stage (``op``)."""

    def __init__(self, op):
        self.op = op

    def visit_ProducerLoad(self, e):
        return _inline(e) if e.tensor.op is self.op else e


class _Retarget(Mutator):
    """The epilogue's expression on the intrinsic's placeholders: each load of
    a tensor in ``tensors`` becomes a load of its placeholder at the trailing
    indices, the stage's last two axes renamed to the intrinsic's."""

    def __init__(self, tensors: dict, vmap: dict):
        self.tensors, self.vmap = tensors, vmap

    def visit_ProducerLoad(self, e):
        ph = self.tensors[id(e.tensor.op)]
        idx = [substitute(i, self.vmap) for i in e.indices]
        return E.ProducerLoad(ph, idx[len(idx) - len(ph.shape):])


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
    return te.decl_tensor_intrin(y.op, intrin_func, binds=_binds(pixels, (acc, y), (bias, table)),
                                 name="requant_row_s8")


def _binds(pixels, rows, channels) -> dict:
    """Buffers of a row intrinsic: ``rows`` (per pixel and channel) with a
    variable pixel stride unless ``pixels`` is None, ``channels`` compact;
    every one at a variable offset."""
    out = {t: tir.decl_buffer(t.shape, t.dtype, t.name, elem_offset=te.var(f"{t.name}_off"),
                              strides=None if pixels is None else [te.var(f"{t.name}_ps"), 1])
           for t in rows}
    out.update({t: tir.decl_buffer(t.shape, t.dtype, t.name,
                                   elem_offset=te.var(f"{t.name}_off")) for t in channels})
    return out


def residual_row_intrin(final, pat: ResidualAdd, pixels: int | None, channels: int):
    """``final``'s epilogue (a :class:`ResidualAdd`) over ``pixels`` pixels
    (``None``: one pixel, no pixel axis) of ``channels`` outputs, as one call
    of ``aot_requant_add_row_s8`` (Helium: four outputs per vector step).
    The intrinsic computes ``final``'s own expression on its placeholders,
    so it matches operand for operand whichever side of the add the
    convolution is on."""
    shape = (channels,) if pixels is None else (pixels, channels)
    acc = te.placeholder(shape, "int32", "acc")
    res = te.placeholder(shape, "int8", "res")
    bias = te.placeholder((channels,), "int32", "bias")
    table = te.placeholder((channels, 4), "int32", "table")
    tensors = {id(pat.acc.op): acc, id(pat.res.op): res, id(pat.bias.op): bias,
               id(pat.table.op): table}
    axes = [iv.var for iv in final.op.axis]

    def value(*iv):
        return _Retarget(tensors, dict(zip(axes[len(axes) - len(iv):], iv))).expr(pat.body)
    y = te.compute(shape, value, name="y")

    def intrin_func(ins, outs):
        b = {buf.name: buf for buf in ins}
        yy = outs[0]
        y_ps, acc_ps, res_ps = (0, 0, 0) if pixels is None else (
            yy.strides[0], b["acc"].strides[0], b["res"].strides[0])
        return tir.call_extern(
            "int32", "aot_requant_add_row_s8", yy.access_ptr("w"), y_ps,
            b["acc"].access_ptr("r"), acc_ps, b["bias"].access_ptr("r"),
            b["table"].access_ptr("r"), b["res"].access_ptr("r"), res_ps, pixels or 1, channels,
            pat.lo1, pat.hi1, *pat.conv, *pat.resid, pat.ls, pat.out_m, pat.out_s, pat.out_off,
            pat.lo, pat.hi)
    return te.decl_tensor_intrin(y.op, intrin_func, binds=_binds(pixels, (acc, res, y),
                                                                 (bias, table)),
                                 name="requant_add_row_s8")


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


def tensorize_residual(s, final, whole_row: bool) -> None:
    """The epilogue of each output row (``whole_row``) or pixel with a fused
    residual add (:func:`residual_pattern`) as one ``aot_requant_add_row_s8``
    call, when it has that form."""
    pat = residual_pattern(final)
    if pat is None or s[pat.inlined].attach_type != "inline":
        return
    w, c = final.op.axis[-2], final.op.axis[-1]
    channels = extent(c.dom.extent)
    if whole_row:
        s[final].tensorize(w, residual_row_intrin(final, pat, extent(w.dom.extent), channels))
    else:
        s[final].tensorize(c, residual_row_intrin(final, pat, None, channels))
