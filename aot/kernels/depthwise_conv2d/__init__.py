"""DEPTHWISE_CONV_2D: NHWC activations, 1HWC weights (C = input channels x multiplier).

Output channel ``o`` reads input channel ``o // depth_multiplier``; the
arithmetic is conv2d's (:mod:`aot.kernels.conv2d.compute`) with the channel
reduction removed, and so is the schedule template
(:mod:`aot.kernels.conv2d.schedules`: channels innermost for each pixel and
tap, or one ``aot_depthwise_s8`` per row on arm_cpu).
"""

from __future__ import annotations

from aot.kernels.conv2d.compute import accumulate, epilogue
from aot.kernels.conv2d.schedules import conv_template
from aot.kernels.registry import Computed, compute_rule, template


@compute_rule("depthwise_conv2d")
def depthwise_conv2d(ctx, node) -> Computed:
    acc, bias, qp, macs, stages = accumulate(ctx, node, depthwise=True)
    return Computed(epilogue(ctx, node, acc, bias, qp), stages, macs)


for _key in ("arm_cpu", "arm_mve", "riscv"):
    template(conv_template("depthwise_conv2d", _key))
template(conv_template("depthwise_conv2d", "generic"), tunable=False)
