"""arm_cpu strategies: the generic schedules with the int8 arithmetic tensorized.

Targets with the ``arm_cpu`` key (any ``-mcpu=cortex-m*``) keep the generic
loop structure (output row by row, padded input rows in a stack buffer, a
row of accumulators, the requantizing epilogue) and replace the accumulation
by calls of ``static inline`` helpers of the support headers
(``include/aot_kernel_int8.h``, see :mod:`aot.kernels.support`):

* conv2d: the accumulators of a whole output row (or pixel) are one call of
  ``aot_conv_s8``, which blocks two pixels x two output channels so that each
  loaded word feeds two SMLADs (SXTB16 widens the even and odd bytes);
* depthwise_conv2d (multiplier 1): one call of ``aot_depthwise_s8`` per row,
  channels innermost, four channels per loaded word (SXTB16 + SMLABB/SMLATT);
* dense: the accumulators of all units are one ``aot_dense_s8`` (four units
  share each widened input word).

Every shape argument of those calls is a compile-time constant and the
helpers are always inlined, so GCC specializes the loops per layer.  The
helpers use the DSP instructions when ``__ARM_FEATURE_DSP`` is defined and
portable loops otherwise, so the same kernels run (and are tested) on the
host.  Groups that are not int8 x int8 -> int32 (float, int16x8, depthwise
multipliers above 1) keep the generic schedule.
"""

from __future__ import annotations

from aot import te, tir
from aot.kernels.conv2d import schedule_by_output_row
from aot.kernels.dense import schedule_dense_generic
from aot.kernels.depthwise_conv2d import schedule_depthwise_generic
from aot.kernels.registry import strategy


def _ext(d) -> int:
    return int(getattr(d, "value", d))


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
#: (1 KiB less stack).  A tuning knob.
WIDEN_INPUT = True


def conv_s8_intrin(pixels: int | None, out_channels: int, kernel: tuple[int, int],
                   channels: int, strides: tuple[int, int], dilation: tuple[int, int],
                   depthwise: bool, widen: bool = WIDEN_INPUT):
    """The accumulators of ``pixels`` output pixels of one output row (``None``:
    a single pixel, no pixel axis) over all output channels, as one call of
    ``aot_conv_s8`` (or ``aot_depthwise_s8``).  The input operand is the
    window of input rows (padded or not) with variable row and column strides."""
    KH, KW = kernel
    _, sw = strides
    dh, dw = dilation
    npix = pixels or 1
    rows = (KH - 1) * dh + 1
    cols = (npix - 1) * sw + (KW - 1) * dw + 1
    a = te.placeholder((rows, cols, channels), "int8", "a")
    kh = te.reduce_axis((0, KH), "kh")
    kw = te.reduce_axis((0, KW), "kw")
    if depthwise:
        b = te.placeholder((KH, KW, channels), "int8", "b")

        def value(w, o):
            return te.sum(a[kh * dh, w * sw + kw * dw, o].astype("int32")
                          * b[kh, kw, o].astype("int32"), axis=[kh, kw])
    else:
        b = te.placeholder((out_channels, KH, KW, channels), "int8", "b")
        rc = te.reduce_axis((0, channels), "rc")

        def value(w, o):
            return te.sum(a[kh * dh, w * sw + kw * dw, rc].astype("int32")
                          * b[o, kh, kw, rc].astype("int32"), axis=[kh, kw, rc])
    if pixels is None:
        c = te.compute((out_channels,), lambda o: value(0, o), name="c")
    else:
        c = te.compute((pixels, out_channels), value, name="c")

    def intrin_func(ins, outs):
        aa, bb = ins
        cc = outs[0]
        pix_stride = 0 if pixels is None else cc.strides[0]
        if depthwise:
            return tir.call_extern("int32", "aot_depthwise_s8", cc.access_ptr("w"), pix_stride,
                                   aa.access_ptr("r"), aa.strides[0], aa.strides[1],
                                   bb.access_ptr("r"), npix, channels, KH, KW, sw, dh, dw)
        return tir.call_extern("int32", "aot_conv_s8", cc.access_ptr("w"), pix_stride,
                               aa.access_ptr("r"), aa.strides[0], aa.strides[1],
                               bb.access_ptr("r"), npix, out_channels, KH, KW, channels,
                               sw, dh, dw, int(widen))
    binds = {
        a: tir.decl_buffer(a.shape, "int8", "a", strides=[te.var("a_rs"), te.var("a_cs"), 1],
                           elem_offset=te.var("a_off")),
        b: tir.decl_buffer(b.shape, "int8", "b", elem_offset=te.var("b_off")),
        c: tir.decl_buffer(c.shape, "int32", "c", elem_offset=te.var("c_off"),
                           strides=None if pixels is None else [te.var("c_ps"), 1]),
    }
    return te.decl_tensor_intrin(c.op, intrin_func, binds=binds,
                                 name="depthwise_s8" if depthwise else "conv_s8")


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


