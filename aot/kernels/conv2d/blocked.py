"""Blocked int8 dot products as tensor intrinsics: P pixels x O output channels.

:func:`block_s8_intrin` declares the accumulators of ``npix`` pixels x
``nch`` output channels over one tap's input channels,
``c[p, o] += sum_k a[p * sw, k] * b[o, 0, 0, k]``, and lowers it to one
call of ``aot_block_row_s8`` (``include/aot_block.h``; its reset
to ``aot_block_reset_s32``), which computes it in blocks of P pixels x O
channels (``aot_block_s8``; a last partial block one pixel at a time):
with the DSP extension each loaded word of the P input pixels and of the
O weight rows is sign extended once and feeds several SMLADs, and the
P x O sums stay in registers over the reduction.  The weights operand is
4-D (``O x 1 x 1 x K`` of the OHWI weights) so that it lines up with the
trailing dimensions of the weight tensor, as tensorize needs.

Two layout choices remove the sign extensions from the inner loop:

* wide weights (``wide_w``): the weight constant is stored pre-widened
  (:func:`pack_wide`, applied at compile time through
  :meth:`aot.te.Schedule.store_constant_as`): int16 values in the order
  SXTB16 pairs them, so four weights are one LDRD;
* wide input (``wide_x``): the call first widens its pixels into a stack
  buffer the same way (worth it when the call covers many channel blocks).

:func:`tensorize_block` applies it to a conv2d accumulation whose loops
end in ``(pixels, channels, input channels)``: the auto tuner's ``block``
sketch (:mod:`aot.tune.auto.sketch`) makes that nest.
"""

from __future__ import annotations

import math

import numpy as np

from aot import te, tir
from aot.kernels.template import extent
from aot.te.schedule import ScheduleError
from aot.te.tensor import PlaceholderOp

#: The block shapes (pixels, output channels) the helper is meant for: up to
#: eight sums, so that they, the widened inputs and the pointers fit the
#: Cortex-M's registers.
BLOCK_SHAPES = ((1, 2), (1, 4), (2, 1), (2, 2), (2, 4), (3, 2), (4, 1), (4, 2))

#: int16 values of widened input one call may hold (AOT_BLOCK_WIDE_MAX).
WIDE_INPUT_MAX = 1024
#: Bytes of im2col patches one ``patch`` call may gather (AOT_BLOCK_PATCH_MAX).
PATCH_MAX = 1024
#: The ``patch`` form's call (include/aot_block.h).
PATCH_CALL = "aot_block_patch_row_s8"


def patch_length(k_len: int, wide_w: int) -> int:
    """The values a ``patch`` call reduces over: the patch's ``k_len``, rounded
    up to a multiple of 4 with wide weights (each weight row padded with zeros
    the same way), so that odd patches take the assembly blocks too
    (``aot_block_patch_len``)."""
    return (k_len + 3) & ~3 if wide_w else k_len


