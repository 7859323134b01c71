"""The tensor expression of DEPTHWISE_CONV_2D: NHWC activations, 1HWC weights
(C = input channels x multiplier).

Output channel ``o`` reads input channel ``o // depth_multiplier``; the
arithmetic is conv2d's (:mod:`aot.kernels.conv2d.compute`) with the channel
reduction removed (one input channel: computed as a convolution).  Where the
row helper applies, the rule also keeps the fused helper's requantization
rows (``dw_requant``) for a schedule that fuses the epilogue.
"""

from __future__ import annotations

import numpy as np

from aot.kernels.conv2d.compute import accumulate, epilogue
from aot.kernels.conv2d.fuse import fused_requant_rows
from aot.kernels.registry import Computed, compute_rule


# its row helpers and the tuner's dwblock rows (blocked.py); conv2d's headers for their
# epilogue rows and where one input channel is computed as a convolution
@compute_rule("depthwise_conv2d",
              headers=("aot_conv2d.h", "aot_depthwise.h", "aot_block.h", "aot_dwblock.h"))
def depthwise_conv2d(ctx, node) -> Computed:
    acc, bias, qp, macs, stages = accumulate(ctx, node, depthwise=True)
    if "depthwise_s8" in stages:
        rows = _fused_rows(node, qp)
        if rows is not None:
            # the fused row helper's requantization (depthwise_conv2d.fuse), read instead of
            # the bias and table when the schedule fuses the epilogue
            stages["dw_requant"] = ctx.const(f"{node.name}_dwq", rows)
    return Computed(epilogue(ctx, node, acc, bias, qp), stages, macs)


def _fused_rows(node, qp):
    _, w_t, b_t = node.inputs
    weights = np.asarray(w_t.data)
    if node.outputs[0].dtype != "int8" or qp.wide:
        return None
    folded = (np.zeros(weights.shape[-1], np.int64) if b_t is None
              else np.asarray(b_t.data, np.int64).reshape(-1))
    folded = folded + qp.input_offset * weights.astype(np.int64).sum(axis=(0, 1, 2))
    folded = ((folded + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)  # the kernel's int32 bias
    return fused_requant_rows(weights, folded, qp.multiplier, qp.shift, qp.output_offset)
