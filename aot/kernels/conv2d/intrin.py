"""Tensor intrinsics of the int8 convolutions: calls of the support header's helpers.

The int8 x int8 -> int32 accumulations of conv2d (and dense's dot products)
are replaced by calls of ``static inline`` helpers of
``include/aot_kernel_int8.h`` (portable C, the DSP extension's SMLAD/SXTB16
where ``__ARM_FEATURE_DSP`` is defined, Helium through
``include/aot_kernel_mve.h``):

* ``conv_s8``: the accumulators of a whole output row (or pixel) are one
  call of ``aot_conv_s8``, which blocks two pixels x two output channels so
  that each loaded word feeds two SMLADs (after lowering, a call whose
  shape takes a widened DSP path names that path's entry point instead:
  :func:`aot.kernels.conv2d.paths.name_conv_paths`);
* ``dot_s8``: one ``aot_dot_s8`` per output value (a plain int8 dot product).

Every shape argument is a compile-time constant and the helpers are always
inlined, so GCC specializes the loops per layer; the same kernels run (and
are tested) on the host.  Depthwise's row intrinsic (``depthwise_s8``) is
:mod:`aot.kernels.depthwise_conv2d.intrin`, built on :func:`row_window` and
:func:`row_binds`.
"""

from __future__ import annotations

from aot import te, tir
from aot.kernels.conv2d.paths import CONV_CALL
from aot.kernels.template import extent


def dot_s8_intrin(length: int):
    """``c += sum_k a[k] * b[k]`` over ``length`` int8 values (int32 result)."""
    a = te.placeholder((length,), "int8", "a")
    b = te.placeholder((length,), "int8", "b")
    k = te.reduce_axis((0, length), "k")
    c = te.compute((), lambda: te.sum(a[k].astype("int32") * b[k].astype("int32"), axis=k),
                   name="c")

    def intrin_func(ins, outs):
        aa, bb = ins
        cc = outs[0]
        reset = tir.call_extern("int32", "aot_acc_reset", cc.access_ptr("w"))
        update = tir.call_extern("int32", "aot_dot_s8", cc.access_ptr("rw"),
                                 aa.access_ptr("r"), bb.access_ptr("r"), length)
        return None, reset, update
    binds = {t: tir.decl_buffer(t.shape, t.dtype, t.name, elem_offset=te.var("off"),
                                offset_factor=1) for t in (a, b)}
    return te.decl_tensor_intrin(c.op, intrin_func, binds=binds, name="dot_s8")


#: Widen each chunk of input pixels once into a stack buffer before the 2x2
#: blocks read it (aot_conv_wide_s8); False keeps re-widening per channel pair
#: (1 KiB less stack).  The library's value of the ``widen_input`` knob.
WIDEN_INPUT = True


def row_window(pixels: int | None, kernel: tuple[int, int], channels: int,
               strides: tuple[int, int], dilation: tuple[int, int]):
    """The input operand of a row intrinsic over ``pixels`` output pixels
    (``None``: one) and its two kernel reduction axes: the window of input
    rows (padded or not) the row reads."""
    KH, KW = kernel
    _, sw = strides
    dh, dw = dilation
    rows = (KH - 1) * dh + 1
    cols = ((pixels or 1) - 1) * sw + (KW - 1) * dw + 1
    a = te.placeholder((rows, cols, channels), "int8", "a")
    return a, te.reduce_axis((0, KH), "kh"), te.reduce_axis((0, KW), "kw")


def row_binds(a, b, c, pixels: int | None) -> dict:
    """The buffers of a row intrinsic's window ``a`` (variable row and column
    strides), weights ``b`` and accumulators ``c`` (a pixel stride unless
    ``pixels`` is ``None``)."""
    return {
        a: tir.decl_buffer(a.shape, "int8", "a", strides=[te.var("a_rs"), te.var("a_cs"), 1],
                           elem_offset=te.var("a_off")),
        b: tir.decl_buffer(b.shape, "int8", "b", elem_offset=te.var("b_off")),
        c: tir.decl_buffer(c.shape, "int32", "c", elem_offset=te.var("c_off"),
                           strides=None if pixels is None else [te.var("c_ps"), 1]),
    }


