"""Run a :class:`~aot.ir.Graph` with the numpy reference kernels.

This is the semantic ground truth of the project: integer graphs give the
same bits as TFLite Micro, float graphs agree within 1e-5 relative.  The
arithmetic lives in :mod:`aot.reference.ops` (pure functions on arrays);
this module walks the graph in its node order, maps each node's IR
attributes and tensor quantization onto a kernel's arguments, and keeps the
state of variable tensors.

State follows TFLM: a :class:`Session` starts with every variable tensor
zero (for quantized state: the zero point), each invocation reads and
updates it, and :meth:`Session.reset` zeroes it again.  :func:`run` is one
invocation on a fresh session.

Data-movement operators (reshape, squeeze, expand_dims, transpose,
strided_slice, concatenate, pad) have no arithmetic and are implemented
here; everything else calls a kernel.  A node whose kernel does not exist
yet raises :class:`InterpretError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from aot.errors import AotError
from aot.ir import Graph, Node, Tensor
from aot.ir.ops import FLOAT_BINARY, FLOAT_UNARY
from aot.reference.ops import activations, conv, elementwise, pool
from aot.reference.ops import compare as compare_ops
from aot.reference.ops import shape as shape_ops
from aot.reference.ops.batch_matmul import batch_matmul
from aot.reference.ops.fully_connected import fully_connected
from aot.reference.ops.lstm import unidirectional_sequence_lstm
from aot.reference.ops.quantize import dequantize, quantize
from aot.reference.ops.reduce import cumsum, mean, reduce_sum
from aot.reference.ops.softmax import l2_normalization, log_softmax, softmax
from aot.reference.ops.svdf import svdf
from aot.reference.ops.topk import topk

Kernel = Callable[[Node, list], list]


class InterpretError(AotError):
    """Inputs that do not fit the graph, or a node the interpreter cannot run."""


_KERNELS: dict[str, Kernel] = {}


def kernel(*ops: str) -> Callable[[Kernel], Kernel]:
    """Register the decorated function as the runner of IR operators ``ops``."""

    def wrap(fn: Kernel) -> Kernel:
        for op in ops:
            if op in _KERNELS:
                raise ValueError(f"a kernel for {op!r} is registered twice")
            _KERNELS[op] = fn
        return fn

    return wrap


def supported_ops() -> frozenset[str]:
    """IR operators the interpreter can run."""
    return frozenset(_KERNELS)


def evaluate(node: Node, args: list) -> list:
    """``node``'s outputs for the input arrays ``args``, with the node's own
    attributes and quantization (the arrays may have any shape an
    elementwise operator accepts: the compiler tabulates activations this way)."""
    if node.op not in _KERNELS:
        raise InterpretError(f"{node.label()}: the reference interpreter has no kernel for "
                             f"{node.op}")
    return _KERNELS[node.op](node, args)


class Session:
    """A graph plus the state of its variable tensors, persisting across invocations."""

    def __init__(self, graph: Graph) -> None:
        missing = sorted({n.op for n in graph.nodes} - set(_KERNELS))
        if missing:
            raise InterpretError(
                f"the reference interpreter has no kernel yet for: {', '.join(missing)}"
            )
        self.graph = graph
        self.state: dict[int, np.ndarray] = {}
        self.reset()

    def reset(self) -> None:
        """Every variable tensor back to its start values: ``Tensor.fresh_value``,
        as a fresh TFLM interpreter, or the values a model gives it (``Tensor.data``)."""
        self.state = {}
        for t in self.graph.variables():
            if t.data is not None:
                self.state[id(t)] = np.array(t.data, copy=True)
                continue
            self.state[id(t)] = np.full(t.shape, t.fresh_value, dtype=t.type.np_dtype)

    def invoke(self, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray]) -> list[np.ndarray]:
        """Run once; ``inputs`` in graph-input order, or by input name."""
        values: dict[int, np.ndarray] = {}
        for t, x in zip(self.graph.inputs, _order_inputs(self.graph, inputs), strict=True):
            values[id(t)] = _check_input(t, x)
        for node in self.graph.nodes:
            args = [_value(t, values, self.state) for t in node.inputs]
            try:
                outs = _KERNELS[node.op](node, args)
            except NotImplementedError as err:  # a kernel's documented gap (e.g. a dtype)
                raise InterpretError(f"{node.label()}: not supported yet: {err}") from None
            for t, y in zip(node.outputs, outs, strict=True):
                y = np.asarray(y)
                if y.shape != t.shape or y.dtype != t.type.np_dtype:
                    raise AssertionError(  # a kernel or adapter bug, not user input
                        f"{node.label()} produced {y.dtype}{list(y.shape)}, expected {t.type}"
                    )
                values[id(t)] = y
        return [np.array(_value(t, values, self.state)) for t in self.graph.outputs]


def run(graph: Graph, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """One invocation of ``graph`` from a fresh state; returns the outputs in order."""
    return Session(graph).invoke(inputs)


def _order_inputs(graph: Graph, inputs) -> list[np.ndarray]:
    if isinstance(inputs, Mapping):
        names = [t.name for t in graph.inputs]
        unknown = sorted(set(inputs) - set(names))
        if unknown:
            raise InterpretError(f"unknown input {unknown[0]!r}; the inputs are {names}")
        missing = [n for n in names if n not in inputs]
        if missing:
            raise InterpretError(f"input {missing[0]!r} is missing")
        return [inputs[n] for n in names]
    inputs = list(inputs)
    if len(inputs) != len(graph.inputs):
        raise InterpretError(f"the graph takes {len(graph.inputs)} inputs, got {len(inputs)}")
    return inputs


def _check_input(t: Tensor, x) -> np.ndarray:
    x = np.asarray(x)
    if x.shape != t.shape:
        raise InterpretError(f"input {t.name!r} must have shape {list(t.shape)}, "
                             f"got {list(x.shape)}")
    want = t.type.np_dtype
    if x.dtype != want:
        cast = x.astype(want)
        if not np.array_equal(cast.astype(x.dtype), x):
            raise InterpretError(f"input {t.name!r} must be {t.dtype}; the {x.dtype} values "
                                 "given do not convert exactly")
        x = cast
    return x


def _value(t: Tensor | None, values: dict, state: dict) -> np.ndarray | None:
    if t is None:
        return None
    if t.kind == "constant":
        return t.data
    if t.kind == "variable":
        return state[id(t)]
    return values[id(t)]


# ---------------------------------------------------------------------- argument mapping

_ACT = {"none": None, "relu": "RELU", "relu6": "RELU6", "relu_n1_to_1": "RELU_N1_TO_1"}


def _scale(t: Tensor | None):
    """A tensor's scale: a float, or an array for per-axis quantization."""
    if t is None or t.quant is None:
        return 1.0
    return t.quant.scales() if t.quant.is_per_axis else t.quant.scale[0]