def _tensorize_conv(s, stages, level: int, depthwise: bool,
                    widen: bool = WIDEN_INPUT) -> bool:
    acc = stages.get("depthwise_s8" if depthwise else "dot_s8")
    if acc is None:
        return False
    _, _, W, O = (_ext(d) for d in acc.shape)
    red = acc.op.reduce_axis
    KH, KW = _ext(red[0].dom.extent), _ext(red[1].dom.extent)
    C = O if depthwise else _ext(red[2].dom.extent)
    axis = acc.op.axis[2] if level == 1 else acc.op.axis[3]
    intrin = conv_s8_intrin(W if level == 1 else None, O, (KH, KW), C,
                            tuple(acc.op.attrs["strides"]), tuple(acc.op.attrs["dilation"]),
                            depthwise, widen=widen)
    s[acc].tensorize(axis, intrin)
    return True


def _tensorize_dot(s, stages) -> None:
    acc = stages.get("dot_s8")
    if acc is None:
        return
    inner = acc.op.reduce_axis[-1]
    s[acc].tensorize(inner, dot_s8_intrin(int(inner.dom.extent.value)))


@strategy("conv2d", "arm_cpu")
def schedule_conv2d_arm(s, final, stages) -> None:
    """Output rows (or pixels) as in the generic strategy; all accumulators of
    the row are one ``aot_conv_s8`` (2x2 register blocking)."""
    level = schedule_by_output_row(s, final, stages)
    _tensorize_conv(s, stages, level, depthwise=False)


@strategy("depthwise_conv2d", "arm_cpu")
def schedule_depthwise_arm(s, final, stages) -> None:
    """Output rows (or pixels) as in the generic strategy; int8 with multiplier 1
    accumulates the row in one ``aot_depthwise_s8`` (four channels per word),
    anything else keeps the generic channel-innermost loops."""
    if "dot_s8" in stages:  # one input channel: computed as a convolution
        schedule_conv2d_arm(s, final, stages)
        return
    if "depthwise_s8" not in stages:
        schedule_depthwise_generic(s, final, stages)
        return
    level = schedule_by_output_row(s, final, stages)
    _tensorize_conv(s, stages, level, depthwise=True)


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


def tensorize_dense_rows(s, final, stages):
    """Accumulate each input row's units in chunks of :func:`dense_chunk`
    (``aot_dense_s8`` per chunk, the epilogue right after it).  Returns the
    epilogue's loop over the units of one chunk (for further scheduling), or
    None, leaving the schedule untouched, when the units have no chunk that
    fits."""
    acc = stages["acc"]
    units, depth = _ext(acc.shape[1]), _ext(acc.op.reduce_axis[0].dom.extent)
    chunk = dense_chunk(units)
    axes = final.op.axis
    if chunk == 0 or (chunk < units and (len(axes) != 2 or _ext(axes[1].dom.extent) != units)):
        return None
    at, inner = axes[0], axes[-1]
    if chunk < units:
        at, inner = s[final].split(inner, factor=chunk)
    s[acc].compute_at(s[final], at)
    s[acc].tensorize(acc.op.axis[1], dense_s8_intrin(chunk, depth))
    return inner


@strategy("dense", "arm_cpu")
def schedule_dense_arm(s, final, stages) -> None:
    """int8: the accumulators of a whole input row (one int32 per unit, on the
    stack; in chunks of :func:`dense_chunk` units for wide layers) are one
    ``aot_dense_s8`` per chunk, then the epilogue requantizes them; units with
    no chunk that fits go one output at a time (one ``aot_dot_s8`` each).
    Other types keep the generic schedule."""
    acc = stages.get("dot_s8")
    if acc is None or tensorize_dense_rows(s, final, stages) is None:
        schedule_dense_generic(s, final, stages)
        _tensorize_dot(s, stages)
