"""Blocked depthwise rows as a tensor intrinsic: kernel columns paired for SMLAD.

:func:`dwblock_intrin` declares the accumulators of one output row of a
depthwise convolution (multiplier 1, dilation 1), ``c[p, o] = sum_{kh, kw}
a[kh, p * sw + kw, o] * b[kh, kw, o]``, and lowers it to one call of
``aot_dwblock_s8`` (``include/aot_dwblock.h``).  The library's
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
(the rewrite of :func:`aot.kernels.conv2d.fuse.fuse_row_calls`).
:func:`aot.kernels.depthwise_conv2d.schedules.apply_dwblock` makes that
schedule, the auto tuner's ``dwblock`` sketch (:mod:`aot.tune.auto.sketch`).
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
PIXEL_BLOCKS = (1, 2, 3, 4, 5, 6)
#: Most output rows one call covers (the sketch offers divisors of the height up to it).
MAX_ROWS = 8
#: Largest kernel the sketch offers (the taps' loops are unrolled in the helper).
MAX_KERNEL = 7

ACC_CALL = "aot_dwblock_s8"
EPILOGUE_CALL = "aot_requant_row_s8"
FUSED_CALL = "aot_dwblock_requant_s8"
#: The rewrite's name (``lower``'s dump).
FUSE_NAME = "fuse_dwblock_epilogue"


def wide_plane(npix: int, kw: int, sw: int) -> int:
    """int16 values of one widened input row of one channel: the row's
    columns and the one after the last tap, rounded up to even."""
    return ((npix - 1) * sw + kw + 2) & ~1


def wide_values(nrow: int, npix: int, kernel: tuple[int, int], strides: tuple[int, int],
                channels: int) -> int:
    """int16 values of the buffer for ``nrow`` output rows, ``channels`` at a time."""
    kh, kw = kernel
    sh, sw = strides
    return ((nrow - 1) * sh + kh) * channels * wide_plane(npix, kw, sw)


def pack_dwblock(data: np.ndarray, scale: int = 1) -> np.ndarray:
    """1HWC int8 depthwise ``data`` packed for the helper: per channel, per
    kernel row, ``E_j = (w[2j], w[2j+1])`` for ``j < (KW+1)/2`` then ``O_j =
    (w[2j-1], w[2j])`` for ``j <= KW/2`` (``w[-1] = w[KW] = 0``), int16 pairs;
    returned as the int16 values' little-endian bytes (int8), the constant's dtype.
    ``scale`` 2 doubles every weight (``dbl``: see the header)."""
    w = np.asarray(data, dtype=np.int8)
    _, kh, kw, c = w.shape
    taps = np.zeros((c, kh, kw + 2), np.int16)        # w[-1], w[0..KW-1], w[KW]
    taps[:, :, 1:kw + 1] = w[0].transpose(2, 0, 1).astype(np.int16) * scale
    ne, no = (kw + 1) // 2, kw // 2 + 1
    even = [taps[:, :, 1 + 2 * j:3 + 2 * j] for j in range(ne)]
    odd = [taps[:, :, 2 * j:2 + 2 * j] for j in range(no)]
    words = np.stack(even + odd, axis=2)              # c, kh, kw + 1, 2
    return np.ascontiguousarray(words.astype("<i2")).view(np.int8).reshape(-1)


def _const(v) -> int | None:
    return int(v.value) if isinstance(v, E.IntImm) else (v if isinstance(v, int) else None)


def _contiguous_rows(buf, npix: int, what: str):
    """The pixel stride of a (rows, pixels, channels) region whose rows follow
    each other (one flat run of rows * pixels pixels), or a ScheduleError."""
    rs, ps = _const(buf.strides[0]), _const(buf.strides[1])
    if rs is None or ps is None or (extent(buf.shape[0]) != 1 and rs != npix * ps):
        raise ScheduleError(f"dwblock: the rows of {what} are not one run of pixels "
                            f"(row stride {buf.strides[0]}, pixel stride {buf.strides[1]})")
    return buf.strides[1]


def dwblock_intrin(nrow: int, npix: int, channels: int, kernel: tuple[int, int],
                   strides: tuple[int, int], pixels: int, chunk: int, dbl: bool = False,
                   unroll_widen: bool = False):
    """``nrow`` output rows of ``npix`` pixels x ``channels`` channels, blocks
    of ``pixels`` pixels, the input widened ``chunk`` channels at a time;
    ``dbl``: the weights are packed doubled (only where the sums are below
    2^30: the fused epilogue's rows exist); ``unroll_widen``: the widening's
    column pairs four at a time."""
    kh_n, kw_n = kernel
    sh, sw = strides
    if pixels not in PIXEL_BLOCKS:
        raise ScheduleError(f"no dwblock helper for blocks of {pixels} pixels "
                            f"(blocks: {PIXEL_BLOCKS})")
    if not 1 <= chunk <= channels:
        raise ScheduleError(f"a chunk of {chunk} channels is not within 1..{channels}")
    need = wide_values(nrow, npix, kernel, strides, chunk)
    if need > WIDE_MAX:
        raise ScheduleError(f"{chunk} channels of {nrow} rows of {npix} pixels take {need} "
                            f"widened values, over the buffer's {WIDE_MAX}")
    in_rows, cols = (nrow - 1) * sh + kh_n, (npix - 1) * sw + kw_n
    a = te.placeholder((in_rows, cols, channels), "int8", "a")
    b = te.placeholder((kh_n, kw_n, channels), "int8", "b")
    kh = te.reduce_axis((0, kh_n), "kh")
    kw = te.reduce_axis((0, kw_n), "kw")
    c = te.compute((nrow, npix, channels), lambda r, p, o: te.sum(
        a[r * sh + kh, p * sw + kw, o].astype("int32") * b[kh, kw, o].astype("int32"),
        axis=[kh, kw]), name="c")

    def intrin_func(ins, outs):
        aa, bb = ins
        cc = outs[0]
        ps = _contiguous_rows(cc, npix, "the accumulators")
        return tir.call_extern("int32", ACC_CALL, cc.access_ptr("w"), ps,
                               aa.access_ptr("r"), aa.strides[0], aa.strides[1],
                               bb.access_ptr("r"), nrow, npix, channels, kh_n, kw_n, sh, sw,
                               pixels, chunk, int(dbl), int(unroll_widen))
    binds = {
        a: tir.decl_buffer(a.shape, "int8", "a", strides=[te.var("a_rs"), te.var("a_cs"), 1],
                           elem_offset=te.var("a_off")),
        # the packed constant is read from its start: the call covers every channel
        b: tir.decl_buffer(b.shape, "int8", "b", elem_offset=0),
        c: tir.decl_buffer(c.shape, "int32", "c", elem_offset=te.var("c_off"),
                           strides=[te.var("c_rs"), te.var("c_ps"), 1]),
    }
    return te.decl_tensor_intrin(c.op, intrin_func, binds=binds,
                                 name=f"dwblock_{nrow}x{npix}x{channels}_{pixels}_{chunk}")


def requant_rows_intrin(nrow: int, npix: int, channels: int, lo: int, hi: int):
    """The one-rounding epilogue of ``nrow`` rows of ``npix`` pixels (rows one
    run of pixels) as one ``aot_requant_row_s8`` call over ``nrow * npix`` pixels."""
    acc = te.placeholder((nrow, npix, channels), "int32", "acc")
    bias = te.placeholder((channels,), "int32", "bias")
    table = te.placeholder((channels, 4), "int32", "table")

    def value(r, p, c):
        q = te.call_pure("int32", "aot_requant", acc[r, p, c] + bias[c],
                         *[table[c, j] for j in range(4)])
        return te.call_pure("int32", "aot_clamp_s8", q, lo, hi).astype("int8")
    y = te.compute((nrow, npix, channels), value, name="y")

    def intrin_func(ins, outs):
        a, b, t = ins
        yy = outs[0]
        return tir.call_extern("int32", EPILOGUE_CALL, yy.access_ptr("w"),
                               _contiguous_rows(yy, npix, "the outputs"), a.access_ptr("r"),
                               _contiguous_rows(a, npix, "the accumulators"),
                               b.access_ptr("r"), t.access_ptr("r"), nrow * npix, channels,
                               lo, hi)
    binds = {t: tir.decl_buffer(t.shape, t.dtype, t.name, elem_offset=te.var(f"{t.name}_off"),
                                strides=[te.var(f"{t.name}_rs"), te.var(f"{t.name}_ps"), 1])
             for t in (acc, y)}
    binds.update({t: tir.decl_buffer(t.shape, t.dtype, t.name,
                                     elem_offset=te.var(f"{t.name}_off")) for t in (bias, table)})
    return te.decl_tensor_intrin(y.op, intrin_func, binds=binds, name="requant_rows_s8")


def pixel_blocks(acc) -> tuple[int, ...]:
    """The blocks of pixels worth offering: within the row, and none that
    makes a block start at an odd column (P pixels of an odd stride spanning
    an odd number of columns: the helper's C path), unless P is the whole row."""
    _, ow, _, _, (_, sw) = geometry(acc)
    return tuple(p for p in PIXEL_BLOCKS if p <= ow and (p * sw % 2 == 0 or p == ow))


def applies(acc) -> bool:
    """The accumulation is one the helper computes: a depthwise int8 one
    (marked ``depthwise_s8``: multiplier 1) of dilation 1 and a kernel within
    :data:`MAX_KERNEL`."""
    if len(acc.op.axis) != 4 or len(acc.op.reduce_axis) != 2:
        return False
    kh, kw = (extent(r.dom.extent) for r in acc.op.reduce_axis)
    return tuple(acc.op.attrs["dilation"]) == (1, 1) and kh <= MAX_KERNEL and kw <= MAX_KERNEL


def geometry(acc):
    """``(OH, OW, C, (KH, KW), (SH, SW))`` of the depthwise accumulation."""
    _, oh, ow, oc = (extent(d) for d in acc.shape)
    kernel = tuple(extent(r.dom.extent) for r in acc.op.reduce_axis)
    return oh, ow, oc, kernel, tuple(acc.op.attrs["strides"])


def chunks(acc, nrow: int) -> tuple[int, ...]:
    """The channels per widening chunk whose buffer fits :data:`WIDE_MAX`
    for ``nrow`` output rows per call."""
    _, ow, oc, kernel, strides = geometry(acc)
    sizes = sorted({v for v in (2, 4, 8, 16, 32, 64, 128, 256) if v < oc} | {oc})
    return tuple(v for v in sizes if wide_values(nrow, ow, kernel, strides, v) <= WIDE_MAX)


def weight_tensor(acc):
    """The 1HWC weight placeholder the depthwise accumulation reads."""
    _, _, c, (kh, kw), _ = geometry(acc)
    found = [t for t in acc.op.input_tensors if isinstance(t.op, PlaceholderOp)
             and tuple(extent(d) for d in t.shape) == (1, kh, kw, c)]
    if len(found) != 1:
        raise ScheduleError(f"stage {acc.op.name}: no single 1HWC weight constant")
    return found[0]


def tensorize_dwblock(s, stages, nrow: int, pixels: int, chunk: int,
                      dbl: bool = False, unroll_widen: bool = False) -> None:
    """Tensorize the depthwise accumulation computed per block of ``nrow``
    output rows (loops rows, pixels, channels, taps) from its row axis, and
    store its weight constant packed (:func:`pack_dwblock`; ``dbl``: doubled,
    only where the fused epilogue's rows exist, whose bound makes it exact)."""
    acc = stages["depthwise_s8"]
    if dbl and "dw_requant" not in stages:
        raise ScheduleError("dwblock: doubled weights need the fused epilogue's rows "
                            "(their bound keeps 2 * acc within int32)")
    _, ow, oc, kernel, strides = geometry(acc)
    s[acc].tensorize(acc.op.axis[1], dwblock_intrin(nrow, ow, oc, kernel, strides, pixels,
                                                    chunk, dbl, unroll_widen))
    scale = 2 if dbl else 1
    s.store_constant_as(weight_tensor(acc), lambda data: pack_dwblock(data, scale))


def fused_call(acc_call: E.Call, epi_call: E.Call, rows) -> E.Call | None:
    """The fused call for one ``aot_dwblock_s8`` and the ``aot_requant_row_s8``
    after it, reading ``rows``; None when the epilogue reads other accumulators."""
    (acc, acc_ps, x, x_rs, x_cs, w, nrow, npix, c_n, kh, kw, sh, sw, pixels, chunk,
     dbl, uw) = acc_call.args
    y, y_ps, *_, lo, hi = epi_call.args
    run = E.const(_const(nrow) * _const(npix))
    if not reads_the_accumulators(acc, acc_ps, run, c_n, epi_call):
        return None
    return E.Call("int32", FUSED_CALL, (y, y_ps, x, x_rs, x_cs, w,
                                        E.AccessPtr(rows, E.const(0), "r"), nrow, npix, c_n,
                                        kh, kw, sh, sw, pixels, chunk, dbl, uw, lo, hi),
                  "extern")


def fuse_dwblock_epilogue(rows_name: str):
    """The rewrite fusing each ``aot_dwblock_s8`` with its epilogue call."""
    return fuse_row_calls(rows_name, ACC_CALL, fused_call)