def row_accumulators(pixels: int | None, out_channels: int, value):
    """The accumulators ``c`` of a row intrinsic: ``value(w, o)`` for each of
    ``pixels`` pixels (``None``: one pixel, no pixel axis) and output channel."""
    if pixels is None:
        return te.compute((out_channels,), lambda o: value(0, o), name="c")
    return te.compute((pixels, out_channels), value, name="c")


def conv_s8_intrin(pixels: int | None, out_channels: int, kernel: tuple[int, int],
                   channels: int, strides: tuple[int, int], dilation: tuple[int, int],
                   widen: bool = WIDEN_INPUT):
    """The accumulators of ``pixels`` output pixels of one output row (``None``:
    a single pixel, no pixel axis) over all output channels, as one call of
    ``aot_conv_s8``.  The input operand is the window of input rows (padded or
    not) with variable row and column strides."""
    KH, KW = kernel
    _, sw = strides
    dh, dw = dilation
    npix = pixels or 1
    a, kh, kw = row_window(pixels, kernel, channels, strides, dilation)
    b = te.placeholder((out_channels, KH, KW, channels), "int8", "b")
    rc = te.reduce_axis((0, channels), "rc")

    def value(w, o):
        return te.sum(a[kh * dh, w * sw + kw * dw, rc].astype("int32")
                      * b[o, kh, kw, rc].astype("int32"), axis=[kh, kw, rc])
    c = row_accumulators(pixels, out_channels, value)

    def intrin_func(ins, outs):
        aa, bb = ins
        cc = outs[0]
        pix_stride = 0 if pixels is None else cc.strides[0]
        return tir.call_extern("int32", CONV_CALL, cc.access_ptr("w"), pix_stride,
                               aa.access_ptr("r"), aa.strides[0], aa.strides[1],
                               bb.access_ptr("r"), npix, out_channels, KH, KW, channels,
                               sw, dh, dw, int(widen))
    return te.decl_tensor_intrin(c.op, intrin_func, binds=row_binds(a, b, c, pixels),
                                 name="conv_s8")


def row_geometry(acc):
    """``(W, O, (KH, KW), strides, dilation)`` of a row intrinsic's
    accumulation stage ``acc`` (NHWO, reducing over the taps first)."""
    _, _, W, O = (extent(d) for d in acc.shape)
    red = acc.op.reduce_axis
    kernel = (extent(red[0].dom.extent), extent(red[1].dom.extent))
    return W, O, kernel, tuple(acc.op.attrs["strides"]), tuple(acc.op.attrs["dilation"])


def row_axis(acc, level: int):
    """The axis a row intrinsic tensorizes: the pixels (``level`` 1, a whole
    output row) or the output channels (``level`` 2, one pixel)."""
    return acc.op.axis[2] if level == 1 else acc.op.axis[3]


def tensorize_conv(s, stages, level: int, widen: bool = WIDEN_INPUT) -> bool:
    acc = stages.get("dot_s8")
    if acc is None:
        return False
    W, O, kernel, strides, dilation = row_geometry(acc)
    C = extent(acc.op.reduce_axis[2].dom.extent)
    intrin = conv_s8_intrin(W if level == 1 else None, O, kernel, C, strides, dilation,
                            widen=widen)
    s[acc].tensorize(row_axis(acc, level), intrin)
    return True


def tensorize_dot(s, stages) -> None:
    acc = stages.get("dot_s8")
    if acc is None:
        return
    inner = acc.op.reduce_axis[-1]
    s[acc].tensorize(inner, dot_s8_intrin(int(inner.dom.extent.value)))