def _zp(t: Tensor | None) -> int:
    if t is None or t.quant is None:
        return 0
    if t.quant.is_per_axis and any(t.quant.zero_point):
        raise InterpretError(f"tensor {t.name!r}: per-axis zero points must be 0")
    return t.quant.zero_point[0]


def _quant_args(x: Tensor, y: Tensor, w: Tensor | None = None) -> dict:
    if x.dtype == "float32":
        return {}
    args = {"x_scale": _scale(x), "x_zero_point": _zp(x),
            "y_scale": _scale(y), "y_zero_point": _zp(y)}
    if w is not None:
        args["w_scale"] = _scale(w)
    return args


def _padding(attrs: dict) -> tuple:
    top, left, bottom, right = attrs["padding"]
    return ((top, bottom), (left, right))


# ---------------------------------------------------------------------- heavy ops

@kernel("conv2d", "depthwise_conv2d")
def _conv(node: Node, args: list) -> list:
    x, w, bias = node.inputs
    if _zp(w):
        raise InterpretError(f"{node.label()}: convolution weights must have zero point 0 "
                             "(symmetric quantization), as TFLM requires")
    a = node.attrs
    common = dict(stride=a["strides"], dilation=a["dilation"], padding=_padding(a),
                  activation=_ACT[a["activation"]], out_dtype=node.outputs[0].type.np_dtype,
                  **_quant_args(x, node.outputs[0], w))
    if node.op == "conv2d":
        return [conv.conv2d(args[0], args[1], args[2], **common)]
    return [conv.depthwise_conv2d(args[0], args[1], args[2],
                                  depth_multiplier=a["depth_multiplier"], **common)]


