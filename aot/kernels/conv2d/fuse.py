"""Convolution rows and their epilogue as one helper call, without the
accumulator row, and the machinery depthwise's rows fuse with
(:mod:`aot.kernels.depthwise_conv2d.fuse`, whose rewrite introduces it here).

The arm_cpu / arm_mve depthwise schedule tensorizes the accumulators of an
output row (or pixel) into ``aot_depthwise_s8`` and the requantizing
epilogue of the same row into ``aot_requant_row_s8``; lowered, every row is
those two calls, one after the other, through a scratch row of int32
accumulators.  Depthwise's ``fuse_depthwise_epilogue`` (:func:`fuse_row_calls`
with its call) replaces each such pair by
one ``aot_depthwise_requant_s8`` call, which requantizes each block of
accumulators straight from registers, and drops the scratch row:

    aot_depthwise_s8(acc, ps, x, x_rs, x_cs, w, npix, C, KH, KW, sw, dh, dw);
    aot_requant_row_s8(y, y_ps, acc, ps, bias, table, npix, C, lo, hi);
  ->
    aot_depthwise_requant_s8(y, y_ps, x, x_rs, x_cs, w, rows,
                             npix, C, KH, KW, sw, dh, dw, lo, hi);

The fused helper reads a row ``(2*bias, m, kh, e)`` per channel
(:func:`fused_requant_rows`, built at compile time, blocked by four
channels) instead of the bias and the one-rounding table, and computes the
same value as ``aot_requant`` with fewer instructions: for ``x = acc +
bias`` with ``|x| < 2^30`` and ``x2 = 2x``,

    aot_requant(x, m, k_lo, k_hi, e - 1)
      = (floor((kh * 2^32 + x2 * m + 2^31) / 2^32) - [x2 < 0]) >> e

where ``kh = 2^(e-1) + off * 2^e`` (``off`` the output offset): with ``k =
2^30 + 2^(30+e) + off * 2^(31+e)`` (:func:`aot.kernels.conv2d.compute.\
fast_requant_tables`), twice the one-rounding sum ``x*m + k - [x<0]*2^31``
is ``x2*m + 2^31 + kh*2^32 - [x<0]*2^32``, and ``floor(A / 2^(31+e)) =
floor(floor(2A / 2^32) / 2^e)``.  The inner floor is one SMMLAR on the
DSP extension (VRMULH on Helium) plus the sign term, so an output costs
SMMLAR, an add with ``ASR #31``, a shift and SSAT.  ``|x| < 2^30`` holds
for every input when ``R = 128 * sum_k |w[k, c]| + |bias[c]| < 2^30``,
which the rows check per channel from the constant weights and bias (the
accumulator is ``sum_k x_k * w[k, c]`` with int8 ``x_k``, padding
included).  The folded offset makes no other demand on ``e`` than that the
32-bit values stay exact: ``kh`` fits int32, and so does the result before
the shift, ``|kh + floor((x2*m + 2^31) / 2^32) - [x2 < 0]| <= |kh| +
floor(R*m / 2^31) + 2``, also checked per channel (a right shift of 22 with
an output offset of -128, VWW's layers 21 and 23, gives ``|kh| < 2^29``:
exact; the one-rounding table of
:func:`aot.kernels.conv2d.compute.fast_requant_tables`, with its 64-bit
constant, folds it only up to :data:`aot.kernels.common.MAX_FOLDED_SHIFT`).
``tests/kernels/test_depthwise_fused.py`` checks the identity against the
reference's requantization on random and extreme values.

Convolutions fuse the same way (:func:`fuse_conv_epilogue`): each
``aot_conv_s8`` call and its ``aot_requant_row_s8`` become one fused row
call, reading the same kind of rows built from the OHWI weights
(:func:`conv_requant_rows`: the bound is over each output channel's ``KH *
KW * C`` weights).  The call names the path its constant shape takes
(:mod:`aot.kernels.conv2d.paths`): ``aot_conv_requant_wide_s8``,
``aot_conv_requant_patch_s8`` or ``aot_conv_requant_long_patch_s8``, the
DSP paths that requantize each block of sums of ``aot_conv_wide_s8`` from
registers, or the portable
``aot_conv_requant_scratch_s8`` (which also takes ``x_cs``):

    aot_conv_s8(acc, ps, x, x_rs, x_cs, w, npix, O, KH, KW, C, sw, dh, dw, widen);
    aot_requant_row_s8(y, y_ps, acc, ps, bias, table, npix, O, lo, hi);
  ->
    aot_conv_requant_wide_s8(y, y_ps, x, x_rs, w, rows,
                             npix, O, KH, KW, C, sw, dh, dw, lo, hi);

The auto tuner's ``block`` sketch fuses the same way
(:func:`fuse_block_epilogue`): a row's ``aot_block_reset_s32`` (zero
accumulators), ``aot_block_row_s8`` and ``aot_requant_row_s8`` become one
``aot_block_requant_s8``, which starts each P x O block of sums from zero
(the bias is in the rows) and requantizes it from registers with the same
rows (:func:`conv_requant_rows`, the same validity conditions):

    aot_block_reset_s32(acc, ps, npix, nch);
    aot_block_row_s8(acc, ps, x, x_ps, w, w_os, npix, nch, P, O, K, steps, xw, ww);
    aot_requant_row_s8(y, y_ps, acc, ps, bias, table, npix, nch, lo, hi);
  ->
    aot_block_requant_s8(y, y_ps, x, x_ps, w, w_os, rows, npix, nch, P, O, K, steps,
                         xw, ww, lo, hi);

The composition keeps the kernel's meaning as long as nothing else reads
the accumulator row: the rewrite checks that, and leaves the function
unchanged if any other statement still uses the buffer (an accumulator
call without its epilogue right after it, or another reader).  It runs as a
rewrite of the schedule (:meth:`aot.te.schedule.Schedule.rewrite`) after
the loop passes, so the
peeled border rows are fused too; the kernel then no longer reads the bias
and table constants, and :class:`aot.kernels.kernel.KernelBuilder` does not
emit them.
"""

