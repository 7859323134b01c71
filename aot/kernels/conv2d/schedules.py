"""The schedule template of conv2d, one per target key, and the row-schedule
pieces depthwise_conv2d's template (:mod:`aot.kernels.depthwise_conv2d.schedules`)
is built from.

Output row by output row: the padded input rows the row needs (when the
convolution pads) are copied into a stack buffer, every (pixel, channel) of
the row accumulates over the taps (and input channels) into a row of
accumulators, then the epilogue requantizes the row.  When those buffers
would pass :data:`STACK_BUDGET` bytes, the same happens one output pixel at
a time.  The knobs (:func:`conv_template`):

* ``tile`` (:func:`tile_knob`): accumulate a whole output ``row`` or one
  ``pixel`` at a time;
* ``accumulate``: the row intrinsic of the int8 helpers (``conv_s8``;
  :mod:`aot.kernels.conv2d.intrin`), one ``dot_s8`` call per tap, or plain
  ``loops`` (``loops_o_inner``: output channels innermost);
* ``widen_input`` (conv_s8), ``unroll_o``, ``unroll_kw``, ``unroll_epilogue``
  (:func:`unroll_knobs`): loop order and unrolling;
* ``requant_row`` (arm_cpu, arm_mve; :func:`epilogue_knobs`): the row's (or
  pixel's) epilogue as one call of ``aot_requant_row_s8``
  (:mod:`aot.kernels.conv2d.helium`): Helium's vector steps, or two outputs
  per step with the DSP extension;
* ``fuse_epilogue`` (arm_cpu, arm_mve): with ``conv_s8`` and ``requant_row``,
  each row's two calls become one ``aot_conv_requant_*_s8`` that requantizes
  from registers, without the row of accumulators
  (:mod:`aot.kernels.conv2d.fuse`).  On by default on arm_cpu for
  convolutions whose window the DSP path widens in one piece
  (:func:`conv_fuses`); Helium keeps its vector epilogue for convolutions.
* ``residual_row`` (arm_mve): an epilogue with a fused residual add (TFLM's
  int8 ADD) as one call of ``aot_requant_add_row_s8`` per row (or pixel),
  four outputs per Helium vector step
  (:func:`aot.kernels.conv2d.helium.residual_pattern`).

The default values *are* the library's schedule: plain loops on ``generic``
and ``riscv`` targets, the row intrinsic plus the epilogue's row helper on
``arm_cpu`` and ``arm_mve``.  A depthwise convolution of one input channel
is computed as a convolution (see :func:`aot.kernels.conv2d.compute.accumulate`)
and scheduled with this template.
"""

from __future__ import annotations

from aot.kernels.conv2d.fuse import CONV_NAME as FUSE_CONV_NAME
from aot.kernels.conv2d.fuse import fuse_conv_epilogue
from aot.kernels.conv2d.helium import (requant_pattern, residual_pattern, tensorize_epilogue,
                                       tensorize_residual)
from aot.kernels.conv2d.intrin import WIDEN_INPUT, tensorize_conv, tensorize_dot
from aot.kernels.conv2d.paths import NAME as NAME_PATHS
from aot.kernels.conv2d.paths import name_conv_paths, widened_path
from aot.kernels.registry import template
from aot.kernels.template import Knob, Template, divisors, extent

#: Bytes of row buffers (accumulators and padded input rows) a convolution
#: keeps on the stack before its schedule falls back to one pixel at a time.
STACK_BUDGET = 4096

_BYTES = {"int8": 1, "int16": 2, "int32": 4, "int64": 8, "float32": 4}


def row_buffer_bytes(stages, fused: bool = False) -> int:
    """Stack bytes of the by-row schedule: one output row of accumulators
    (none when the epilogue is ``fused`` with them) plus the padded input
    rows it reads."""
    acc = stages["acc"]
    total = 0 if fused else extent(acc.shape[2]) * extent(acc.shape[3]) * _BYTES[acc.dtype]
    if "pad" in stages:
        pad = stages["pad"]
        total += (pad.op.attrs["window_rows"] * extent(pad.shape[2]) * extent(pad.shape[3])
                  * _BYTES[pad.dtype])
    return total


def row_fits(stages, fused: bool = False) -> bool:
    """The by-row schedule's buffers fit :data:`STACK_BUDGET`."""
    return row_buffer_bytes(stages, fused) <= STACK_BUDGET


def over_channels(stages) -> bool:
    """The accumulation reduces over input channels (kh, kw, c): a conv2d, or a
    depthwise conv2d of one input channel computed as a convolution."""
    return len(stages["acc"].op.reduce_axis) == 3


def _accumulations(stages) -> tuple[str, ...]:
    """How the accumulators may be computed, the library's intrinsic first."""
    loops = ("loops", "loops_o_inner")
    return ("conv_s8", "dot_s8", *loops) if "dot_s8" in stages else loops


