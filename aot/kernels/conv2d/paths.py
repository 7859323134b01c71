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
name the fused call.  The chunk sizes stay in C (``aot_wide_chunk``,
``aot_patch_chunk``), computed from the same constants.
"""

from __future__ import annotations

from aot.kernels.support import header_define
from aot.tir import expr as E

#: Words of the DSP path's widening buffer, read from its one definition
#: (``AOT_WIDE_WORDS`` of include/aot_kernel_int8.h).
WIDE_WORDS = header_define("AOT_WIDE_WORDS")

#: The fused rows' entry points by path (include/aot_conv2d.h): the two that
#: widen (DSP, no Helium) and the portable one, for every other call.
FUSED_WIDE = "aot_conv_requant_wide_s8"
FUSED_PATCH = "aot_conv_requant_patch_s8"
FUSED_SCRATCH = "aot_conv_requant_scratch_s8"
_FUSED = {"wide": FUSED_WIDE, "patch": FUSED_PATCH}

#: The fused rows that write each chunk of pixels only after widening its
#: windows (aot/kernels/overlap.py orders their reads and writes per pixel).
PIXEL_ORDERED = frozenset(_FUSED.values())


def widened_path(kh: int, kw: int, c_n: int, dw: int) -> str | None:
    """The DSP extension's widened path for a window of ``kh x kw`` taps
    ``dw`` columns apart over ``c_n`` channels with contiguous columns:
    ``"wide"`` when the channels are a multiple of four and one pixel's
    window, all kernel rows, fits the widening buffer (``aot_wide_chunk`` >
    0); ``"patch"`` (few channels) when kernel rows of whole words make an
    im2col patch that fits it; None otherwise."""
    if c_n % 4 == 0 and kh * ((kw - 1) * dw + 1) * c_n <= 2 * WIDE_WORDS:
        return "wide"
    if dw == 1 and (kw * c_n) % 4 == 0 and kh * kw * c_n <= 2 * WIDE_WORDS:
        return "patch"
    return None


def fused_row_helper(x_cs, kh, kw, c_n, dw, widen) -> str:
    """The fused row's entry point for the arguments of an ``aot_conv_s8``
    call (TIR expressions): a widened path when every deciding argument is a
    constant, ``widen`` is set and the columns are contiguous (``x_cs ==
    c_n``); the portable scratch path otherwise (non-constant arguments, or
    the tuner's ``widen_input`` off), which is correct for any shape."""
    values = [a.value if isinstance(a, E.IntImm) else None
              for a in (x_cs, kh, kw, c_n, dw, widen)]
    if None in values:
        return FUSED_SCRATCH
    x_cs, kh, kw, c_n, dw, widen = values
    path = widened_path(kh, kw, c_n, dw) if widen and x_cs == c_n else None
    return _FUSED.get(path, FUSED_SCRATCH)