@kernel("transpose_conv2d")
def _transpose_conv2d(node: Node, args: list) -> list:
    x, w, _ = node.inputs
    if _zp(w):
        raise InterpretError(f"{node.label()}: convolution weights must have zero point 0 "
                             "(symmetric quantization), as TFLM requires")
    a = node.attrs
    return [conv.transpose_conv2d(args[0], args[1], args[2], stride=a["strides"],
                                  padding=a["padding"], output_size=a["output_size"],
                                  out_dtype=node.outputs[0].type.np_dtype,
                                  **_quant_args(x, node.outputs[0], w))]


@kernel("batch_matmul")
def _batch_matmul(node: Node, args: list) -> list:
    a, b = node.inputs
    y = node.outputs[0]
    q = {}
    if a.dtype != "float32":
        q = {"lhs_scale": _scale(a), "lhs_zero_point": _zp(a), "rhs_scale": _scale(b),
             "rhs_zero_point": _zp(b), "y_scale": _scale(y), "y_zero_point": _zp(y)}
    return [batch_matmul(args[0], args[1], adj_x=node.attrs["adj_x"],
                         adj_y=node.attrs["adj_y"], **q)]


@kernel("dense")
def _dense(node: Node, args: list) -> list:
    x, w, _ = node.inputs
    y = node.outputs[0]
    extra = _quant_args(x, y, w)
    if extra:
        extra["w_zero_point"] = _zp(w)
    return [fully_connected(args[0], args[1], args[2], keep_num_dims=node.attrs["keep_num_dims"],
                            activation=_ACT[node.attrs["activation"]],
                            out_dtype=y.type.np_dtype, **extra)]


@kernel("avg_pool2d", "max_pool2d")
def _pool(node: Node, args: list) -> list:
    y = node.outputs[0]
    fn = pool.average_pool2d if node.op == "avg_pool2d" else pool.max_pool2d
    extra = {} if y.dtype == "float32" else {"y_scale": _scale(y), "y_zero_point": _zp(y)}
    return [fn(args[0], node.attrs["pool_size"], stride=node.attrs["strides"],
               padding=_padding(node.attrs), activation=_ACT[node.attrs["activation"]], **extra)]


@kernel("l2_pool2d")
def _l2_pool(node: Node, args: list) -> list:
    return [pool.l2_pool2d(args[0], node.attrs["pool_size"], stride=node.attrs["strides"],
                           padding=_padding(node.attrs),
                           activation=_ACT[node.attrs["activation"]])]


# ---------------------------------------------------------------------- elementwise

@kernel("add", "sub", "mul")
def _arith(node: Node, args: list) -> list:
    x1, x2 = node.inputs
    y = node.outputs[0]
    extra = {}
    if y.dtype != "float32":
        extra = {"x1_scale": _scale(x1), "x1_zero_point": _zp(x1),
                 "x2_scale": _scale(x2), "x2_zero_point": _zp(x2),
                 "y_scale": _scale(y), "y_zero_point": _zp(y)}
    fn = getattr(elementwise, node.op)
    return [fn(args[0], args[1], activation=_ACT[node.attrs["activation"]],
               out_dtype=y.type.np_dtype, **extra)]