def _fusable(stages) -> bool:
    """The conv row intrinsic applies and the fused helper's requantization
    rows exist (:func:`aot.kernels.conv2d.fuse.conv_requant_rows`), so its
    call and the epilogue's may fuse: only where the DSP path takes the fused
    rows (:func:`conv_fuses`): the helper's fallback reads a pixel's window
    again after writing part of its outputs, which the overlap proof does
    not allow for."""
    return "dot_s8" in stages and "conv_requant" in stages and conv_fuses(stages)


def conv_fuses(stages) -> bool:
    """The fused convolution row takes a DSP path that widens its window
    (:func:`aot.kernels.conv2d.paths.widened_path`: in one piece, or as
    im2col patches).  Elsewhere the fused helper goes through a scratch of
    accumulators, no faster than the two calls."""
    acc = stages["acc"]
    kh, kw, rc = (extent(r.dom.extent) for r in acc.op.reduce_axis)
    return widened_path(kh, kw, rc, acc.op.attrs["dilation"][1]) is not None


def uses_intrinsics(key: str) -> bool:
    """The target key's library schedule calls the support header's row helpers."""
    return key in ("arm_cpu", "arm_mve")


def tile_knob(stages, fused: bool) -> Knob:
    """Whole output rows or one pixel at a time (``fused``: the epilogue may
    fuse with the accumulators, so the row needs only the padded rows)."""
    return Knob("tile", ("row", "pixel") if row_fits(stages, fused) else ("pixel",),
                "accumulate a whole output row (stack buffers) or one pixel at a time "
                "(row with fuse_epilogue off keeps the accumulator row as well, which "
                "may pass STACK_BUDGET)")


def accumulate_knob(accumulations: tuple[str, ...]) -> Knob:
    return Knob("accumulate", accumulations,
                "row intrinsic of the support header, a dot call per tap, or loops")


def unroll_knobs(stages, final) -> list[Knob]:
    """``unroll_o``, ``unroll_kw`` (a kernel wider than one tap) and ``unroll_epilogue``."""
    acc = stages["acc"]
    out = [Knob("unroll_o", divisors(extent(acc.op.axis[3].dom.extent), (1, 2, 4, 8, 16)),
                "loops and dot: output channels per unrolled step")]
    if extent(acc.op.reduce_axis[1].dom.extent) > 1:
        out.append(Knob("unroll_kw", (False, True),
                        "loops and dot: unroll the kernel-width taps"))
    out.append(Knob("unroll_epilogue",
                    divisors(extent(final.op.axis[-1].dom.extent), (1, 2, 4, 8)),
                    "channels per unrolled step of the requantizing epilogue"))
    return out


def epilogue_knobs(key: str, final, fusable: bool) -> list[Knob]:
    """``requant_row`` (and ``fuse_epilogue`` where the row call may fuse with
    it) on arm_cpu and arm_mve, ``residual_row`` on arm_mve."""
    out = []
    if uses_intrinsics(key) and requant_pattern(final) is not None:
        out.append(Knob("requant_row", (True, False),
                        "the whole epilogue of a row (or pixel) as one aot_requant_row_s8 call "
                        "(Helium: four outputs per step, DSP: two; only with "
                        "unroll_epilogue 1)"))
        if fusable:
            out.append(Knob("fuse_epilogue", (True, False),
                            "depthwise_s8 (conv_s8) with requant_row: one "
                            "aot_depthwise_requant_s8 (aot_conv_requant_*_s8) call per row, "
                            "requantizing from registers (only with that accumulate, "
                            "requant_row and unroll_epilogue 1)"))
    if key == "arm_mve" and residual_pattern(final) is not None:
        out.append(Knob("residual_row", (True, False),
                        "an epilogue with a fused residual add as one "
                        "aot_requant_add_row_s8 call per row (or pixel): four outputs "
                        "per Helium vector step (only with unroll_epilogue 1)"))
    return out


def row_defaults(stages, fuse: bool, accumulate: str) -> dict:
    """The library's ``tile``, unrolling and ``accumulate`` values."""
    return {"tile": "row" if row_fits(stages, fuse) else "pixel", "unroll_o": 1,
            "unroll_kw": False, "unroll_epilogue": 1, "accumulate": accumulate}


def epilogue_defaults(key: str, final, fusable: bool, fuse: bool) -> dict:
    """The library's values of :func:`epilogue_knobs`."""
    values = {}
    if uses_intrinsics(key) and requant_pattern(final) is not None:
        values["requant_row"] = True
        if fusable:
            values["fuse_epilogue"] = fuse
    if key == "arm_mve" and residual_pattern(final) is not None:
        values["residual_row"] = True
    return values


