"""Legalization of quantized operators: fixed-point constants computed at compile time."""

from __future__ import annotations

import numpy as np

from aot.ir import Graph, Node, Tensor
from aot.passes.annotated import QuantParams, annotations, rebuild
from aot.passes.base import graph_pass
from aot.quant import arith as quant
from aot.quant.params import f32

_ACT = {"none": None, "relu": "RELU", "relu6": "RELU6", "relu_n1_to_1": "RELU_N1_TO_1"}
_HEAVY = ("conv2d", "depthwise_conv2d", "dense")


def _scales(t: Tensor) -> np.ndarray:
    return np.asarray(t.quant.scale, dtype=np.float32)


def _zp(t: Tensor) -> int:
    return int(t.quant.zero_point[0])


def _clamp(node: Node, y: Tensor) -> tuple[int, int]:
    act = _ACT[node.attrs.get("activation", "none")]
    return quant.out_range(act, f32(y.quant.scale[0]), _zp(y), y.type.np_dtype)


def _heavy(node: Node) -> QuantParams:
    x, w, bias = (list(node.inputs) + [None])[:3]
    y = node.outputs[0]
    channels = y.shape[-1]
    # The effective scale and its rounding are exactly the reference kernels'
    # (aot.reference.ops.common.requantize): float32 scales widened to double.
    ws = np.broadcast_to(_scales(w).reshape(-1), (channels,))
    eff = [f32(x.quant.scale[0]) * float(s) / f32(y.quant.scale[0]) for s in ws]
    mult, shift = quant.quantize_multipliers(eff)
    wide = x.dtype == "int16" and (bias is None or bias.dtype == "int64")
    extra = {}
    if node.op == "dense" and _zp(w):
        extra["weight_offset"] = -_zp(w)
    return QuantParams(mult, shift, -_zp(x), _zp(y), _clamp(node, y), wide, extra)


def _add_sub(node: Node) -> QuantParams:
    x1, x2 = node.inputs
    y = node.outputs[0]
    left_shift = 15 if y.dtype == "int16" else 20
    s1, s2, so = f32(x1.quant.scale[0]), f32(x2.quant.scale[0]), f32(y.quant.scale[0])
    twice_max = 2.0 * max(s1, s2)
    m1, e1 = quant.quantize_multiplier(s1 / twice_max)
    m2, e2 = quant.quantize_multiplier(s2 / twice_max)
    mo, eo = quant.quantize_multiplier(twice_max / ((1 << left_shift) * so))
    extra = {"left_shift": left_shift, "input1": (m1, e1), "input2": (m2, e2),
             "input2_offset": -_zp(x2)}
    return QuantParams(np.array([mo]), np.array([eo]), -_zp(x1), _zp(y), _clamp(node, y),
                       False, extra)


def _mul(node: Node) -> QuantParams:
    x1, x2 = node.inputs
    y = node.outputs[0]
    m, e = quant.quantize_multiplier(
        f32(x1.quant.scale[0]) * f32(x2.quant.scale[0]) / f32(y.quant.scale[0]))
    return QuantParams(np.array([m]), np.array([e]), -_zp(x1), _zp(y), _clamp(node, y),
                       False, {"input2_offset": -_zp(x2)})


def _pool(node: Node) -> QuantParams:
    x, y = node.inputs[0], node.outputs[0]
    empty = np.zeros(0, dtype=np.int64)
    return QuantParams(empty, empty, -_zp(x), _zp(y), _clamp(node, y))


def _is_integer(node: Node) -> bool:
    return all(t.quant is not None and not t.quant.is_per_axis
               for t in [node.inputs[0], node.outputs[0]]) and node.outputs[0].dtype != "float32"


def quant_params(node: Node) -> QuantParams | None:
    """The folded constants of one node, or None if it has none (float, or not legalized)."""
    if not _is_integer(node):
        return None
    if node.op in _HEAVY:
        return _heavy(node)
    if node.op in ("add", "sub") and node.outputs[0].dtype in ("int8", "int16"):
        return _add_sub(node)
    if node.op == "mul" and node.outputs[0].dtype in ("int8", "int16"):
        return _mul(node)
    if node.op in ("avg_pool2d", "max_pool2d"):
        return _pool(node)
    return None


@graph_pass("legalize_quantized", opt_level=0)
def legalize_quantized(graph: Graph) -> Graph:
    """Attach compile-time requantization constants to integer conv, dense, add, mul, pool.

    Per output channel ``(multiplier, shift) = QuantizeMultiplier(s_x * s_w[c] / s_y)``
    (conv, depthwise, dense), ADD/SUB's input and output multipliers with
    their left shift, MUL's single multiplier, and every node's offsets and
    activation clamp range: the same numbers the reference kernels derive
    at run time, so a kernel reading them computes the same bits.  Other
    integer operators (softmax, logistic, tanh, svdf, lstm) keep deriving
    their tables in the kernel for now.  The graph itself is unchanged.
    """
    params = dict(annotations(graph).quant)
    for node in graph.nodes:
        if node not in params:
            found = quant_params(node)
            if found is not None:
                params[node] = found
    if len(params) == len(annotations(graph).quant):
        return graph
    return rebuild(graph, quant=params)
