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


# Row by row like conv2d: the padded input rows, then each channel's (kh, kw) taps.
strategy("depthwise_conv2d")(schedule_by_output_row)
