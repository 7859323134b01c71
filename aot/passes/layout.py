"""The layout check: every windowed kernel reads NHWC data."""

from __future__ import annotations

from aot.errors import PassError
from aot.ir import Graph
from aot.passes.base import PassConfig, graph_pass

_WINDOWED = ("conv2d", "depthwise_conv2d", "avg_pool2d", "max_pool2d")


@graph_pass("check_layout", opt_level=0)
def check_layout(graph: Graph) -> Graph:
    """Check that conv and pool nodes see NHWC data and OHWI/1HWC weights; change nothing.

    The kernels are written for NHWC only (the layout TFLite uses and
    microcontroller kernels prefer: channels innermost).  The IR fixes
    this layout, so the check guards against a frontend that hands over
    channel-first data (rank-4 data whose channel count disagrees with the
    weights) and against asking for another layout in the pass config.
    """
    wanted = PassConfig.current().get("layout")
    if wanted != "NHWC":
        raise PassError(f"layout {wanted!r} is not supported yet: kernels expect NHWC")
    for node in graph.nodes:
        if node.op not in _WINDOWED:
            continue
        data = node.inputs[0]
        if data.type.rank != 4:
            raise PassError(f"{node.label()}: data must be NHWC (rank 4), got shape "
                            f"{list(data.shape)}")
        if node.op == "conv2d":
            weight = node.inputs[1]
            if weight.shape[3] != data.shape[3]:
                raise PassError(f"{node.label()}: weights are not OHWI for NHWC data "
                                f"{list(data.shape)}: got {list(weight.shape)}")
        if node.op == "depthwise_conv2d":
            weight = node.inputs[1]
            if weight.shape[0] != 1 or weight.shape[3] % data.shape[3]:
                raise PassError(f"{node.label()}: weights are not 1HWC for NHWC data "
                                f"{list(data.shape)}: got {list(weight.shape)}")
    return graph
