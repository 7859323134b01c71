"""The tensor intrinsic of the library's depthwise rows (multiplier 1): the
accumulators of an output row (or pixel) as one call of ``aot_depthwise_s8``
(``include/aot_depthwise.h``), channels innermost, four channels per loaded
word.

The window operand, the buffers and the axes are those of conv2d's row
intrinsic (:mod:`aot.kernels.conv2d.intrin`); only the reduction (one input
channel per output channel, no channel reduction) and the call differ.
"""

from __future__ import annotations

from aot import te, tir
from aot.kernels.conv2d.intrin import (row_accumulators, row_axis, row_binds, row_geometry,
                                       row_window)

#: The row helper the intrinsic calls (and :mod:`.fuse` fuses with its epilogue).
ACC_CALL = "aot_depthwise_s8"


def depthwise_s8_intrin(pixels: int | None, channels: int, kernel: tuple[int, int],
                        strides: tuple[int, int], dilation: tuple[int, int]):
    """The accumulators of ``pixels`` output pixels of one output row (``None``:
    a single pixel, no pixel axis) over all ``channels``, as one call of
    ``aot_depthwise_s8``.  The input operand is the window of input rows
    (padded or not) with variable row and column strides."""
    KH, KW = kernel
    _, sw = strides
    dh, dw = dilation
    npix = pixels or 1
    a, kh, kw = row_window(pixels, kernel, channels, strides, dilation)
    b = te.placeholder((KH, KW, channels), "int8", "b")

    def value(w, o):
        return te.sum(a[kh * dh, w * sw + kw * dw, o].astype("int32")
                      * b[kh, kw, o].astype("int32"), axis=[kh, kw])
    c = row_accumulators(pixels, channels, value)

    def intrin_func(ins, outs):
        aa, bb = ins
        cc = outs[0]
        pix_stride = 0 if pixels is None else cc.strides[0]
        return tir.call_extern("int32", ACC_CALL, cc.access_ptr("w"), pix_stride,
                               aa.access_ptr("r"), aa.strides[0], aa.strides[1],
                               bb.access_ptr("r"), npix, channels, KH, KW, sw, dh, dw)
    return te.decl_tensor_intrin(c.op, intrin_func, binds=row_binds(a, b, c, pixels),
                                 name="depthwise_s8")


def tensorize_depthwise(s, stages, level: int) -> None:
    """Tensorize the ``depthwise_s8`` accumulation per output row (``level``
    1) or pixel (2) into :func:`depthwise_s8_intrin`."""
    acc = stages["depthwise_s8"]
    W, O, kernel, strides, dilation = row_geometry(acc)
    s[acc].tensorize(row_axis(acc, level),
                     depthwise_s8_intrin(W if level == 1 else None, O, kernel, strides,
                                         dilation))
