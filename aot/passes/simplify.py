"""Rewrites that simplify the graph: scale folding, reshape chains, explicit padding."""

from __future__ import annotations

import numpy as np

from aot.ir import Graph, Node, Tensor, TensorType
from aot.passes.annotated import annotations, rebuild, substitute
from aot.passes.cleanup import prune
from aot.passes.base import graph_pass

#: Which weight axis holds the output channels, per heavy operator.
_OUT_AXIS = {"conv2d": 0, "depthwise_conv2d": 3, "dense": 0}

RESHAPES = ("reshape", "squeeze", "expand_dims")


def _single_user(graph: Graph) -> dict[int, Node]:
    """Map tensor id -> its one consumer, for tensors with exactly one that are not outputs."""
    outputs = {id(t) for t in graph.outputs}
    return {k: users[0] for k, users in graph.consumers().items()
            if len(users) == 1 and k not in outputs}


def _channel_vector(const: Tensor, out_shape: tuple[int, ...]) -> np.ndarray | None:
    """The constant as one value per output channel, if it only varies along the last axis."""
    shape = const.shape
    channels = out_shape[-1]
    if len(shape) > len(out_shape) or any(d != 1 for d in shape[:-1]):
        return None
    if shape and shape[-1] not in (1, channels):
        return None
    return np.broadcast_to(const.data.reshape(-1), (channels,)).astype(np.float32)


def _fold_one(node: Node, user: Node) -> Node | None:
    """``node`` (float conv/dense, no activation) followed by ``user`` as one node, or None."""
    y = node.outputs[0]
    if (y.dtype != "float32" or node.attrs["activation"] != "none"
            or user.op not in ("mul", "add", "sub") or user.outputs[0].shape != y.shape):
        return None
    lhs, rhs = user.inputs
    other = rhs if lhs is y else lhs
    if other is y or not other.is_constant or (user.op == "sub" and rhs is y):
        return None
    vec = _channel_vector(other, y.shape)
    if vec is None:
        return None
    data, weight, bias = (list(node.inputs) + [None])[:3]
    channels = y.shape[-1]
    bias_data = bias.data if bias is not None else np.zeros(channels, np.float32)
    if user.op == "mul":
        axis = _OUT_AXIS[node.op]
        scale = vec.reshape([-1 if i == axis else 1 for i in range(weight.type.rank)])
        weight = Tensor(weight.name + ".scaled", weight.type, "constant",
                        (weight.data * scale).astype(np.float32))
        new_bias = bias_data * vec if bias is not None else None
    else:
        new_bias = bias_data + vec if user.op == "add" else bias_data - vec
    if new_bias is not None:
        name = (bias.name if bias is not None else node.name + ".bias") + ".folded"
        bias = Tensor(name, TensorType((channels,), "float32"), "constant",
                      new_bias.astype(np.float32))
    attrs = dict(node.attrs, activation=user.attrs.get("activation", "none"))
    return Node(node.op, [data, weight, bias], user.outputs, attrs, node.name)


@graph_pass("simplify_inference", opt_level=2)
def simplify_inference(graph: Graph) -> Graph:
    """Fold per-channel ``mul``/``add``/``sub`` by constants into float conv/dense.

    This is how an inference-time batch norm (a per-channel scale then a
    shift) disappears: ``conv(x, W, b) * s + t`` becomes
    ``conv(x, W * s, b * s + t)``, with ``s`` applied along the weights'
    output-channel axis.  Only float32 layers without a fused activation
    whose output has the mul/add as its only reader are rewritten; the
    constant must be a scalar or vary along the last (channel) axis only.
    Results agree with the original within float32 rounding.
    """
    while True:  # one fold per round: a conv may absorb a mul, then an add
        single = _single_user(graph)
        for node in graph.nodes:
            user = single.get(id(node.outputs[0])) if node.op in _OUT_AXIS else None
            fused = _fold_one(node, user) if user is not None else None
            if fused is not None:
                nodes = [fused if n is user else n for n in graph.nodes if n is not node]
                graph = rebuild(graph, nodes)
                break
        else:
            return graph