@kernel("maximum", "minimum")
def _minmax(node: Node, args: list) -> list:
    return [getattr(elementwise, node.op)(args[0], args[1])]


@kernel(*compare_ops.OPERATORS)
def _compare(node: Node, args: list) -> list:
    x1, x2 = node.inputs
    quants = {}
    if x1.quant is not None:
        quants = {"quant1": (_scale(x1), _zp(x1)), "quant2": (_scale(x2), _zp(x2))}
    return [compare_ops.compare(node.op, args[0], args[1], **quants)]


@kernel("logical_and", "logical_or", "logical_not")
def _logical(node: Node, args: list) -> list:
    fn = {"logical_and": np.logical_and, "logical_or": np.logical_or,
          "logical_not": np.logical_not}[node.op]
    return [fn(*args)]


@kernel("select")
def _select(node: Node, args: list) -> list:
    return [compare_ops.select(*args)]


@kernel(*FLOAT_BINARY)
def _float_binary(node: Node, args: list) -> list:
    return [elementwise.float_binary(node.op, args[0], args[1],
                                     activation=_ACT[node.attrs["activation"]])]


@kernel("squared_difference")
def _squared_difference(node: Node, args: list) -> list:
    x1, x2 = node.inputs
    y = node.outputs[0]
    extra = {}
    if x1.quant is not None and y.dtype in ("int8", "int16"):
        extra = {"x1_scale": _scale(x1), "x1_zero_point": _zp(x1),
                 "x2_scale": _scale(x2), "x2_zero_point": _zp(x2),
                 "y_scale": _scale(y), "y_zero_point": _zp(y)}
    return [elementwise.squared_difference(args[0], args[1], **extra)]


@kernel("abs")
def _abs(node: Node, args: list) -> list:
    x, y = node.inputs[0], node.outputs[0]
    if x.dtype == "float32":
        return [elementwise.float_unary("abs", args[0])]
    return [elementwise.abs_quantized(args[0], x_scale=_scale(x), x_zero_point=_zp(x),
                                      y_scale=_scale(y), y_zero_point=_zp(y),
                                      quantized=x.quant is not None)]


@kernel("rsqrt")
def _rsqrt(node: Node, args: list) -> list:
    x, y = node.inputs[0], node.outputs[0]
    if x.dtype == "float32":
        return [elementwise.float_unary("rsqrt", args[0])]
    return [elementwise.rsqrt_quantized(args[0], x_scale=_scale(x), x_zero_point=_zp(x),
                                        y_scale=_scale(y), y_zero_point=_zp(y))]


@kernel("add_n")
def _add_n(node: Node, args: list) -> list:
    x, y = node.inputs[0], node.outputs[0]
    if x.dtype == "int8":
        return [elementwise.add_n_int8(args, x_scale=_scale(x), x_zero_point=_zp(x),
                                       y_scale=_scale(y), y_zero_point=_zp(y))]
    total = args[0]
    for a in args[1:]:
        total = (total + a).astype(np.float32)  # left to right, as TFLM sums
    return [total]


@kernel(*FLOAT_UNARY)
def _float_unary(node: Node, args: list) -> list:
    return [elementwise.float_unary(node.op, args[0])]


@kernel("softmax")
def _softmax(node: Node, args: list) -> list:
    x, y = node.inputs[0], node.outputs[0]
    return [softmax(args[0], beta=node.attrs["beta"], out_dtype=y.type.np_dtype,
                    **_quant_args(x, y))]


@kernel("relu", "relu6", "leaky_relu", "hard_swish", "logistic", "tanh", "elu")
def _activation(node: Node, args: list) -> list:
    x, y = node.inputs[0], node.outputs[0]
    extra = dict(_quant_args(x, y))
    if node.op == "leaky_relu":
        extra["alpha"] = node.attrs["alpha"]
    # relu6 ignores the output quantization: TFLM clamps on the input's scale.
    return [getattr(activations, node.op)(args[0], **extra)]


