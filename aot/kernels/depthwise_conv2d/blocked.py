"""Blocked depthwise rows as a tensor intrinsic: kernel columns paired for SMLAD.

:func:`dwblock_intrin` declares the accumulators of one output row of a
depthwise convolution (multiplier 1, dilation 1), ``c[p, o] = sum_{kh, kw}
a[kh, p * sw + kw, o] * b[kh, kw, o]``, and lowers it to one call of
``aot_dwblock_s8`` (``include/aot_kernel_dwblock.h``).  The library's
depthwise helper pairs four channels of a word (SXTB16) and multiplies them
one halfword at a time (SMLABB/SMLATT: a MAC per instruction); this one pairs
two kernel columns of the same channel in a word, so that SMLAD does two MACs:

* the call widens its input rows once into a channel-planar stack buffer
  (int16, adjacent columns adjacent), ``channels`` at a time (within
  :data:`WIDE_MAX` values: the cache stage of the input);
* the weights are packed at compile time (:func:`pack_dwblock`, through
  :meth:`aot.te.Schedule.store_constant_as`): per channel and kernel row the
  int16 pairs of its taps for a pixel at an even column and at an odd one;
* per channel, blocks of ``pixels`` output pixels keep their sums in
  registers; a 3-column kernel row costs a pixel two multiplies.

:func:`tensorize_dwblock` applies it to the depthwise accumulation computed
per output row; with ``fuse`` each row's call and its ``aot_requant_row_s8``
epilogue become one ``aot_dwblock_requant_s8`` that requantizes from
registers with the rows of :func:`aot.kernels.conv2d.fuse.fused_requant_rows`
(the rewrite of :func:`aot.kernels.conv2d.fuse.fuse_row_calls`).  The auto
tuner's ``dwblock`` sketch (:mod:`aot.tune.auto.sketch`) makes that schedule.
"""

from __future__ import annotations

import numpy as np

from aot import te, tir
from aot.kernels.conv2d.fuse import fuse_row_calls, reads_the_accumulators
from aot.kernels.template import extent
from aot.te.schedule import ScheduleError
from aot.te.tensor import PlaceholderOp
from aot.tir import expr as E

#: int16 values of widened input one chunk of channels may hold (AOT_DWB_WIDE_MAX).
WIDE_MAX = 1536
#: Pixels per block the helper keeps in registers (AOT_DWB_P_MAX bounds them).
PIXEL_BLOCKS = (1, 2, 4)
#: Largest kernel the sketch offers (the taps' loops are unrolled in the helper).
MAX_KERNEL = 7

ACC_CALL = "aot_dwblock_s8"
FUSED_CALL = "aot_dwblock_requant_s8"
#: The rewrite's name (``lower``'s dump).
FUSE_NAME = "fuse_dwblock_epilogue"


def wide_plane(npix: int, kw: int, sw: int) -> int:
    """int16 values of one widened plane (a channel's kernel row): the row's
    columns and the one after the last tap, rounded up to even."""
    return ((npix - 1) * sw + kw + 2) & ~1


def wide_values(npix: int, kh: int, kw: int, sw: int, channels: int) -> int:
    """int16 values of the buffer for ``channels`` channels at a time."""
    return kh * channels * wide_plane(npix, kw, sw)


def pack_dwblock(data: np.ndarray) -> np.ndarray:
    """1HWC int8 depthwise ``data`` packed for the helper: per channel, per
    kernel row, ``E_j = (w[2j], w[2j+1])`` for ``j < (KW+1)/2`` then ``O_j =
    (w[2j-1], w[2j])`` for ``j <= KW/2`` (``w[-1] = w[KW] = 0``), int16 pairs;
    returned as the int16 values' little-endian bytes (int8), the constant's dtype."""
    w = np.asarray(data, dtype=np.int8)
    _, kh, kw, c = w.shape
    taps = np.zeros((c, kh, kw + 2), np.int16)        # w[-1], w[0..KW-1], w[KW]
    taps[:, :, 1:kw + 1] = w[0].transpose(2, 0, 1)
    ne, no = (kw + 1) // 2, kw // 2 + 1
    even = [taps[:, :, 1 + 2 * j:3 + 2 * j] for j in range(ne)]
    odd = [taps[:, :, 2 * j:2 + 2 * j] for j in range(no)]
    words = np.stack(even + odd, axis=2)              # c, kh, kw + 1, 2
    return np.ascontiguousarray(words.astype("<i2")).view(np.int8).reshape(-1)