def place_rows(s, final, stages, cfg) -> int:
    """Compute the accumulators (and the padded rows they read) per output
    row or pixel (``tile``) and unroll the epilogue; the level of the loop
    they are computed at (1: rows, 2: pixels)."""
    acc = stages["acc"]
    level = 1 if cfg["tile"] == "row" else 2
    s[acc].compute_at(s[final], final.op.axis[level])
    if "pad" in stages:
        s[stages["pad"]].compute_at(s[acc], acc.op.axis[level])
    if cfg["unroll_epilogue"] > 1:
        _, ei = s[final].split(final.op.axis[-1], factor=cfg["unroll_epilogue"])
        s[final].unroll(ei)
    return level


def unrolled_channels(s, acc, cfg) -> list:
    """The output-channel axis split by ``unroll_o`` (inner part unrolled), or
    unsplit for a factor of 1 (no extra loop in the C)."""
    o = acc.op.axis[3]
    if cfg["unroll_o"] == 1:
        return [o]
    inner = list(s[acc].split(o, factor=cfg["unroll_o"]))
    s[acc].unroll(inner[1])
    return inner


def requant_rows(s, final, cfg) -> bool:
    """The epilogue as one ``aot_requant_row_s8`` call per row (or pixel)
    where ``requant_row`` asks for it; whether it does."""
    if not (cfg.get("requant_row") and cfg["unroll_epilogue"] == 1):
        return False
    tensorize_epilogue(s, final, whole_row=cfg["tile"] == "row")
    return True


def residual_rows(s, final, cfg) -> None:
    """The epilogue with its residual add as one call per row (or pixel)
    where ``residual_row`` asks for it."""
    if cfg.get("residual_row") and cfg["unroll_epilogue"] == 1:
        tensorize_residual(s, final, whole_row=cfg["tile"] == "row")


def conv_template(anchor: str, key: str) -> Template:
    """The convolution template on target ``key``, registered for ``anchor``
    (conv2d, and depthwise_conv2d's accumulations of one input channel,
    :mod:`aot.kernels.depthwise_conv2d.schedules`)."""
    intrinsics = uses_intrinsics(key)

    def fusing(stages, final) -> bool:
        """The template has the fuse_epilogue knob (whose "row" tile needs
        only the padded rows on the stack)."""
        return intrinsics and requant_pattern(final) is not None and _fusable(stages)

    def fuse_default(stages, final) -> bool:
        """The library fuses convolutions on arm_cpu where the DSP path takes
        the fused rows (:func:`conv_fuses`)."""
        return fusing(stages, final) and key == "arm_cpu" and conv_fuses(stages)

    def knobs(stages, final) -> list[Knob]:
        out = [tile_knob(stages, fusing(stages, final)), accumulate_knob(_accumulations(stages))]
        if "dot_s8" in stages:
            out.append(Knob("widen_input", (True, False),
                            "conv_s8: widen input chunks once into a stack buffer"))
        return [*out, *unroll_knobs(stages, final),
                *epilogue_knobs(key, final, _fusable(stages))]

    def default_values(stages, final) -> dict:
        fuse = fuse_default(stages, final)
        values = row_defaults(stages, fuse,
                              _accumulations(stages)[0] if intrinsics else "loops")
        if "dot_s8" in stages:
            values["widen_input"] = WIDEN_INPUT
        return {**values, **epilogue_defaults(key, final, _fusable(stages), fuse)}

    def apply(s, final, stages, cfg) -> None:
        _schedule(s, final, stages, cfg)
        if requant_rows(s, final, cfg) and cfg.get("fuse_epilogue") \
                and cfg["accumulate"] == "conv_s8":
            s.rewrite(FUSE_CONV_NAME, fuse_conv_epilogue(stages["conv_requant"].name))
        if cfg["accumulate"] == "conv_s8":   # the unfused rows' widened paths, after fusing
            s.rewrite(NAME_PATHS, name_conv_paths)
        residual_rows(s, final, cfg)

    return Template(anchor, key, knobs, default_values, apply)


def _schedule(s, final, stages, cfg) -> None:
    acc = stages["acc"]
    level = place_rows(s, final, stages, cfg)
    if cfg["accumulate"] == "conv_s8":
        tensorize_conv(s, stages, level, widen=cfg["widen_input"])
        return
    w = acc.op.axis[2]
    inner = unrolled_channels(s, acc, cfg)
    kw = acc.op.reduce_axis[1]
    if cfg["accumulate"] == "dot_s8":
        tensorize_dot(s, stages)
    elif cfg["accumulate"] == "loops_o_inner" and len(inner) == 2:
        # each input value feeds the unroll_o accumulators of the step
        kh, _, rc = acc.op.reduce_axis
        s[acc].reorder(w, inner[0], kh, kw, rc, inner[1])
    if cfg.get("unroll_kw"):
        s[acc].unroll(kw)


for _key in ("arm_cpu", "arm_mve", "riscv"):
    template(conv_template("conv2d", _key))
template(conv_template("conv2d", "generic"), tunable=False)