@kernel("gelu")
def _gelu(node: Node, args: list) -> list:
    x, y = node.inputs[0], node.outputs[0]
    approximate = node.attrs["approximate"]
    if x.dtype == "float32":
        return [activations.gelu_float(args[0], approximate=approximate)]
    return [activations.gelu_int8(args[0], x_scale=_scale(x), x_zero_point=_zp(x),
                                  y_scale=_scale(y), y_zero_point=_zp(y),
                                  approximate=approximate)]


@kernel("prelu")
def _prelu(node: Node, args: list) -> list:
    x, alpha = node.inputs
    extra = {}
    if x.dtype != "float32":
        extra = {**_quant_args(x, node.outputs[0]), "alpha_scale": _scale(alpha),
                 "alpha_zero_point": _zp(alpha)}
    return [activations.prelu(args[0], args[1], **extra)]


@kernel("cast")
def _cast(node: Node, args: list) -> list:
    # numpy's conversions are C's: truncation toward zero, wrap-around, nonzero -> true
    with np.errstate(invalid="ignore"):
        return [np.asarray(args[0]).astype(node.outputs[0].type.np_dtype)]


@kernel("zeros_like")
def _zeros_like(node: Node, args: list) -> list:
    return [np.zeros_like(args[0])]


@kernel("quantize")
def _quantize(node: Node, args: list) -> list:
    x, y = node.inputs[0], node.outputs[0]
    if y.quant is None or y.quant.is_per_axis:
        raise InterpretError(f"{node.label()}: the output needs per-tensor quantization")
    extra = {} if x.dtype == "float32" else {"x_scale": _scale(x), "x_zero_point": _zp(x)}
    return [quantize(args[0], y_scale=_scale(y), y_zero_point=_zp(y),
                     out_dtype=y.type.np_dtype, **extra)]


@kernel("dequantize")
def _dequantize(node: Node, args: list) -> list:
    x = node.inputs[0]
    if x.quant is None or x.quant.is_per_axis:
        raise InterpretError(f"{node.label()}: the input needs per-tensor quantization")
    return [dequantize(args[0], x_scale=_scale(x), x_zero_point=_zp(x))]


@kernel("mean")
def _mean(node: Node, args: list) -> list:
    x, y = node.inputs[0], node.outputs[0]
    return [mean(args[0], node.attrs["axes"], keep_dims=node.attrs["keepdims"],
                 **_quant_args(x, y))]


@kernel("sum")
def _sum(node: Node, args: list) -> list:
    x, y = node.inputs[0], node.outputs[0]
    return [reduce_sum(args[0], node.attrs["axes"], keep_dims=node.attrs["keepdims"],
                       **_quant_args(x, y))]


@kernel("cumsum")
def _cumsum(node: Node, args: list) -> list:
    a = node.attrs
    return [cumsum(args[0], a["axis"], exclusive=a["exclusive"], reverse=a["reverse"],
                   **_quant_args(node.inputs[0], node.outputs[0]))]


@kernel("log_softmax")
def _log_softmax(node: Node, args: list) -> list:
    return [log_softmax(args[0], x_scale=_scale(node.inputs[0]))]


@kernel("l2_normalization")
def _l2_normalization(node: Node, args: list) -> list:
    return [l2_normalization(args[0], x_zero_point=_zp(node.inputs[0]))]


@kernel("reduce_all")
def _reduce_all(node: Node, args: list) -> list:
    axes = tuple(int(a) % args[0].ndim for a in node.attrs["axes"])
    return [np.all(args[0], axis=axes, keepdims=node.attrs["keepdims"])]


@kernel("reduce_max", "reduce_min")
def _reduce_extreme(node: Node, args: list) -> list:
    _same_quant(node, [node.inputs[0], node.outputs[0]])
    reduce = np.max if node.op == "reduce_max" else np.min
    axes = tuple(int(a) % args[0].ndim for a in node.attrs["axes"])
    return [reduce(args[0], axis=axes, keepdims=node.attrs["keepdims"])]