def dwblock_intrin(npix: int, channels: int, kernel: tuple[int, int], sw: int, pixels: int,
                   chunk: int):
    """``npix`` pixels of one output row x ``channels`` channels, blocks of
    ``pixels`` pixels, the input widened ``chunk`` channels at a time."""
    kh_n, kw_n = kernel
    if pixels not in PIXEL_BLOCKS:
        raise ScheduleError(f"no dwblock helper for blocks of {pixels} pixels "
                            f"(blocks: {PIXEL_BLOCKS})")
    if not 1 <= chunk <= channels:
        raise ScheduleError(f"a chunk of {chunk} channels is not within 1..{channels}")
    need = wide_values(npix, kh_n, kw_n, sw, chunk)
    if need > WIDE_MAX:
        raise ScheduleError(f"{chunk} channels of {kh_n} rows of {npix} pixels take {need} "
                            f"widened values, over the buffer's {WIDE_MAX}")
    rows, cols = kh_n, (npix - 1) * sw + kw_n
    a = te.placeholder((rows, cols, channels), "int8", "a")
    b = te.placeholder((kh_n, kw_n, channels), "int8", "b")
    kh = te.reduce_axis((0, kh_n), "kh")
    kw = te.reduce_axis((0, kw_n), "kw")
    c = te.compute((npix, channels), lambda p, o: te.sum(
        a[kh, p * sw + kw, o].astype("int32") * b[kh, kw, o].astype("int32"), axis=[kh, kw]),
        name="c")

    def intrin_func(ins, outs):
        aa, bb = ins
        cc = outs[0]
        return tir.call_extern("int32", ACC_CALL, cc.access_ptr("w"), cc.strides[0],
                               aa.access_ptr("r"), aa.strides[0], aa.strides[1],
                               bb.access_ptr("r"), npix, channels, kh_n, kw_n, sw, pixels,
                               chunk)
    binds = {
        a: tir.decl_buffer(a.shape, "int8", "a", strides=[te.var("a_rs"), te.var("a_cs"), 1],
                           elem_offset=te.var("a_off")),
        # the packed constant is read from its start: the call covers every channel
        b: tir.decl_buffer(b.shape, "int8", "b", elem_offset=0),
        c: tir.decl_buffer(c.shape, "int32", "c", elem_offset=te.var("c_off"),
                           strides=[te.var("c_ps"), 1]),
    }
    return te.decl_tensor_intrin(c.op, intrin_func, binds=binds,
                                 name=f"dwblock_{npix}x{channels}_{pixels}_{chunk}")


def applies(acc) -> bool:
    """The accumulation is one the helper computes: a depthwise int8 one
    (marked ``depthwise_s8``: multiplier 1) of dilation 1 and a kernel within
    :data:`MAX_KERNEL`."""
    if len(acc.op.axis) != 4 or len(acc.op.reduce_axis) != 2:
        return False
    kh, kw = (extent(r.dom.extent) for r in acc.op.reduce_axis)
    return tuple(acc.op.attrs["dilation"]) == (1, 1) and kh <= MAX_KERNEL and kw <= MAX_KERNEL


def chunks(acc) -> tuple[int, ...]:
    """The channels per widening chunk whose buffer fits :data:`WIDE_MAX`."""
    _, _, ow, oc = (extent(d) for d in acc.shape)
    kh, kw = (extent(r.dom.extent) for r in acc.op.reduce_axis)
    sw = acc.op.attrs["strides"][1]
    sizes = sorted({v for v in (2, 4, 8, 16, 32, 64, 128, 256) if v < oc} | {oc})
    return tuple(v for v in sizes if wide_values(ow, kh, kw, sw, v) <= WIDE_MAX)


def weight_tensor(acc):
    """The 1HWC weight placeholder the depthwise accumulation reads."""
    kh, kw = (extent(r.dom.extent) for r in acc.op.reduce_axis)
    c = extent(acc.shape[3])
    found = [t for t in acc.op.input_tensors if isinstance(t.op, PlaceholderOp)
             and tuple(extent(d) for d in t.shape) == (1, kh, kw, c)]
    if len(found) != 1:
        raise ScheduleError(f"stage {acc.op.name}: no single 1HWC weight constant")
    return found[0]


def tensorize_dwblock(s, stages, pixels: int, chunk: int) -> None:
    """Tensorize the depthwise accumulation computed per output row (loops
    pixels, channels, taps) from its pixel axis, and store its weight constant
    packed (:func:`pack_dwblock`)."""
    acc = stages["depthwise_s8"]
    _, _, ow, oc = (extent(d) for d in acc.shape)
    kh, kw = (extent(r.dom.extent) for r in acc.op.reduce_axis)
    sw = acc.op.attrs["strides"][1]
    s[acc].tensorize(acc.op.axis[2], dwblock_intrin(ow, oc, (kh, kw), sw, pixels, chunk))
    s.store_constant_as(weight_tensor(acc), pack_dwblock)


def fused_call(acc_call: E.Call, epi_call: E.Call, rows) -> E.Call | None:
    """The fused call for one ``aot_dwblock_s8`` and the ``aot_requant_row_s8``
    after it, reading ``rows``; None when the epilogue reads other accumulators."""
    acc, acc_ps, x, x_rs, x_cs, w, npix, c_n, kh, kw, sw, pixels, chunk = acc_call.args
    y, y_ps, *_, lo, hi = epi_call.args
    if not reads_the_accumulators(acc, acc_ps, npix, c_n, epi_call):
        return None
    return E.Call("int32", FUSED_CALL, (y, y_ps, x, x_rs, x_cs, w,
                                        E.AccessPtr(rows, E.const(0), "r"), npix, c_n, kh, kw,
                                        sw, pixels, chunk, lo, hi), "extern")


def fuse_dwblock_epilogue(rows_name: str):
    """The rewrite fusing each row's ``aot_dwblock_s8`` with its epilogue call."""
    return fuse_row_calls(rows_name, ACC_CALL, fused_call)