from __future__ import annotations

import numpy as np

from aot.kernels.conv2d.paths import CONV_CALL as CONV_ACC_CALL
from aot.kernels.conv2d.paths import FUSED_SCRATCH, fused_row_helper
from aot.te.schedule import ScheduleError
from aot.tir import expr as E
from aot.tir import stmt as S
from aot.tir.functor import Mutator, all_nodes
from aot.tir.passes import drop_allocations
from aot.tir.simplify import equal

#: The rewrites' names (``lower``'s dump, docs/kernels.md).
CONV_NAME = "fuse_conv_epilogue"
EPILOGUE_CALL = "aot_requant_row_s8"
BLOCK_NAME = "fuse_block_epilogue"
BLOCK_ACC_CALL = "aot_block_row_s8"
BLOCK_RESET_CALL = "aot_block_reset_s32"
BLOCK_FUSED_CALL = "aot_block_requant_s8"
PATCH_ACC_CALL = "aot_block_patch_row_s8"
PATCH_FUSED_CALL = "aot_block_patch_requant_s8"


def _call(s, name):
    if isinstance(s, S.Evaluate) and isinstance(s.value, E.Call) and s.value.name == name:
        return s.value
    return None


def _trailing(s):
    """The statement ``s`` ends with, looking into the scratch buffers it
    declares (the padded rows' buffer may close right after the accumulator
    call, before the epilogue)."""
    while True:
        if isinstance(s, S.Allocate):
            s = s.body
        elif isinstance(s, S.SeqStmt):
            s = s.seq[-1]
        else:
            return s


def _with_trailing(s, new):
    """``s`` with the statement :func:`_trailing` finds replaced by ``new``."""
    if isinstance(s, S.Allocate):
        return S.Allocate(s.buffer, _with_trailing(s.body, new))
    if isinstance(s, S.SeqStmt):
        return S.seq(*s.seq[:-1], _with_trailing(s.seq[-1], new))
    return new


#: Bound on |acc + bias| for the doubled form (2x must not wrap).
X_BOUND = 1 << 30