@kernel("topk")
def _topk(node: Node, args: list) -> list:
    a = node.attrs
    return [topk(args[0], k=a["k"], axis=a["axis"] % args[0].ndim, largest=a["largest"],
                 output=a["output"])]


@kernel("arg_max", "arg_min")
def _arg_extreme(node: Node, args: list) -> list:
    # numpy's argmax/argmin return the first index of the extreme, as TFLM's
    # strict comparison does; raw values compare as the real ones (one scale).
    pick = np.argmax if node.op == "arg_max" else np.argmin
    axis = node.attrs["axis"] % args[0].ndim
    return [pick(args[0], axis=axis).astype(node.outputs[0].type.np_dtype)]


# ---------------------------------------------------------------------- stateful

@kernel("read_variable")
def _read_variable(node: Node, args: list) -> list:
    return [np.array(args[0], copy=True)]  # later assignments must not change it


@kernel("assign_variable")
def _assign_variable(node: Node, args: list) -> list:
    args[0][...] = args[1]  # the session's state array, updated in place
    return [np.array(args[1], copy=True)]


@kernel("svdf")
def _svdf(node: Node, args: list) -> list:
    x, wf, wt, _, state = node.inputs
    y = node.outputs[0]
    extra = {}
    if x.dtype != "float32":
        extra = {"x_scale": _scale(x), "x_zero_point": _zp(x), "wf_scale": _scale(wf),
                 "wt_scale": _scale(wt), "state_scale": _scale(state),
                 "state_zero_point": _zp(state), "y_scale": _scale(y), "y_zero_point": _zp(y)}
    out, new_state = svdf(*args, rank=node.attrs["rank"],
                          activation=_ACT[node.attrs["activation"]], **extra)
    args[4][...] = new_state  # the session's state array, updated in place
    return [out]


# Slots of the IR lstm (aot.ir.ops.LSTM_INPUTS): gate order input, forget, cell, output.
_LSTM_INPUT_WEIGHTS = (1, 2, 3, 4)
_LSTM_RECURRENT_WEIGHTS = (5, 6, 7, 8)
_LSTM_BIASES = (12, 13, 14, 15)
_LSTM_UNSUPPORTED = {9: "peephole", 10: "peephole", 11: "peephole", 16: "projection",
                     17: "projection", 20: "layer norm", 21: "layer norm", 22: "layer norm",
                     23: "layer norm"}


@kernel("lstm")
def _lstm(node: Node, args: list) -> list:
    for slot, what in _LSTM_UNSUPPORTED.items():
        if node.inputs[slot] is not None:
            raise InterpretError(f"{node.label()}: LSTM with {what} weights is not supported yet")
    x, hidden, cell = node.inputs[0], node.inputs[18], node.inputs[19]
    extra = {}
    if x.dtype != "float32":
        extra = {
            "x_scale": _scale(x), "x_zero_point": _zp(x),
            "input_weight_scales": tuple(_scale(node.inputs[i]) for i in _LSTM_INPUT_WEIGHTS),
            "recurrent_weight_scales": tuple(_scale(node.inputs[i])
                                             for i in _LSTM_RECURRENT_WEIGHTS),
            "hidden_scale": _scale(hidden), "hidden_zero_point": _zp(hidden),
            "cell_scale": _scale(cell),
        }
    activation = node.attrs["activation"]
    y, new_hidden, new_cell = unidirectional_sequence_lstm(
        args[0],
        [args[i] for i in _LSTM_INPUT_WEIGHTS],
        [args[i] for i in _LSTM_RECURRENT_WEIGHTS],
        [args[i] for i in _LSTM_BIASES],
        args[18], args[19],
        time_major=node.attrs["time_major"], cell_clip=node.attrs["cell_clip"],
        activation=None if activation == "none" else activation.upper(), **extra)
    args[18][...] = new_hidden  # the session's state arrays, updated in place
    args[19][...] = new_cell
    return [y]


