"""Which path of the int8 convolution helpers a call takes, decided when the
C is generated.

``aot_conv2d.h`` offers each path of a convolution row as its own entry
point instead of one always-inline dispatcher choosing among them by its
constant arguments: inlined, every branch of such a dispatcher is a copy of
``aot_conv_wide_s8`` that GCC optimises before constant propagation prunes
all but one (docs/compile.md, "Compile time").  The rule is written here,
once: :func:`widened_path` says whether the DSP extension's widened path
takes a window, which :func:`aot.kernels.conv2d.schedules.conv_fuses` asks
before fusing a row with its epilogue and :func:`fused_row_helper` asks to
name the fused call; :func:`accumulate_path` adds the unfused row's one
kernel row at a time, and :func:`name_conv_paths` names the unfused calls.
The chunk sizes stay in C (``aot_wide_chunk``, ``aot_patch_chunk``),
computed from the same constants.

The rule depends on the shape only.  Which instructions a path uses is the
C preprocessor's choice, as for every helper: each widened entry point is
the DSP extension's path where ``AOT_HAVE_DSP`` is defined without
``AOT_HAVE_MVE`` (so also on a Helium core whose file defines
``AOT_NO_MVE``: the ``vector_isa`` knob), and the portable or Helium
``aot_conv_s8`` (or the fused scratch row) elsewhere.
"""

from __future__ import annotations

from aot.kernels.support import header_define
from aot.tir import expr as E
from aot.tir import stmt as S
from aot.tir.functor import Mutator

#: Words of the DSP path's widening buffer and of the smaller one for
#: im2col patches, read from their one definition (``AOT_WIDE_WORDS``,
#: ``AOT_PATCH_WORDS`` of include/aot_kernel_int8.h).
WIDE_WORDS = header_define("AOT_WIDE_WORDS")
PATCH_WORDS = header_define("AOT_PATCH_WORDS")

#: The rewrite's name (``lower``'s dump, docs/kernels.md).
NAME = "name_conv_paths"

#: The fused rows' entry points by path (include/aot_conv2d.h): the three
#: that widen (DSP, no Helium) and the portable one, for every other call.
FUSED_WIDE = "aot_conv_requant_wide_s8"
FUSED_PATCH = "aot_conv_requant_patch_s8"
FUSED_LONG_PATCH = "aot_conv_requant_long_patch_s8"
FUSED_SCRATCH = "aot_conv_requant_scratch_s8"
_FUSED = {"wide": FUSED_WIDE, "patch": FUSED_PATCH, "long_patch": FUSED_LONG_PATCH}

#: The unfused row call the conv_s8 intrinsic writes (portable, Helium), and
#: its widened entry points by path (DSP, no Helium).
CONV_CALL = "aot_conv_s8"
ACC_WIDE = "aot_conv_acc_wide_s8"
ACC_ROWS = "aot_conv_acc_rows_s8"
ACC_PATCH = "aot_conv_acc_patch_s8"
ACC_LONG_PATCH = "aot_conv_acc_long_patch_s8"
_ACC = {"wide": ACC_WIDE, "rows": ACC_ROWS, "patch": ACC_PATCH, "long_patch": ACC_LONG_PATCH}

#: The fused rows that write each chunk of pixels only after widening its
#: windows (aot/kernels/overlap.py orders their reads and writes per pixel).
PIXEL_ORDERED = frozenset(_FUSED.values())


def widened_path(kh: int, kw: int, c_n: int, dw: int) -> str | None:
    """The DSP extension's widened path for a window of ``kh x kw`` taps
    ``dw`` columns apart over ``c_n`` channels with contiguous columns:
    ``"wide"`` when the channels are a multiple of four and one pixel's
    window, all kernel rows, fits the widening buffer (``aot_wide_chunk`` >
    0); im2col patches (few channels) when kernel rows of whole words make a
    patch that fits it, ``"patch"`` when the patch fits the smaller
    ``AOT_PATCH_WORDS`` buffer (a chunk of two patches costs no more
    widening than a long one: less stack, as fast), ``"long_patch"``
    otherwise; None when no widened path takes it."""
    if c_n % 4 == 0 and kh * ((kw - 1) * dw + 1) * c_n <= 2 * WIDE_WORDS:
        return "wide"
    if dw == 1 and (kw * c_n) % 4 == 0 and kh * kw * c_n <= 2 * WIDE_WORDS:
        return "patch" if kh * kw * c_n <= PATCH_WORDS else "long_patch"
    return None


def accumulate_path(kh: int, kw: int, c_n: int, dw: int) -> str | None:
    """:func:`widened_path` for the unfused row, which also takes a window
    too big for the buffer one kernel row at a time (``"rows"``: each row's
    sums added to those of the rows before it; ResNet-8's 3x3 layers of 64
    channels) when one kernel row's window takes the ``"wide"`` path."""
    path = widened_path(kh, kw, c_n, dw)
    if path != "wide" and kh > 1 and widened_path(1, kw, c_n, dw) == "wide":
        return "rows"
    return path


def _constant_path(rule, x_cs, kh, kw, c_n, dw, widen) -> str | None:
    """``rule(kh, kw, c_n, dw)`` for the arguments of an ``aot_conv_s8``
    call (TIR expressions) when every deciding argument is a constant,
    ``widen`` is set and the columns are contiguous (``x_cs == c_n``); None
    otherwise (non-constant arguments, or the tuner's ``widen_input`` off)."""
    values = [a.value if isinstance(a, E.IntImm) else None
              for a in (x_cs, kh, kw, c_n, dw, widen)]
    if None in values:
        return None
    x_cs, kh, kw, c_n, dw, widen = values
    return rule(kh, kw, c_n, dw) if widen and x_cs == c_n else None


def fused_row_helper(x_cs, kh, kw, c_n, dw, widen) -> str:
    """The fused row's entry point for the arguments of an ``aot_conv_s8``
    call (TIR expressions): a widened path when :func:`_constant_path` finds
    one; the portable scratch path otherwise, which is correct for any shape."""
    return _FUSED.get(_constant_path(widened_path, x_cs, kh, kw, c_n, dw, widen),
                      FUSED_SCRATCH)


class _Namer(Mutator):
    def visit_Call(self, e):
        e = self.default_expr(e)
        if e.name != CONV_CALL:
            return e
        acc, acc_ps, x, x_rs, x_cs, w, npix, oc, kh, kw, c_n, sw, dh, dw, widen = e.args
        path = _constant_path(accumulate_path, x_cs, kh, kw, c_n, dw, widen)
        if path is None:
            return e
        return E.Call(e.dtype, _ACC[path],
                      (acc, acc_ps, x, x_rs, w, npix, oc, kh, kw, c_n, sw, dh, dw), e.kind)


def name_conv_paths(func: S.PrimFunc) -> S.PrimFunc:
    """``func`` with each ``aot_conv_s8`` call that takes a widened path
    (:func:`accumulate_path`, constant arguments) calling that path's entry
    point instead, which takes neither ``x_cs`` (it is ``c_n``) nor
    ``widen``; the others stay ``aot_conv_s8``."""
    return func.with_body(_Namer().stmt(func.body))
