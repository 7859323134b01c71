"""The schedules of depthwise_conv2d: the template per target key, and the
blocked rows the auto tuner's ``dwblock`` sketch offers.

* :func:`depthwise_template`: channels innermost for each pixel and tap, or
  one ``aot_depthwise_s8`` per row (:mod:`.intrin`) on arm_cpu and arm_mve,
  fused with its epilogue (:mod:`.fuse`); built from conv2d's row-schedule
  pieces (:mod:`aot.kernels.conv2d.schedules`: the tile, unrolling and
  epilogue knobs and their schedule), whose template it is for a depthwise
  convolution of one input channel (computed as a convolution).  Its default
  is the library's schedule.
* :func:`dwblock_knobs` and :func:`apply_dwblock`: the space and the schedule of
  the blocked depthwise intrinsic (:mod:`aot.kernels.depthwise_conv2d.blocked`,
  ``aot_dwblock_s8``): a block of output rows per call, kernel columns of one
  channel paired for SMLAD, the input rows widened channel-planar into a stack
  buffer.  :mod:`aot.tune.auto.sketch` offers it to every accumulation marked
  ``depthwise_s8``.
"""

from __future__ import annotations

from aot.kernels.conv2d.helium import requant_pattern
from aot.kernels.conv2d.schedules import (STACK_BUDGET, accumulate_knob, conv_template,
                                          epilogue_defaults, epilogue_knobs, over_channels,
                                          place_rows, requant_rows, residual_rows,
                                          row_defaults, tile_knob, unroll_knobs,
                                          unrolled_channels, uses_intrinsics)
from aot.kernels.depthwise_conv2d import blocked as dwb
from aot.kernels.depthwise_conv2d.fuse import NAME as FUSE_NAME
from aot.kernels.depthwise_conv2d.fuse import fuse_depthwise_epilogue
from aot.kernels.depthwise_conv2d.intrin import tensorize_depthwise
from aot.kernels.registry import template
from aot.kernels.template import ConfigError, Knob, Template, divisors, extent


def dwblock_rows(stages, final, fused: bool) -> tuple[int, ...]:
    """Output rows per ``dwblock`` call: divisors of the output height (up to
    :data:`~aot.kernels.depthwise_conv2d.blocked.MAX_ROWS`) whose padded input
    rows, and unless ``fused`` accumulators, fit the stack budget and whose
    widened input fits the buffer in chunks of some channels."""
    acc = stages["depthwise_s8"]
    oh, ow, oc, (kh, _), (sh, _) = dwb.geometry(acc)
    out = []
    for r in divisors(oh, tuple(range(1, dwb.MAX_ROWS + 1))):
        pad = 0
        if "pad" in stages:
            p = stages["pad"]
            pad = ((r - 1) * sh + kh) * extent(p.shape[2]) * extent(p.shape[3])
        accs = 0 if fused else r * ow * oc * 4
        if pad + accs <= STACK_BUDGET and dwb.chunks(acc, r):
            out.append(r)
    return tuple(out)


def dwblock_knobs(stages, final) -> list[Knob] | None:
    """The annotations of the ``dwblock`` sketch, or None where it does not
    apply (not a depthwise int8 accumulation the helper computes, or no block
    of rows within the stack budget).  The epilogue has one form per
    workload: ``fused`` (the sums requantized from registers by
    ``aot_dwblock_requant_s8``) where the fused helper's rows exist, else
    ``row`` (the block's accumulators, then one ``aot_requant_row_s8`` call)
    where it is the one-rounding requantization, else ``loops`` (its own)."""
    acc = stages.get("depthwise_s8")
    if acc is None or not dwb.applies(acc):
        return None
    # one form per workload: the fused one where its rows exist (a row of
    # accumulators and a separate call is never faster), else the row call
    if requant_pattern(final) is None:
        epilogues = ("loops",)
    elif "dw_requant" in stages:
        epilogues = ("fused",)
    else:
        epilogues = ("row",)
    rows = dwblock_rows(stages, final, fused=epilogues[0] == "fused")
    if not rows:
        return None
    sizes = sorted({c for r in rows for c in dwb.chunks(acc, r)})
    return [Knob("rows", rows, "output rows per call (each input row widened once per call)"),
            Knob("pixels", dwb.pixel_blocks(acc),
                 "output pixels per register block (per channel)"),
            Knob("channels", tuple(sizes), "channels widened per chunk into the stack buffer"),
            Knob("unroll_widen", (False, True), "the widening's column pairs four at a time"),
            Knob("epilogue", epilogues, "requantized from registers, one call per block of "
                                        "rows, or loops")]