def fused_requant_rows(weights, bias, multiplier, shift, output_offset) -> np.ndarray | None:
    """The ``(2*bias, m, kh, e)`` int32 row of each channel for the fused
    helper (:func:`requant_rows`) for depthwise weights: ``weights`` (..., C)
    int8, ``bias`` the int32 bias with the input offset folded in (None:
    zero), ``multiplier`` and ``shift`` TFLite's per-channel (or per-tensor)
    values.  ``|acc + bias|`` is at most ``128 * sum_k |w[k, c]| + |bias[c]|``
    (int8 inputs, padding included)."""
    w = np.asarray(weights, np.int64)
    channels = w.shape[-1]
    b = (np.zeros(channels, np.int64) if bias is None
         else np.asarray(bias, np.int64).reshape(-1))
    reach = 128 * np.abs(w).reshape(-1, channels).sum(axis=0) + np.abs(b)
    return requant_rows(reach, b, multiplier, shift, output_offset)


def requant_rows(reach, bias, multiplier, shift, output_offset) -> np.ndarray | None:
    """The rows for channels whose ``|acc + bias|`` is at most ``reach[c]``,
    blocked by groups of four channels (each group is 16 words: the four
    ``2*bias``, the four ``m``, the four ``kh``, the four ``e``; the last
    group padded with zeros; :func:`row_of`), or None when a channel is
    outside the identity's conditions (``m`` in ``(2^30, 2^31)``, right
    shift ``1 <= e <= 31``, ``reach < 2^30``, and ``kh`` and the value before
    the shift within int32; module docstring)."""
    reach = np.asarray(reach, np.int64).reshape(-1)
    channels = reach.shape[0]
    b = np.asarray(bias, np.int64).reshape(-1)
    m = np.broadcast_to(np.asarray(multiplier, np.int64).reshape(-1), (channels,))
    e = np.broadcast_to(-np.asarray(shift, np.int64).reshape(-1), (channels,))
    if not ((m > (1 << 30)).all() and (m < (1 << 31)).all() and (e >= 1).all()
            and (e <= 31).all() and (reach < X_BOUND).all()):
        return None
    kh = np.left_shift(np.int64(1), e - 1) + np.int64(output_offset) * np.left_shift(np.int64(1), e)
    # reach * m < 2^61 and |kh| < 2^39: exact in int64
    if not (np.abs(kh) + ((reach * m) >> 31) + 2 < (1 << 31)).all():
        return None
    rows = np.zeros((-(-channels // 4) * 4, 4), np.int64)
    rows[:channels] = np.stack([2 * b, m, kh, e], axis=1)
    # blocked by four channels: each field of a group is one Helium vector
    return rows.reshape(-1, 4, 4).transpose(0, 2, 1).reshape(-1).astype(np.int32)


def conv_requant_rows(weights, bias, multiplier, shift, output_offset) -> np.ndarray | None:
    """:func:`fused_requant_rows` for a convolution's OHWI ``weights``: one
    row per output channel, bounded by that channel's ``KH * KW * C`` weights."""
    w = np.asarray(weights)
    return fused_requant_rows(w.reshape(w.shape[0], -1).T, bias, multiplier, shift,
                              output_offset)


def row_of(rows: np.ndarray, c: int) -> tuple[int, int, int, int]:
    """Channel ``c``'s ``(2*bias, m, kh, e)`` in the blocked rows (the C
    helpers' ``rows + 16*(c/4) + c%4``, fields four words apart)."""
    base = 16 * (c // 4) + c % 4
    return tuple(int(rows[base + 4 * k]) for k in range(4))


def requant_value(acc, row) -> np.ndarray:
    """``aot_dw_requant(acc, *row)`` in NumPy (int64 arithmetic): with ``x2 =
    2*acc + b2``, ``(floor((kh*2^32 + x2*m + 2^31) / 2^32) - [x2 < 0]) >> e``."""
    b2, m, kh, e = (int(v) for v in row)
    x2 = 2 * np.asarray(acc, np.int64) + b2
    return ((kh << 32) + x2 * m + (1 << 31) >> 32) - (x2 < 0) >> e


def reads_the_accumulators(acc, acc_ps, npix, channels, epi_call: E.Call) -> bool:
    """The epilogue call reads exactly the accumulators the row call wrote:
    same buffer region, pixel stride, pixels and channels."""
    _, _, acc2, acc_ps2, _, _, npix2, n, _, _ = epi_call.args
    return (isinstance(acc, E.AccessPtr) and isinstance(acc2, E.AccessPtr)
            and acc.buffer.data is acc2.buffer.data and equal(acc.offset, acc2.offset)
            and equal(acc_ps, acc_ps2) and equal(npix, npix2) and equal(channels, n))


def fused_conv_call(acc_call: E.Call, epi_call: E.Call, rows: S.Buffer) -> E.Call | None:
    """The fused call for one ``aot_conv_s8`` call and the epilogue call after
    it, reading ``rows`` (:func:`conv_requant_rows`), or None when the
    epilogue does not read exactly those accumulators: the fused row's entry
    point for the call's path (:func:`aot.kernels.conv2d.paths.fused_row_helper`;
    the widened ones take no ``x_cs`` nor ``widen``)."""
    acc, acc_ps, x, x_rs, x_cs, w, npix, oc, kh, kw, c_n, sw, dh, dw, widen = acc_call.args
    y, y_ps, *_, lo, hi = epi_call.args
    if not reads_the_accumulators(acc, acc_ps, npix, oc, epi_call):
        return None
    name = fused_row_helper(x_cs, kh, kw, c_n, dw, widen)
    strides = (x_rs, x_cs) if name == FUSED_SCRATCH else (x_rs,)
    return E.Call("int32", name, (y, y_ps, x, *strides, w, E.AccessPtr(rows, E.const(0), "r"),
                                  npix, oc, kh, kw, c_n, sw, dh, dw, lo, hi), "extern")


def fused_block_call(acc_call: E.Call, epi_call: E.Call, rows: S.Buffer) -> E.Call | None:
    """:func:`fused_conv_call` for an ``aot_block_row_s8`` call (``aot_block_requant_s8``)."""
    acc, acc_ps, x, x_ps, w, w_os, npix, nch, p, o, k, steps, xw, ww = acc_call.args
    y, y_ps, *_, lo, hi = epi_call.args
    if not reads_the_accumulators(acc, acc_ps, npix, nch, epi_call):
        return None
    return E.Call("int32", BLOCK_FUSED_CALL, (y, y_ps, x, x_ps, w, w_os,
                                              E.AccessPtr(rows, E.const(0), "r"), npix, nch, p,
                                              o, k, steps, xw, ww, lo, hi), "extern")


def fused_patch_call(acc_call: E.Call, epi_call: E.Call, rows: S.Buffer) -> E.Call | None:
    """:func:`fused_conv_call` for an ``aot_block_patch_row_s8`` call
    (``aot_block_patch_requant_s8``)."""
    acc, acc_ps, x, x_rs, x_ps, w, w_os, npix, nch, *rest = acc_call.args
    y, y_ps, *_, lo, hi = epi_call.args
    if not reads_the_accumulators(acc, acc_ps, npix, nch, epi_call):
        return None
    return E.Call("int32", PATCH_FUSED_CALL, (y, y_ps, x, x_rs, x_ps, w, w_os,
                                              E.AccessPtr(rows, E.const(0), "r"), npix, nch,
                                              *rest, lo, hi), "extern")


class _Fuser(Mutator):
    def __init__(self, rows: S.Buffer, acc_name: str, make, reset_name: str | None = None):
        self.rows = rows
        self.acc_name, self.make = acc_name, make
        self.reset_name = reset_name   # the call that zeroes the accumulators first
        self.buffers = {}   # id(data) -> Buffer of fused accumulator rows

    def visit_SeqStmt(self, s):
        parts = [self.stmt(p) for p in s.seq]
        out = []
        k = 0
        while k < len(parts):
            acc_call = _call(_trailing(parts[k]), self.acc_name)
            epi_call = _call(parts[k + 1], EPILOGUE_CALL) if k + 1 < len(parts) else None
            fused = (self.make(acc_call, epi_call, self.rows)
                     if acc_call is not None and epi_call is not None else None)
            if fused is not None:
                data = acc_call.args[0].buffer.data
                new = _with_trailing(parts[k], S.Evaluate(fused))
                if self.reset_name:   # the fused call's sums start from zero
                    if out and self._resets(out[-1], data):
                        out.pop()
                    else:
                        new = self._without_reset(new, data)
                self.buffers[id(data)] = acc_call.args[0].buffer
                out.append(new)
                k += 2
                continue
            out.append(parts[k])
            k += 1
        return S.seq(*out)

    def _resets(self, s, data) -> bool:
        reset = _call(s, self.reset_name)
        return (reset is not None and isinstance(reset.args[0], E.AccessPtr)
                and reset.args[0].buffer.data is data)

    def _without_reset(self, s, data):
        """``s`` without the reset of ``data`` right before its trailing
        statement, inside the scratch buffers it declares (the padded rows'
        buffer holds both calls)."""
        if isinstance(s, S.Allocate):
            return S.Allocate(s.buffer, self._without_reset(s.body, data))
        if isinstance(s, S.SeqStmt):
            seq = list(s.seq)
            if len(seq) >= 2 and self._resets(seq[-2], data):
                del seq[-2]
                return S.seq(*seq)
            return S.seq(*seq[:-1], self._without_reset(seq[-1], data))
        return s


def fuse_conv_epilogue(rows_name: str):
    """The rewrite (``PrimFunc -> PrimFunc``) that fuses every ``aot_conv_s8``
    row call with its epilogue call (``aot_conv_requant_*_s8``), reading the
    rows of the constant parameter ``rows_name``, or returns the function
    itself when there is nothing to fuse or fusing would not be exact."""
    return lambda func: _fuse(func, rows_name, CONV_ACC_CALL, fused_conv_call)


def fuse_row_calls(rows_name: str, acc_name: str, make):
    """The same rewrite for the row calls named ``acc_name`` of another row
    intrinsic (depthwise's rows, :mod:`aot.kernels.depthwise_conv2d.fuse`, and
    the auto tuner's ``dwblock``, :mod:`aot.kernels.depthwise_conv2d.blocked`):
    ``make(acc_call, epi_call, rows)`` builds its fused call, or None when the
    epilogue does not read exactly its accumulators (:func:`reads_the_accumulators`)."""
    return lambda func: _fuse(func, rows_name, acc_name, make)


def fuse_block_epilogue(rows_name: str):
    """The same rewrite for the ``block`` sketch's rows (``aot_block_requant_s8``),
    their reset call dropped; strict: a :class:`ScheduleError` when no row fuses
    (the sketch asked for it only where its loop nest allows it)."""
    def rewrite(func):
        out = _fuse(func, rows_name, BLOCK_ACC_CALL, fused_block_call, BLOCK_RESET_CALL)
        if out is func:
            out = _fuse(func, rows_name, PATCH_ACC_CALL, fused_patch_call, BLOCK_RESET_CALL)
        if out is func:
            raise ScheduleError(f"{func.name}: no blocked row call and its epilogue could "
                                f"be fused (another reader of the accumulators?)")
        return out
    return rewrite


def _fuse(func: S.PrimFunc, rows_name: str, acc_name: str, make,
          reset_name: str | None = None) -> S.PrimFunc:
    rows = [b for b in func.params if b.name == rows_name]
    if len(rows) != 1:
        return func
    fuser = _Fuser(rows[0], acc_name, make, reset_name)
    body = fuser.stmt(func.body)
    if not fuser.buffers:
        return func
    for n in all_nodes(body):
        if (isinstance(n, (E.Load, E.AccessPtr, S.Store))
                and id(n.buffer.data) in fuser.buffers):
            return func  # the accumulator row has another reader or writer
    return func.with_body(drop_allocations(body, fuser.buffers))
