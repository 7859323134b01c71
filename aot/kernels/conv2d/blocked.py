"""Blocked int8 dot products as tensor intrinsics: P pixels x O output channels.

:func:`block_s8_intrin` declares the accumulators of ``npix`` pixels x ``O``
output channels over one tap's input channels,
``c[p, o] += sum_k a[p * sw, k] * b[o, 0, 0, k]``, and lowers it to one
call of ``aot_block_row_s8`` (``include/aot_kernel_blocked.h``; its reset
to ``aot_block_reset_s32``), which computes it in blocks of P pixels x O
channels (``aot_block_s8``; a last partial block one pixel at a time):
with the DSP extension each loaded word of the P input pixels and of the
O weight rows is sign extended once and feeds several SMLADs, and the
P x O sums stay in registers over the reduction.  The weights operand is
4-D (``O x 1 x 1 x K`` of the OHWI weights) so that it lines up with the
trailing dimensions of the weight tensor, as tensorize needs.

:func:`tensorize_block` applies it to a conv2d accumulation whose loops
end in ``(pixels, channel tile, input channels)``: the auto tuner's
``block`` sketch (:mod:`aot.tune.auto.sketch`) makes that nest.
"""

from __future__ import annotations

from aot import te, tir
from aot.kernels.template import extent
from aot.te.schedule import ScheduleError

#: The block shapes (pixels, output channels) the helper is meant for: up to
#: eight sums, so that they, the widened inputs and the pointers fit the
#: Cortex-M's registers.
BLOCK_SHAPES = ((1, 2), (1, 4), (2, 1), (2, 2), (2, 4), (4, 1), (4, 2))


def block_s8_intrin(npix: int, pixels: int, channels: int, length: int, stride: int = 1,
                    steps: int = 1, taps: int = 1):
    """``npix`` pixels x ``channels`` output channels over ``length`` reduction
    values in blocks of ``pixels`` pixels, the input pixels ``stride`` columns
    apart; ``steps`` 4-byte steps per iteration of the helper's reduction loop
    (1 or 2).  ``taps`` > 1 also covers that many adjacent kernel columns
    (dilation 1): input columns and OHWI weight rows hold them contiguously, so
    the helper reduces over ``taps * length`` values in one go."""
    if (pixels, channels) not in BLOCK_SHAPES:
        raise ScheduleError(f"no blocked helper for {pixels} x {channels} "
                         f"(shapes: {BLOCK_SHAPES})")
    if steps not in (1, 2):
        raise ScheduleError(f"steps must be 1 or 2, not {steps}")
    a = te.placeholder(((npix - 1) * stride + taps, length), "int8", "a")
    b = te.placeholder((channels, 1, taps, length), "int8", "b")
    k = te.reduce_axis((0, length), "k")
    if taps == 1:
        c = te.compute((npix, channels), lambda p, o: te.sum(
            a[p * stride, k].astype("int32") * b[o, 0, 0, k].astype("int32"), axis=k),
            name="c")
    else:
        t = te.reduce_axis((0, taps), "t")
        c = te.compute((npix, channels), lambda p, o: te.sum(
            a[p * stride + t, k].astype("int32") * b[o, 0, t, k].astype("int32"),
            axis=[t, k]), name="c")

    def intrin_func(ins, outs):
        aa, bb = ins
        cc = outs[0]
        reset = tir.call_extern("int32", "aot_block_reset_s32", cc.access_ptr("w"),
                                cc.strides[0], npix, channels)
        update = tir.call_extern("int32", "aot_block_row_s8", cc.access_ptr("rw"),
                                 cc.strides[0], aa.access_ptr("r"), aa.strides[0] * stride,
                                 bb.access_ptr("r"), bb.strides[0], npix, pixels, channels,
                                 taps * length, steps)
        return None, reset, update
    # several taps: the columns must follow each other (constant strides, checked
    # by tensorize against the region's)
    a_cols = te.var("a_ps") if taps == 1 else length
    b_cols = te.var("b_ws") if taps == 1 else length
    binds = {
        a: tir.decl_buffer(a.shape, "int8", "a", strides=[a_cols, 1],
                           elem_offset=te.var("a_off")),
        b: tir.decl_buffer(b.shape, "int8", "b", elem_offset=te.var("b_off"),
                           strides=[te.var("b_os"), te.var("b_hs"), b_cols, 1]),
        c: tir.decl_buffer(c.shape, "int32", "c", elem_offset=te.var("c_off"),
                           strides=[te.var("c_ps"), 1]),
    }
    return te.decl_tensor_intrin(c.op, intrin_func, binds=binds,
                                 name=f"block_s8_{npix}_{pixels}x{channels}_{taps}")


def tensorize_block(s, stages, pixel_axis, npix: int, pixels: int, channels: int,
                    steps: int = 1, fold_kw: bool = False) -> None:
    """Tensorize the conv2d accumulation from its pixel loop ``pixel_axis`` (of
    ``npix`` pixels; loops pixels, channel tile, input channels innermost, or
    with ``fold_kw`` pixels, channel tile, kernel columns, input channels)."""
    acc = stages["dot_s8"]
    _, kw, rc = acc.op.reduce_axis
    _, sw = acc.op.attrs["strides"]
    intrin = block_s8_intrin(npix, pixels, channels, extent(rc.dom.extent), sw, steps,
                             taps=extent(kw.dom.extent) if fold_kw else 1)
    s[acc].tensorize(pixel_axis, intrin)