def apply_dwblock(s, final, stages, cfg) -> None:
    """Schedule the ``dwblock`` sketch with annotations ``cfg`` (a
    :class:`ConfigError` for a chunk of channels whose widened rows do not fit
    the buffer, or accumulators over the stack budget: ``rows`` with ``row``)."""
    acc = stages["acc"]
    nrow = cfg["rows"]
    if cfg["channels"] not in dwb.chunks(acc, nrow):
        raise ConfigError(f"{cfg['channels']} channels of {nrow} rows do not fit the "
                          f"widening buffer ({dwb.WIDE_MAX} values)")
    if nrow not in dwblock_rows(stages, final, fused=cfg["epilogue"] == "fused"):
        raise ConfigError(f"{nrow} rows of accumulators are over the stack budget "
                          f"(epilogue {cfg['epilogue']})")
    ho, hi = s[final].split(final.op.axis[1], factor=nrow)
    s[acc].compute_at(s[final], ho)
    if "pad" in stages:
        # inside the accumulation's (single) batch loop, before its rows: the
        # padded input rows of the whole block of rows
        s[stages["pad"]].compute_at(s[acc], acc.op.axis[0])
    # fused: the weights doubled, so the sums are the doubled values the
    # requantization starts from
    dwb.tensorize_dwblock(s, stages, nrow, cfg["pixels"], cfg["channels"],
                          dbl=cfg["epilogue"] == "fused",
                          unroll_widen=bool(cfg.get("unroll_widen")))
    if cfg["epilogue"] in ("fused", "row"):
        _, _, _, lo, hi_ = requant_pattern(final)
        _, ow, oc, _, _ = dwb.geometry(acc)
        s[final].tensorize(hi, dwb.requant_rows_intrin(nrow, ow, oc, lo, hi_))
    if cfg["epilogue"] == "fused":
        s.rewrite(dwb.FUSE_NAME, dwb.fuse_dwblock_epilogue(stages["dw_requant"].name))


def _accumulations(stages) -> tuple[str, ...]:
    """How the accumulators may be computed, the library's intrinsic first."""
    return ("depthwise_s8", "loops") if "depthwise_s8" in stages else ("loops",)


def _fusable(stages) -> bool:
    """The row intrinsic applies and the fused helper's requantization rows
    exist (``dw_requant``, :mod:`aot.kernels.depthwise_conv2d.compute`), so
    its call and the epilogue's may fuse."""
    return "depthwise_s8" in stages and "dw_requant" in stages


def depthwise_template(key: str) -> Template:
    """The template of depthwise_conv2d on target ``key``: conv2d's
    (:func:`aot.kernels.conv2d.schedules.conv_template`) for an accumulation
    over input channels (one input channel, computed as a convolution)."""
    conv = conv_template("depthwise_conv2d", key)
    intrinsics = uses_intrinsics(key)

    def fusing(stages, final) -> bool:
        """The template has the fuse_epilogue knob (whose "row" tile needs
        only the padded rows on the stack); the library fuses wherever it can."""
        return intrinsics and requant_pattern(final) is not None and _fusable(stages)

    def knobs(stages, final) -> list[Knob]:
        if over_channels(stages):
            return conv.knobs(stages, final)
        return [tile_knob(stages, fusing(stages, final)),
                accumulate_knob(_accumulations(stages)),
                Knob("taps_outer", (False, True),
                     "loops: the taps (kh, kw) outside the pixels of the row"),
                *unroll_knobs(stages, final),
                *epilogue_knobs(key, final, _fusable(stages))]

    def default_values(stages, final) -> dict:
        if over_channels(stages):
            return conv.default_values(stages, final)
        fuse = fusing(stages, final)
        values = row_defaults(stages, fuse,
                              _accumulations(stages)[0] if intrinsics else "loops")
        values["taps_outer"] = False
        return {**values, **epilogue_defaults(key, final, _fusable(stages), fuse)}

    def apply(s, final, stages, cfg) -> None:
        if over_channels(stages):
            conv.apply(s, final, stages, cfg)
            return
        _schedule(s, final, stages, cfg)
        if requant_rows(s, final, cfg) and cfg.get("fuse_epilogue") \
                and cfg["accumulate"] == "depthwise_s8":
            s.rewrite(FUSE_NAME, fuse_depthwise_epilogue(stages["dw_requant"].name))
        residual_rows(s, final, cfg)

    return Template("depthwise_conv2d", key, knobs, default_values, apply)


def _schedule(s, final, stages, cfg) -> None:
    acc = stages["acc"]
    level = place_rows(s, final, stages, cfg)
    if cfg["accumulate"] == "depthwise_s8":
        tensorize_depthwise(s, stages, level)
        return
    w = acc.op.axis[2]
    inner = unrolled_channels(s, acc, cfg)
    # channels innermost: for each pixel and tap all channels accumulate at
    # once, reading the input rows, the weights and the accumulators contiguously
    kh, kw = acc.op.reduce_axis
    if cfg["taps_outer"]:
        s[acc].reorder(kh, kw, w, *inner)
    else:
        s[acc].reorder(w, kh, kw, *inner)
    if cfg.get("unroll_kw"):
        s[acc].unroll(kw)


for _key in ("arm_cpu", "arm_mve", "riscv"):
    template(depthwise_template(_key))
template(depthwise_template("generic"), tunable=False)
