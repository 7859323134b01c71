"""The schedules of depthwise_conv2d: the template per target key, and the
blocked rows the auto tuner's ``dwblock`` sketch offers.

* The template is conv2d's (:func:`aot.kernels.conv2d.schedules.conv_template`,
  whose knobs cover both: channels innermost for each pixel and tap, or one
  ``aot_depthwise_s8`` per row on arm_cpu and arm_mve, fused with its
  epilogue); its default is the library's schedule.
* :func:`dwblock_knobs` and :func:`apply_dwblock`: the space and the schedule of
  the blocked depthwise intrinsic (:mod:`aot.kernels.depthwise_conv2d.blocked`,
  ``aot_dwblock_s8``): a block of output rows per call, kernel columns of one
  channel paired for SMLAD, the input rows widened channel-planar into a stack
  buffer.  :mod:`aot.tune.auto.sketch` offers it to every accumulation marked
  ``depthwise_s8``.
"""

from __future__ import annotations

from aot.kernels.conv2d.helium import requant_pattern
from aot.kernels.conv2d.schedules import STACK_BUDGET, conv_template
from aot.kernels.depthwise_conv2d import blocked as dwb
from aot.kernels.registry import template
from aot.kernels.template import ConfigError, Knob, divisors, extent


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


for _key in ("arm_cpu", "arm_mve", "riscv"):
    template(conv_template("depthwise_conv2d", _key))
template(conv_template("depthwise_conv2d", "generic"), tunable=False)