@graph_pass("canonicalize", opt_level=0)
def canonicalize(graph: Graph) -> Graph:
    """Turn squeeze/expand_dims into reshape, collapse reshape chains, mark views.

    A chain of reshapes whose intermediate results have no other reader
    becomes one reshape from the chain's start; a reshape to the same shape
    disappears (unless its result is a graph output).  Every remaining
    reshape is recorded as a view, whatever its output's quantization (the
    integers are copied raw, as TFLM does): the memory planner gives input
    and output one buffer and the lowering emits no code for it.
    """
    single = _single_user(graph)
    mapping: dict[int, Tensor] = {}
    replaced: dict[Node, Node] = {}
    drop: set[Node] = set()
    outputs = {id(t) for t in graph.outputs}

    def source(t: Tensor) -> Tensor:
        return mapping.get(id(t), t)

    origin: dict[int, Tensor] = {}  # reshape output -> tensor the chain started from
    for node in graph.nodes:
        if node.op not in RESHAPES:
            continue
        x, y = source(node.inputs[0]), node.outputs[0]
        start = origin.get(id(x), x) if single.get(id(x)) is node else x
        if start.quant != y.quant:
            start = x
        if start.shape == y.shape and id(y) not in outputs and start.quant == y.quant:
            mapping[id(y)] = start
            drop.add(node)
            continue
        origin[id(y)] = start
        if node.op != "reshape" or start is not node.inputs[0]:
            replaced[node] = Node("reshape", [start], node.outputs,
                                  {"newshape": y.shape}, node.name)
    nodes = [replaced.get(n, n) for n in graph.nodes]
    result = prune(substitute(rebuild(graph, nodes), mapping, drop=drop))
    views = frozenset(n for n in result.nodes if n.op == "reshape")
    unchanged = (not replaced and not drop and len(result.nodes) == len(graph.nodes)
                 and views == annotations(graph).views)
    return graph if unchanged else rebuild(result, views=views)


def _pad_value_is_neutral(pad: Node, consumer: Node) -> bool:
    """Whether padding with ``pad``'s value equals the consumer's implicit padding."""
    x = pad.inputs[0]
    value = pad.attrs["value"]
    if consumer.op == "max_pool2d":
        # Implicit max-pool padding never wins a max; only the lowest value is as neutral.
        if x.quant is None:
            return value == float("-inf")
        q = x.quant.zero_point[0] + np.round(np.float32(value) / np.float32(x.quant.scale[0]))
        return bool(q <= np.iinfo(x.type.np_dtype).min)
    if x.quant is None:
        return value == 0.0
    # Integer convs pad with the input zero point, which is the real value 0.
    return bool(np.round(np.float32(value) / np.float32(x.quant.scale[0])) == 0)


@graph_pass("fold_pad", opt_level=1)
def fold_pad(graph: Graph) -> Graph:
    """Fold an explicit spatial ``pad`` into the padding of the conv or max-pool reading it.

    Conditions: the pad's only reader is a conv2d, depthwise_conv2d or
    max_pool2d (as its data); only H and W are padded; and the padded value
    equals the implicit one: real 0 for convs (the zero point when
    quantized), the lowest value for max pooling.  Average pooling is never
    folded: its implicit padding is left out of the average, an explicit
    pad is counted in it.
    """
    single = _single_user(graph)
    replaced: dict[Node, Node] = {}
    drop: set[Node] = set()
    for node in graph.nodes:
        if node.op != "pad" or node.inputs[0].type.rank != 4:
            continue
        user = single.get(id(node.outputs[0]))
        if user is None or user.op not in ("conv2d", "depthwise_conv2d", "max_pool2d"):
            continue
        if user.inputs[0] is not node.outputs[0] or user in replaced:
            continue
        (n0, n1), (top, bottom), (left, right), (c0, c1) = node.attrs["pad_width"]
        if n0 or n1 or c0 or c1 or not _pad_value_is_neutral(node, user):
            continue
        if node.inputs[0].quant != node.outputs[0].quant:
            continue
        if user.op == "max_pool2d":
            kh, kw = user.attrs["pool_size"]
            pads = (top, left, bottom, right)
            if any(p >= k for p, k in zip(pads, (kh, kw, kh, kw))):
                continue  # a window inside the padding has no input to take a max of
        t, left0, b, r = user.attrs["padding"]
        attrs = dict(user.attrs, padding=(t + top, left0 + left, b + bottom, r + right))
        replaced[user] = Node(user.op, [node.inputs[0], *user.inputs[1:]], user.outputs,
                              attrs, user.name)
        drop.add(node)
    if not replaced:
        return graph
    nodes = [replaced.get(n, n) for n in graph.nodes if n not in drop]
    return rebuild(graph, nodes)