# ---------------------------------------------------------------------- data movement

# Data movement copies the integers raw, as TFLM's kernels do: an output
# quantized differently from its input reads the same integers with its own
# scale and zero point (TFLM does not requantize; where its kernel refuses
# differently quantized operands, the importer refuses them first).  The
# operators below whose TFLM behaviour is not established refuse instead.

def _same_quant(node: Node, tensors: list[Tensor]) -> None:
    """Refuse operands quantized differently (operators not known to copy raw)."""
    quants = {t.quant for t in tensors}
    if len(quants) > 1:
        raise InterpretError(f"{node.label()}: operands with different quantization "
                             "are not supported")


@kernel("reshape", "squeeze", "expand_dims")
def _reshape(node: Node, args: list) -> list:
    return [args[0].reshape(node.outputs[0].shape)]


@kernel("transpose")
def _transpose(node: Node, args: list) -> list:
    return [np.ascontiguousarray(np.transpose(args[0], node.attrs["perm"]))]


@kernel("strided_slice")
def _strided_slice(node: Node, args: list) -> list:
    a = node.attrs
    index = tuple(slice(b, e, s) for b, e, s in zip(a["begin"], a["end"], a["strides"]))
    return [np.ascontiguousarray(args[0][index]).reshape(node.outputs[0].shape)]


@kernel("concatenate")
def _concatenate(node: Node, args: list) -> list:
    if node.attrs["activation"] != "none":
        raise InterpretError(f"{node.label()}: a fused activation on concatenation is not "
                             "supported")
    return [np.concatenate(args, axis=node.attrs["axis"])]


@kernel("pad")
def _pad(node: Node, args: list) -> list:
    y = node.outputs[0]
    value = node.attrs["value"]
    if y.quant is not None:
        q = y.quant.zero_point[0] + np.round(np.float32(value) / np.float32(y.quant.scale[0]))
        value = np.clip(q, *_int_range(y.type.np_dtype))
    return [np.pad(args[0], node.attrs["pad_width"], constant_values=value)
            .astype(y.type.np_dtype)]


@kernel("mirror_pad")
def _mirror_pad(node: Node, args: list) -> list:
    return [shape_ops.mirror_pad(args[0], node.attrs["pad_width"], mode=node.attrs["mode"])]


@kernel("broadcast_to")
def _broadcast_to(node: Node, args: list) -> list:
    return [np.ascontiguousarray(np.broadcast_to(args[0], node.attrs["shape"]))]


@kernel("resize_nearest")
def _resize_nearest(node: Node, args: list) -> list:
    a = node.attrs
    return [shape_ops.resize_nearest(args[0], a["size"], align_corners=a["align_corners"],
                                     half_pixel_centers=a["half_pixel_centers"])]


@kernel("gather")
def _gather(node: Node, args: list) -> list:
    try:
        return [shape_ops.gather(args[0], args[1], axis=node.attrs["axis"],
                                 batch_dims=node.attrs["batch_dims"])]
    except IndexError as err:
        raise InterpretError(f"{node.label()}: {err} (TFLM fails the invocation)") from None


@kernel("gather_nd")
def _gather_nd(node: Node, args: list) -> list:
    try:
        return [shape_ops.gather_nd(args[0], args[1])]
    except IndexError as err:
        raise InterpretError(f"{node.label()}: {err} (TFLM fails the invocation)") from None


@kernel("resize_bilinear")
def _resize_bilinear(node: Node, args: list) -> list:
    a = node.attrs
    return [shape_ops.resize_bilinear(args[0], a["size"], align_corners=a["align_corners"],
                                      half_pixel_centers=a["half_pixel_centers"])]


@kernel("dynamic_update_slice")
def _dynamic_update_slice(node: Node, args: list) -> list:
    # operands quantized differently: the integers are copied raw, as TFLM copies them
    return [shape_ops.dynamic_update_slice(args[0], args[1], args[2])]


def _int_range(dtype: np.dtype) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)
