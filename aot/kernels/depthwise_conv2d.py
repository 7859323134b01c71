"""DEPTHWISE_CONV_2D: NHWC activations, 1HWC weights (C = input channels x multiplier).

Output channel ``o`` reads input channel ``o // depth_multiplier``; the
arithmetic is conv2d's (see :mod:`aot.kernels.conv2d`) with the channel
reduction removed.
"""

from __future__ import annotations

from aot.kernels.conv2d import accumulate, epilogue, schedule_by_output_row
from aot.kernels.registry import Computed, compute_rule, strategy


@compute_rule("depthwise_conv2d")
def depthwise_conv2d(ctx, node) -> Computed:
    acc, bias, qp, macs, stages = accumulate(ctx, node, depthwise=True)
    return Computed(epilogue(ctx, node, acc, bias, qp), stages, macs)


@strategy("depthwise_conv2d")
def schedule_depthwise_generic(s, final, stages) -> None:
    """Row by row like conv2d (padded input rows, a row of accumulators), with
    the channel loop innermost: for each pixel and tap (kh, kw) all channels
    accumulate at once, reading the input rows, the weights and the
    accumulators contiguously."""
    schedule_by_output_row(s, final, stages)
    acc = stages["acc"]
    if len(acc.op.reduce_axis) != 2:
        return  # one input channel: computed as a convolution (see conv2d.accumulate)
    _, _, w, o = acc.op.axis
    kh, kw = acc.op.reduce_axis
    s[acc].reorder(w, kh, kw, o)
