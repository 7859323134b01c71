"""DEPTHWISE_CONV_2D: NHWC activations, 1HWC weights (C = input channels x multiplier).

Output channel ``o`` reads input channel ``o // depth_multiplier``; the
arithmetic is conv2d's (see :mod:`aot.kernels.conv2d`) with the channel
reduction removed.
"""

from __future__ import annotations

from aot.kernels.conv2d import accumulate, epilogue
from aot.kernels.registry import Computed, compute_rule, strategy


@compute_rule("depthwise_conv2d")
def depthwise_conv2d(ctx, node) -> Computed:
    acc, bias, qp, macs = accumulate(ctx, node, depthwise=True)
    return Computed(epilogue(ctx, node, acc, bias, qp), {"acc": acc}, macs)


@strategy("depthwise_conv2d")
def schedule_depthwise_generic(s, final, stages) -> None:
    """One output element at a time, the (kh, kw) window innermost."""
    s[stages["acc"]].compute_at(s[final], final.op.axis[-1])
