"""Depthwise rows and their epilogue as one helper call, without the
accumulator row: each ``aot_depthwise_s8`` call (:mod:`.intrin`) and the
``aot_requant_row_s8`` after it become one ``aot_depthwise_requant_s8``,
which requantizes each block of accumulators straight from registers with
the rows of :func:`aot.kernels.conv2d.fuse.fused_requant_rows` (the identity
and its conditions are documented there, beside the rewrite machinery,
:func:`aot.kernels.conv2d.fuse.fuse_row_calls`, all fused rows share):

    aot_depthwise_s8(acc, ps, x, x_rs, x_cs, w, npix, C, KH, KW, sw, dh, dw);
    aot_requant_row_s8(y, y_ps, acc, ps, bias, table, npix, C, lo, hi);
  ->
    aot_depthwise_requant_s8(y, y_ps, x, x_rs, x_cs, w, rows,
                             npix, C, KH, KW, sw, dh, dw, lo, hi);
"""

from __future__ import annotations

from aot.kernels.conv2d.fuse import fuse_row_calls, reads_the_accumulators
from aot.kernels.depthwise_conv2d.intrin import ACC_CALL
from aot.tir import expr as E
from aot.tir import stmt as S

#: The rewrite's name (``lower``'s dump, docs/kernels.md).
NAME = "fuse_depthwise_epilogue"
FUSED_CALL = "aot_depthwise_requant_s8"


def fused_call(acc_call: E.Call, epi_call: E.Call, rows: S.Buffer) -> E.Call | None:
    """The fused call for one ``aot_depthwise_s8`` call and the epilogue call
    after it, reading ``rows`` (:func:`aot.kernels.conv2d.fuse.fused_requant_rows`),
    or None when the epilogue does not read exactly those accumulators."""
    acc, acc_ps, x, x_rs, x_cs, w, npix, c_n, kh, kw, sw, dh, dw = acc_call.args
    y, y_ps, *_, lo, hi = epi_call.args
    if not reads_the_accumulators(acc, acc_ps, npix, c_n, epi_call):
        return None
    return E.Call("int32", FUSED_CALL, (y, y_ps, x, x_rs, x_cs, w,
                                        E.AccessPtr(rows, E.const(0), "r"), npix, c_n, kh,
                                        kw, sw, dh, dw, lo, hi), "extern")


def fuse_depthwise_epilogue(rows_name: str):
    """The rewrite (``PrimFunc -> PrimFunc``) that fuses every depthwise row
    call with its epilogue call, reading the rows of the constant parameter
    ``rows_name``, or returns the function itself when there is nothing to
    fuse or fusing would not be exact."""
    return fuse_row_calls(rows_name, ACC_CALL, fused_call)