def patch_chunk(npix: int, pixels: int, kp: int) -> int:
    """Pixels per gathered chunk of a ``patch`` call (``aot_block_patch_chunk``):
    as many patches of ``kp`` values as the buffers hold, a multiple of the
    block's ``pixels`` when that is at least one block, at most ``npix``."""
    n = min(PATCH_MAX // kp, WIDE_INPUT_MAX // wide_length(kp))
    if n >= pixels:
        n -= n % pixels
    return min(n, npix)


def patch_fits(k_len: int) -> bool:
    """One whole patch of ``k_len`` values (padded for wide weights) fits the
    buffers of a ``patch`` call; a row takes as many chunks as it needs."""
    kp = patch_length(k_len, 1)
    return kp <= PATCH_MAX and wide_length(kp) <= WIDE_INPUT_MAX


def _pad_rows(data, k_len: int, kp: int) -> np.ndarray:
    rows = np.asarray(data, dtype=np.int8).reshape(-1, k_len)
    return np.pad(rows, ((0, 0), (0, kp - k_len))) if kp > k_len else rows


def wide_length(length: int) -> int:
    """int16 values one widened row of ``length`` takes (rounded up to even:
    every row starts on a word)."""
    return (length + 1) & ~1


def pack_wide(data: np.ndarray, length: int) -> np.ndarray:
    """int8 ``data`` (rows of ``length`` values) pre-widened for the helper: each
    value as int16, each chunk of 4 in the order ``k0 k2 k1 k3`` (SXTB16's even
    and odd halves), a last partial chunk in order; returned as the int16
    values' little-endian bytes (int8, twice as long), the constant's dtype."""
    rows = np.asarray(data, dtype=np.int8).reshape(-1, length).astype("<i2")
    full = length & ~3
    if full:
        chunks = rows[:, :full].reshape(len(rows), -1, 4)
        rows = np.concatenate([chunks[:, :, [0, 2, 1, 3]].reshape(len(rows), full),
                               rows[:, full:]], axis=1)
    return np.ascontiguousarray(rows).view(np.int8).reshape(-1)


def pack_wide_pairs(data: np.ndarray, length: int) -> np.ndarray:
    """:func:`pack_wide` with the chunks of each pair of rows (output channels
    2j, 2j+1) alternating: chunk q of row 2j, chunk q of row 2j+1, chunk q+1
    of row 2j, ... (``length`` a multiple of 4, an even number of rows), so
    that a 2-channel block's step is four consecutive words (one LDM)."""
    rows = np.asarray(data, dtype=np.int8).reshape(-1, length)
    if length % 4 or len(rows) % 2:
        raise ScheduleError(f"wide pairs need rows of a multiple of 4 values and an even "
                            f"number of rows, not {len(rows)} x {length}")
    wide = pack_wide(rows, length).view("<i2").reshape(len(rows) // 2, 2, length // 4, 4)
    return np.ascontiguousarray(wide.transpose(0, 2, 1, 3)).view(np.int8).reshape(-1)


def _check_blocks(npix: int, nch: int, pixels: int, channels: int, steps: int) -> None:
    """``npix`` pixels x ``nch`` channels in blocks the helpers have."""
    if (pixels, channels) not in BLOCK_SHAPES:
        raise ScheduleError(f"no blocked helper for {pixels} x {channels} "
                            f"(shapes: {BLOCK_SHAPES})")
    if steps not in (1, 2):
        raise ScheduleError(f"steps must be 1 or 2, not {steps}")
    if npix < 1 or nch < 1 or nch % channels:
        raise ScheduleError(f"{npix} pixels x {nch} channels are not blocks of "
                            f"{pixels} x {channels}")


def block_s8_intrin(npix: int, nch: int, pixels: int, channels: int, length: int,
                    stride: int = 1, steps: int = 1, taps: int = 1, wide_x: bool = False,
                    wide_w: int = 0, kernel_rows: int = 0):
    """``npix`` pixels x ``nch`` output channels over ``length`` reduction values,
    in blocks of ``pixels`` x ``channels``, the input pixels ``stride`` columns
    apart; ``steps`` 4-byte steps per iteration of the helper's reduction loop
    (1 or 2).  ``taps`` > 1 also covers that many adjacent kernel columns
    (dilation 1): input columns and OHWI weight rows hold them contiguously, so
    the helper reduces over ``taps * length`` values in one go.  ``wide_x`` and
    ``wide_w``: see the module docstring (wide weights must be packed with
    :func:`pack_wide` over rows of ``taps * length``; ``wide_w`` 2: with
    :func:`pack_wide_pairs`, blocks of 2 channels over whole rows).  ``kernel_rows`` > 0:
    the ``patch`` form, that many kernel rows of ``taps`` contiguous columns
    each in one reduction of ``kernel_rows * taps * length`` values (the
    pixels' im2col patches gathered and widened by the call:
    ``aot_block_patch_row_s8``; wide weights packed over those rows)."""
    if kernel_rows:
        return _patch_intrin(npix, nch, pixels, channels, length, stride, steps, taps,
                             wide_w, kernel_rows)
    _check_blocks(npix, nch, pixels, channels, steps)
    k_len = taps * length
    if wide_x and npix * wide_length(k_len) > WIDE_INPUT_MAX:
        raise ScheduleError(f"{npix} pixels of {k_len} values do not fit the widening "
                            f"buffer ({WIDE_INPUT_MAX} values)")
    if wide_w and length % 2:
        raise ScheduleError(f"wide weights need an even number of channels, not {length}")
    if wide_w == 2 and (channels != 2 or k_len % 4):
        raise ScheduleError(f"wide pairs need blocks of 2 channels (not {channels}) over "
                            f"a multiple of 4 values (not {k_len})")
    a = te.placeholder(((npix - 1) * stride + taps, length), "int8", "a")
    b = te.placeholder((nch, 1, taps, length), "int8", "b")
    k = te.reduce_axis((0, length), "k")
    if taps == 1:
        c = te.compute((npix, nch), lambda p, o: te.sum(
            a[p * stride, k].astype("int32") * b[o, 0, 0, k].astype("int32"), axis=k),
            name="c")
    else:
        t = te.reduce_axis((0, taps), "t")
        c = te.compute((npix, nch), lambda p, o: te.sum(
            a[p * stride + t, k].astype("int32") * b[o, 0, t, k].astype("int32"),
            axis=[t, k]), name="c")

    def intrin_func(ins, outs):
        aa, bb = ins
        cc = outs[0]
        reset = tir.call_extern("int32", "aot_block_reset_s32", cc.access_ptr("w"),
                                cc.strides[0], npix, nch)
        # wide weights: the constant holds two bytes per weight, so the region
        # starts at twice its element offset
        w_ptr = bb.access_ptr("r", offset=bb.elem_offset) if wide_w else bb.access_ptr("r")
        update = tir.call_extern("int32", "aot_block_row_s8", cc.access_ptr("rw"),
                                 cc.strides[0], aa.access_ptr("r"), aa.strides[0] * stride,
                                 w_ptr, bb.strides[0], npix, nch, pixels, channels, k_len,
                                 steps, int(wide_x), int(wide_w))
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
                                 name=f"block_s8_{npix}x{nch}_{pixels}x{channels}_{taps}")


def _patch_intrin(npix, nch, pixels, channels, length, stride, steps, taps, wide_w, rows):
    """:func:`block_s8_intrin`'s ``patch`` form (its docstring)."""
    _check_blocks(npix, nch, pixels, channels, steps)
    k_len = rows * taps * length
    if not patch_fits(k_len):
        raise ScheduleError(f"a patch of {k_len} values does not fit the patch buffers "
                            f"({PATCH_MAX} bytes, {WIDE_INPUT_MAX} widened values)")
    if wide_w == 2 and channels != 2:
        raise ScheduleError(f"wide pairs need blocks of 2 channels, not {channels}")
    kp = patch_length(k_len, wide_w)
    a = te.placeholder((rows, (npix - 1) * stride + taps, length), "int8", "a")
    b = te.placeholder((nch, rows, taps, length), "int8", "b")
    r = te.reduce_axis((0, rows), "r")
    t = te.reduce_axis((0, taps), "t")
    k = te.reduce_axis((0, length), "k")
    c = te.compute((npix, nch), lambda p, o: te.sum(
        a[r, p * stride + t, k].astype("int32") * b[o, r, t, k].astype("int32"),
        axis=[r, t, k]), name="c")

    def intrin_func(ins, outs):
        aa, bb = ins
        cc = outs[0]
        reset = tir.call_extern("int32", "aot_block_reset_s32", cc.access_ptr("w"),
                                cc.strides[0], npix, nch)
        # wide weights: packed rows of kp values, the call covering every channel
        # (the region starts at the constant's start: elem_offset 0, bound below)
        w_ptr = bb.access_ptr("r")
        update = tir.call_extern("int32", PATCH_CALL, cc.access_ptr("rw"), cc.strides[0],
                                 aa.access_ptr("r"), aa.strides[0], aa.strides[1] * stride,
                                 w_ptr, kp if wide_w else bb.strides[0], npix, nch, pixels,
                                 channels, rows, taps * length, steps, 1, int(wide_w))
        return None, reset, update
    # each kernel row's columns and channels contiguous in the input, the whole
    # patch contiguous in the OHWI weights (checked by tensorize)
    binds = {
        a: tir.decl_buffer(a.shape, "int8", "a", elem_offset=te.var("a_off"),
                           strides=[te.var("a_rs"), length, 1]),
        b: tir.decl_buffer(b.shape, "int8", "b",
                           elem_offset=0 if wide_w else te.var("b_off"),
                           strides=[te.var("b_os"), taps * length, length, 1]),
        c: tir.decl_buffer(c.shape, "int32", "c", elem_offset=te.var("c_off"),
                           strides=[te.var("c_ps"), 1]),
    }
    return te.decl_tensor_intrin(c.op, intrin_func, binds=binds,
                                 name=f"block_patch_s8_{npix}x{nch}_{pixels}x{channels}_"
                                      f"{rows}x{taps}")


def weight_tensor(acc):
    """The OHWI weight placeholder the conv2d accumulation reads."""
    o = extent(acc.shape[3])
    kh, kw, rc = (extent(r.dom.extent) for r in acc.op.reduce_axis)
    found = [t for t in acc.op.input_tensors if isinstance(t.op, PlaceholderOp)
             and tuple(extent(d) for d in t.shape) == (o, kh, kw, rc)]
    if len(found) != 1:
        raise ScheduleError(f"stage {acc.op.name}: no single OHWI weight constant")
    return found[0]


def tensorize_block(s, stages, pixel_axis, npix: int, nch: int, pixels: int, channels: int,
                    steps: int = 1, fold_kw: bool = False, wide_x: bool = False,
                    wide_w: int = 0, patch: bool = False) -> None:
    """Tensorize the conv2d accumulation from its pixel loop ``pixel_axis`` (of
    ``npix`` pixels; loops pixels, channels, input channels innermost, or
    with ``fold_kw`` pixels, channels, kernel columns, input channels, or with
    ``patch`` pixels, channels, kernel rows, kernel columns, input channels);
    with ``wide_w`` the weight constant is stored packed (:func:`pack_wide`,
    2: :func:`pack_wide_pairs`, the call then covering whole weight rows)."""
    acc = stages["dot_s8"]
    kh, kw, rc = acc.op.reduce_axis
    _, sw = acc.op.attrs["strides"]
    taps = extent(kw.dom.extent) if fold_kw or patch else 1
    rows = extent(kh.dom.extent) if patch else 0
    length = extent(rc.dom.extent)
    intrin = block_s8_intrin(npix, nch, pixels, channels, length, sw, steps, taps=taps,
                             wide_x=wide_x, wide_w=wide_w, kernel_rows=rows)
    s[acc].tensorize(pixel_axis, intrin)
    if wide_w:
        row = max(rows, 1) * taps * length
        weights = weight_tensor(acc)
        if wide_w == 2 and row != math.prod(extent(d) for d in weights.shape[1:]):
            raise ScheduleError("wide pairs need each call to cover whole weight rows "
                                "(one kernel tap, fold_kw over one kernel row, or patch)")
        pack = pack_wide_pairs if wide_w == 2 else pack_wide
        kp = patch_length(row, wide_w) if patch else row
        s.store_constant_as(weights, lambda data: pack(_pad_rows(data, row, kp), kp))
