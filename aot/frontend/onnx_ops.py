"""The ONNX operator converters and the importer's view of ONNX values.

Operators and the IR they become (see :mod:`aot.frontend.onnx` for the
layout and QDQ rules):

=======================================  =============================================
ONNX                                     IR
=======================================  =============================================
Conv, QLinearConv                        conv2d (group 1), depthwise_conv2d
                                         (group = input channels)
Gemm, MatMul, QLinearMatMul              dense (constant B; C folded into the bias)
Add Sub Mul                              add sub mul (constants transposed to NHWC)
Max Min (two inputs)                     maximum minimum (float)
Relu Sigmoid Tanh                        relu logistic tanh
LeakyRelu HardSwish                      leaky_relu hard_swish (float)
Clip                                     relu/relu6/relu_n1_to_1, else maximum/minimum
MaxPool AveragePool                      max_pool2d avg_pool2d (pad + pool when
                                         count_include_pad)
GlobalAveragePool GlobalMaxPool          avg_pool2d max_pool2d over the whole map
Reshape Flatten Transpose                reshape transpose (or nothing)
Squeeze Unsqueeze                        reshape
Slice                                    strided_slice (positive steps)
Concat Softmax                           concatenate softmax (axis permuted)
QuantizeLinear DequantizeLinear          quantize dequantize (or folded into
                                         integer operators)
BatchNormalization                       mul + add with per-channel constants
Pad ReduceMean                           pad (constant mode) mean (axes permuted)
Gelu Erf                                 gelu (exact or tanh form; PyTorch's erf chain
                                         too) erf
TopK                                     topk (one node per output read)
Identity Dropout                         an alias of the input
Constant Shape Size                      evaluated at import
FOLD_ONLY (Gather Slice Unsqueeze        evaluated at import when their inputs are
Squeeze Cast ConstantOfShape Div ...)    known then (constants, shapes)
=======================================  =============================================
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from aot.frontend.errors import ModelError
from aot.ir import Quantization
from aot.ir.ops import TOPK_DTYPES

#: IR tensor = ONNX tensor transposed by this, for NCHW feature maps held as NHWC.
NHWC = (0, 2, 3, 1)

#: TensorProto.DataType -> IR dtype.
_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 5: "int16", 6: "int32", 7: "int64", 9: "bool"}


def dtype_name(code: int) -> str:
    """TensorProto's name of an element type code (``17`` -> ``FLOAT8E4M3FN``)."""
    from onnx import TensorProto

    try:
        return TensorProto.DataType.Name(code)
    except ValueError:
        return f"{code} (no ONNX element type has this code)"


def onnx_dtype(code: int, where: str) -> str:
    if code not in _DTYPES:
        raise ModelError(
            f"{where} has type {dtype_name(code)}, which is not supported; "
            f"supported: {', '.join(dtype_name(c) for c in sorted(_DTYPES))}"
        )
    return _DTYPES[code]


@dataclass(eq=False)
class Value:
    """One ONNX value as the importer holds it.

    Exactly one of ``const`` (numpy data in ONNX layout) and ``tensor`` (an
    IR tensor) is set.  For a tensor, ``perm`` says how it is laid out: the
    IR tensor is the ONNX value transposed by ``perm`` (None: same order).
    ``flat = (N, H, W, C)`` marks a deferred flatten: the IR tensor is the
    NHWC map reshaped to [N, H*W*C] while ONNX's value is [N, C*H*W].

    ``dq`` marks the output of a DequantizeLinear: the ONNX value is float,
    the IR tensor (or ``const``, with ``quant`` in ONNX axes) holds the
    integers.  ``shifted`` marks a uint8 ONNX tensor held as int8.
    """

    const: np.ndarray | None = None
    tensor: Any = None
    perm: tuple[int, ...] | None = None
    flat: tuple[int, int, int, int] | None = None
    dq: bool = False
    quant: Quantization | None = None
    shifted: bool = False
    cache: dict = field(default_factory=dict, repr=False)

    @property
    def is_const(self) -> bool:
        return self.const is not None


class QuantOutput(NamedTuple):
    """Where an integer operator's output goes (see ``_NodeContext.int_output``)."""

    quant: Quantization
    shifted: bool
    activation: str
    nodes: list[int]
    output: str


def onnx_shape(v: Value) -> tuple[int, ...]:
    if v.is_const:
        return tuple(v.const.shape)
    if v.flat is not None:
        n, h, w, c = v.flat
        return (n, c * h * w)
    shape = v.tensor.shape
    if v.perm is None:
        return tuple(shape)
    out = [0] * len(shape)
    for i, p in enumerate(v.perm):
        out[p] = shape[i]
    return tuple(out)


#: The kind each attribute the converters read must have (a malformed file may lie).
_ATTR_KINDS = {
    **dict.fromkeys(("axis", "group", "ceil_mode", "count_include_pad", "storage_order",
                     "transA", "transB", "allowzero", "saturate", "block_size", "output_dtype",
                     "to", "start", "end", "broadcast", "value_int", "training_mode",
                     "spatial", "seed", "is_test", "keepdims", "noop_with_empty_axes",
                     "fmod", "select_last_index", "num_outputs", "stash_type", "k", "largest",
                     "sorted"), int),
    **dict.fromkeys(("alpha", "beta", "min", "max", "value_float", "epsilon", "momentum",
                     "ratio"), float),
    **dict.fromkeys(("auto_pad", "mode", "approximate"), str),
    **dict.fromkeys(("pads", "strides", "dilations", "kernel_shape", "perm", "axes", "shape",
                     "value_ints", "value_floats", "starts", "ends", "split"), list),
}


def attribute_values(node) -> dict[str, Any]:
    """A node's attributes as Python values, each checked to have its expected kind."""
    from onnx import helper

    out = {}
    for a in node.attribute:
        value = helper.get_attribute_value(a)
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        kind = _ATTR_KINDS.get(a.name)
        ok = (kind is None or isinstance(value, kind)
              or (kind is float and isinstance(value, int)))
        if kind is list and ok:
            ok = all(isinstance(v, (int, float)) for v in value)
        if not ok:
            raise ModelError(f"{node.op_type} node {node.name!r}: attribute {a.name!r} should "
                             f"be {kind.__name__}, got {type(value).__name__}")
        out[a.name] = value
    return out


def ir_quant(scale: np.ndarray, zero_point: np.ndarray | None, axis: int | None,
             where: str = "quantization") -> Quantization:
    """ONNX scale/zero point -> IR quantization (uint8 zero points shifted to int8)."""
    scale = np.asarray(scale, np.float32).reshape(-1)
    if zero_point is None:
        zp = np.zeros(scale.shape, np.int64)
    else:
        zp = np.asarray(zero_point).astype(np.int64).reshape(-1)
        if np.asarray(zero_point).dtype == np.uint8:
            zp = zp - 128
    if zp.size == 1 and scale.size > 1:
        zp = np.full(scale.shape, zp[0])
    if not np.all(np.isfinite(scale)) or np.any(scale <= 0):
        raise ModelError(f"{where}: scales must be finite and positive")
    try:
        return Quantization(tuple(scale.tolist()), tuple(zp.tolist()),
                            axis if scale.size > 1 else None)
    except Exception as err:  # noqa: BLE001 - IRError with a message worth keeping
        raise ModelError(f"{where}: {err}") from None


def _shift(data: np.ndarray) -> np.ndarray:
    """uint8 data -> int8 data with the same real values (zero point - 128)."""
    if data.dtype == np.uint8:
        return (data.astype(np.int16) - 128).astype(np.int8)
    return data


def _f32(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


# --------------------------------------------------------------------------- folding

#: Operators evaluated at import when all their inputs are constant (those of
#: FOLD_ONLY only then: the IR has nothing they could become).  Once the
#: input shapes are fixed, Shape and Size are constants, so the shape arithmetic
#: exporters write (PyTorch's ``x.view(x.size(0), -1)``, tf2onnx's flatten:
#: Shape -> Gather/Slice -> Unsqueeze -> Concat -> Reshape, ConstantOfShape, Cast,
#: Div, ...) is evaluated here with numpy and leaves no node behind.
FOLD_ONLY = ("Mod", "ConstantOfShape", "Range", "ReduceProd")
FOLDABLE = frozenset({
    "Add", "Sub", "Mul", "Reshape", "Flatten", "Transpose", "Concat", "Identity",
    "QuantizeLinear", "Relu", "Squeeze", "Unsqueeze", "Min", "Max", "Slice", "Gather", "Cast",
    "Div", "Neg", "Abs", "Floor", "Ceil", "Sqrt", "Equal", "Less", "Greater", "Not", "Where",
    "Expand", *FOLD_ONLY,
})

#: The most elements a value evaluated at import may have (a malformed
#: ConstantOfShape, Expand or Range must not exhaust memory).
MAX_FOLDED_ELEMENTS = 1 << 24

#: Element types Cast may produce at import (float64 appears in exported shape
#: arithmetic; such a value cannot reach a kernel, whose converters check types).
_FOLD_DTYPES = {**_DTYPES, 11: "float64"}


def fold(ctx) -> Value | list[Value]:
    """Evaluate a node whose inputs are all constant."""
    op = ctx.op
    if op == "QuantizeLinear":
        return _quantize_linear(ctx)
    if op == "Identity":
        return ctx.value(0)
    v = ctx.value(0)
    if op in _MOVEMENT and v.dq and v.quant.axis is None:
        # Moving dequantized weights: move the integers, keep the quantization.
        moved = fold_values(ctx, v.const)
        return Value(const=moved, quant=v.quant, dq=True)
    return Value(const=fold_values(ctx, ctx.const(0, "input")))


#: Foldable operators that only move elements (they commute with dequantization).
_MOVEMENT = frozenset({"Reshape", "Flatten", "Transpose", "Unsqueeze", "Squeeze"})


def fold_values(ctx, x: np.ndarray) -> np.ndarray:
    """The output data of a constant node whose input 0 is ``x``."""
    op = ctx.op
    if op in _FOLD_BINARY:
        y = ctx.const(1, "input")
        out = _FOLD_BINARY[op](ctx, x, y)
        return out if out.dtype == np.bool_ else out.astype(np.result_type(x, y))
    if op in _FOLD_UNARY:
        return _FOLD_UNARY[op](x).astype(x.dtype)
    if op in ("Min", "Max"):
        parts = [ctx.const(i, "input") for i in range(ctx.n_inputs)]
        fn = np.minimum if op == "Min" else np.maximum
        out = parts[0]
        for part in parts[1:]:
            out = fn(out, part)
        return out.astype(np.result_type(*parts))
    if op == "Where":
        return np.where(x.astype(bool), ctx.const(1, "X"), ctx.const(2, "Y"))
    if op == "Slice":
        return _fold_slice(ctx, x)
    if op == "ConstantOfShape":
        return _fold_constant_of_shape(ctx, x)
    if op == "Range":
        limit, delta = (ctx.const(i, n).reshape(()) for i, n in ((1, "limit"), (2, "delta")))
        steps = (limit - x.reshape(())) / delta if delta != 0 else np.inf
        if not np.isfinite(steps):
            raise ctx.fail("Range needs a finite start and limit and a non-zero delta")
        count = max(int(np.ceil(steps)), 0)
        _check_folded_size(ctx, count)
        return (x.reshape(()) + np.arange(count) * delta).astype(x.dtype)
    if op == "Expand":
        shape = tuple(int(d) for d in ctx.const(1, "shape").reshape(-1))
        out_shape = np.broadcast_shapes(x.shape, shape)
        _check_folded_size(ctx, math.prod(out_shape))
        return np.broadcast_to(x, out_shape).copy()
    if op == "ReduceProd":
        return _fold_reduce_prod(ctx, x)
    if op == "Relu":
        return np.maximum(x, 0).astype(x.dtype)
    if op == "Reshape":
        return x.reshape(_reshape_target(ctx, x.shape))
    if op == "Flatten":
        return x.reshape(_flatten_shape(ctx, x.shape))
    if op == "Transpose":
        return np.transpose(x, _transpose_perm(ctx, x.ndim))
    if op == "Concat":
        axis = ctx.attrs(axis=None)["axis"]
        parts = [ctx.const(i, "input") for i in range(ctx.n_inputs)]
        return np.concatenate(parts, axis=axis)
    if op == "Unsqueeze":
        axes = _axes(ctx, "axes")
        rank = x.ndim + len(axes)
        out = x
        for a in sorted(a % rank for a in axes):
            out = np.expand_dims(out, a)
        return out
    if op == "Squeeze":
        axes = _axes(ctx, "axes", optional=True)
        if axes is None:
            return np.squeeze(x)
        return np.squeeze(x, axis=tuple(a % x.ndim for a in axes))
    if op == "Gather":
        axis = ctx.attrs(axis=0)["axis"]
        idx = ctx.const(1, "indices").astype(np.int64)
        return np.take(x, idx, axis=axis)
    if op == "Cast":
        to = ctx.attrs(to=None, saturate=1)["to"]
        if to not in _FOLD_DTYPES:
            onnx_dtype(to, f"{ctx.where}: the target type")  # names the type
        return x.astype(np.dtype(_FOLD_DTYPES[to]))
    raise ctx.fail(f"cannot evaluate {op} at import")


def _fold_div(ctx, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if np.issubdtype(np.result_type(x, y), np.integer):
        if np.any(y == 0):
            raise ctx.fail("integer division by zero")
        q = np.abs(x) // np.abs(y)  # ONNX (like C) truncates toward zero
        return np.where((x < 0) != (y < 0), -q, q)
    return np.divide(x, y)


def _fold_mod(ctx, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    fmod = ctx.attrs(fmod=0)["fmod"]
    if np.issubdtype(np.result_type(x, y), np.integer) and np.any(y == 0):
        raise ctx.fail("integer modulo by zero")
    return np.fmod(x, y) if fmod else np.mod(x, y)


_FOLD_BINARY = {
    "Add": lambda ctx, x, y: np.add(x, y), "Sub": lambda ctx, x, y: np.subtract(x, y),
    "Mul": lambda ctx, x, y: np.multiply(x, y), "Div": _fold_div, "Mod": _fold_mod,
    "Equal": lambda ctx, x, y: np.equal(x, y), "Less": lambda ctx, x, y: np.less(x, y),
    "Greater": lambda ctx, x, y: np.greater(x, y),
}
_FOLD_UNARY = {
    "Neg": np.negative, "Abs": np.abs, "Floor": np.floor, "Ceil": np.ceil, "Sqrt": np.sqrt,
    "Not": np.logical_not,
}


def _check_folded_size(ctx, elements: int) -> None:
    if elements > MAX_FOLDED_ELEMENTS:
        raise ctx.fail(f"the value evaluated at import would have {elements} elements "
                       f"(at most {MAX_FOLDED_ELEMENTS} are allowed)")


def _slice_args(ctx, rank: int) -> list[tuple[int, int, int, int]]:
    """Slice's (axis, start, end, step) per sliced axis, from attributes (opset < 10)
    or inputs."""
    if ctx.opset < 10:
        a = ctx.attrs(starts=None, ends=None, axes=None)
        starts, ends, axes, steps = a["starts"], a["ends"], a["axes"], None
        if starts is None or ends is None:
            raise ctx.fail("starts and ends are required")
    else:
        ctx.attrs()
        starts, ends = (ctx.const(i, n).reshape(-1).tolist()
                        for i, n in ((1, "starts"), (2, "ends")))
        axes = steps = None
        if ctx.value(3, optional=True) is not None:
            axes = ctx.const(3, "axes").reshape(-1).tolist()
        if ctx.value(4, optional=True) is not None:
            steps = ctx.const(4, "steps").reshape(-1).tolist()
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise ctx.fail("starts, ends, axes and steps must have the same length")
    out = []
    for start, end, axis, step in zip(starts, ends, axes, steps):
        if not -rank <= axis < rank or step == 0:
            raise ctx.fail(f"axis {axis} or step {step} is out of range for rank {rank}")
        out.append((int(axis) % rank, int(start), int(end), int(step)))
    return out


def _fold_slice(ctx, x: np.ndarray) -> np.ndarray:
    """Slice: ONNX clamps starts and ends as Python's slices do."""
    index = [slice(None)] * x.ndim
    for axis, start, end, step in _slice_args(ctx, x.ndim):
        index[axis] = slice(start, end, step)
    return x[tuple(index)]


def _slice(ctx) -> Value:
    """Slice of a computed value: strided_slice in the value's layout (positive steps)."""
    x = ctx.value(0)
    if x.flat is not None:
        x = Value(tensor=ctx.plain(x), dq=x.dq)
    shape = ctx.shape(x)
    begin, end, strides = [0] * len(shape), list(shape), [1] * len(shape)
    for axis, start, stop, step in _slice_args(ctx, len(shape)):
        if step < 0:
            raise ctx.fail("negative steps on run-time data are not supported")
        begin[axis], end[axis], strides[axis] = slice(start, stop, step).indices(shape[axis])
        if end[axis] <= begin[axis]:
            raise ctx.fail(f"the slice of axis {axis} is empty")
    order = list(x.perm) if x.perm is not None else list(range(len(shape)))
    attrs = {"begin": tuple(begin[a] for a in order), "end": tuple(end[a] for a in order),
             "strides": tuple(strides[a] for a in order)}
    y = ctx.emit("strided_slice", [x.tensor], attrs, quant=x.tensor.quant)
    return Value(tensor=y, perm=x.perm, dq=x.dq)


def tensor_attribute(ctx, proto, what: str) -> np.ndarray:
    """A tensor-valued attribute's data (element types as for folded values)."""
    from onnx import TensorProto, numpy_helper

    if not isinstance(proto, TensorProto):
        raise ctx.fail(f"attribute {what!r} should be a tensor")
    if proto.data_type not in _FOLD_DTYPES:
        onnx_dtype(proto.data_type, f"{ctx.where}: attribute {what!r}")  # names the type
    try:
        return np.asarray(numpy_helper.to_array(proto))
    except Exception as err:  # noqa: BLE001 - onnx raises many types on bad tensors
        raise ctx.fail(f"attribute {what!r} cannot be decoded: {err}") from None


def _fold_constant_of_shape(ctx, shape: np.ndarray) -> np.ndarray:
    value = ctx.attrs(value=None)["value"]
    fill = np.zeros(1, np.float32)
    if value is not None:
        fill = tensor_attribute(ctx, value, "value").reshape(-1)
        if fill.size != 1:
            raise ctx.fail("value must hold one element")
    dims = tuple(int(d) for d in shape.reshape(-1))
    if any(d < 0 for d in dims):
        raise ctx.fail(f"negative size in the shape {list(dims)}")
    _check_folded_size(ctx, math.prod(dims))
    return np.full(dims, fill[0], dtype=fill.dtype)


def _reduce_attrs(ctx) -> tuple[list[int] | None, bool, bool]:
    """A Reduce* node's ``(axes, keepdims, noop)``: the axes are an attribute
    before opset 18 and input 1 from it (None: all axes); ``noop`` is
    ``noop_with_empty_axes`` when no axes are given."""
    if ctx.opset < 18:
        a = ctx.attrs(axes=None, keepdims=1)
        axes = None if a["axes"] is None else [int(v) for v in a["axes"]]
        return axes, bool(a["keepdims"]), False
    a = ctx.attrs(keepdims=1, noop_with_empty_axes=0)
    axes = None
    if ctx.value(1, optional=True) is not None:
        axes = [int(v) for v in ctx.const(1, "axes").reshape(-1)] or None
    return axes, bool(a["keepdims"]), axes is None and bool(a["noop_with_empty_axes"])


def _fold_reduce_prod(ctx, x: np.ndarray) -> np.ndarray:
    axes, keepdims, noop = _reduce_attrs(ctx)
    if noop:
        return x
    axis = None if axes is None else tuple(v % max(x.ndim, 1) for v in axes)
    return np.prod(x, axis=axis, keepdims=keepdims).astype(x.dtype)


def _axes(ctx, name: str, optional: bool = False):
    """Axes given as an attribute (old opsets) or as input 1 (opset 13)."""
    attrs = ctx.attrs(axes=None)
    if attrs["axes"] is not None:
        return [int(a) for a in attrs["axes"]]
    if ctx.value(1, optional=True) is not None:
        return [int(a) for a in ctx.const(1, name).reshape(-1)]
    if optional:
        return None
    raise ctx.fail(f"{name} are missing")


def _constant(ctx) -> Value:
    a = ctx.attrs(value=None, value_float=None, value_floats=None, value_int=None,
                  value_ints=None)
    if a["value"] is not None:
        return Value(const=tensor_attribute(ctx, a["value"], "value"))
    for key, dtype in (("value_float", np.float32), ("value_floats", np.float32),
                       ("value_int", np.int64), ("value_ints", np.int64)):
        if a[key] is not None:
            return Value(const=np.asarray(a[key], dtype=dtype))
    raise ctx.fail("a Constant needs a value (sparse and string values are not supported)")


def _shape(ctx) -> Value:
    a = ctx.attrs(start=0, end=None)
    shape = ctx.shape(ctx.value(0))
    return Value(const=np.asarray(shape[a["start"]:a["end"]], dtype=np.int64))


def _size(ctx) -> Value:
    ctx.attrs()
    return Value(const=np.asarray(np.prod(ctx.shape(ctx.value(0)), dtype=np.int64)))


def _identity(ctx) -> Value:
    return ctx.value(0)


def _const_only(ctx) -> Value:
    computed = next((i for i in range(ctx.n_inputs)
                     if ctx.value(i, optional=True) is not None and not ctx.value(i).is_const),
                    None)
    if computed is None:
        raise ctx.fail("the node has no inputs")
    raise ctx.fail(f"{ctx.op} is only evaluated at import, on values known then (shapes and "
                   f"constants), but {ctx.describe_input(computed)}")


# --------------------------------------------------------------------------- QDQ

def _qparams(ctx, scale_i: int, zp_i: int, axis: int | None, shape, what: str):
    """(IR quantization, zero-point dtype) from a node's scale and zero-point inputs.

    ``shape`` is the quantized tensor's ONNX shape (None: per tensor only).
    """
    scale = ctx.const(scale_i, f"{what} scale")
    zp_v = ctx.value(zp_i, optional=True)
    zp = ctx.const(zp_i, f"{what} zero point") if zp_v is not None else None
    if zp is not None and zp.size != scale.size:
        raise ctx.fail(f"{what}: {scale.size} scales but {zp.size} zero points")
    if scale.size > 1:
        if axis is None or shape is None:
            raise ctx.fail(f"{what}: per-axis scales are not supported here")
        if not -len(shape) <= axis < len(shape):
            raise ctx.fail(f"{what}: axis {axis} is out of range for rank {len(shape)}")
        axis %= len(shape)
        if scale.size != shape[axis]:
            raise ctx.fail(f"{what}: {scale.size} scales for dimension {axis} of size "
                           f"{shape[axis]}")
    return (ir_quant(scale, zp, axis if scale.size > 1 else None, f"{ctx.where}: {what}"),
            zp.dtype if zp is not None else None)


def _quantize_linear(ctx) -> Value:
    a = ctx.attrs(axis=1, saturate=1, block_size=0, output_dtype=0)
    if a["block_size"]:
        raise ctx.fail("blocked quantization (block_size) is not supported")
    x = ctx.value(0)
    q, zdtype = _qparams(ctx, 1, 2, a["axis"], ctx.shape(x), "output")
    out_code = a["output_dtype"] or {None: 2, np.dtype(np.uint8): 2, np.dtype(np.int8): 3,
                                     np.dtype(np.int16): 5}.get(zdtype, 0)
    dtype = onnx_dtype(out_code, f"{ctx.where}: output")
    if dtype not in ("int8", "uint8", "int16"):
        raise ctx.fail(f"quantizing to {dtype} is not supported (int8, uint8 and int16 are)")
    shifted = dtype == "uint8"
    if dtype == "int16":
        return _quantize_int16(ctx, x, q)
    if x.is_const:  # weights: ONNX rounds half to even and saturates
        data = ctx.const_value(x).astype(np.float32)
        if not np.all(np.isfinite(data)):
            raise ctx.fail("the constant to quantize holds NaN or infinite values")
        shape = [1] * data.ndim
        if q.axis is not None:
            shape[q.axis] = -1
        scale = np.asarray(q.scale, np.float32).reshape(shape)
        zp = np.asarray(q.zero_point, np.int64).reshape(shape) + (128 if shifted else 0)
        lo, hi = (0, 255) if shifted else (-128, 127)
        with np.errstate(over="ignore"):  # saturation below handles huge quotients
            steps = np.clip(np.rint(data / scale), -(2**20), 2**20).astype(np.int64)
        raw = np.clip(steps + zp, lo, hi)
        return Value(const=raw.astype(np.uint8 if shifted else np.int8))
    if q.axis is not None:
        raise ctx.fail("per-axis quantization of activations is not supported")
    if x.dq:
        t = x.tensor
        if t.quant == q:
            return Value(tensor=t, perm=x.perm, flat=x.flat, shifted=shifted)
        t = ctx.emit("quantize", [t], {"out_dtype": "int8"}, quant=q)
        return Value(tensor=t, perm=x.perm, flat=x.flat, shifted=shifted)
    t = x.tensor if x.flat is None else ctx.tensor(x)
    if t.dtype != "float32":
        raise ctx.fail(f"QuantizeLinear of a {t.dtype} tensor is not supported")
    t = ctx.emit("quantize", [t], {"out_dtype": "int8"}, quant=q)
    return Value(tensor=t, perm=x.perm, flat=x.flat, shifted=shifted)


def _quantize_int16(ctx, x: Value, q: Quantization) -> Value:
    """QuantizeLinear to int16 of an activation: a QUANTIZE node (float or int8 in).

    The int16 value is read back by a DequantizeLinear into the float path (no
    integer operator takes int16 here); int16 weights are not supported.
    """
    if x.is_const:
        raise ctx.fail("quantizing a constant to int16 is not supported (int16 weights are "
                       "not; int8 and uint8 are)")
    if q.axis is not None:
        raise ctx.fail("per-axis quantization of activations is not supported")
    t = x.tensor if x.flat is None else ctx.tensor(x)
    if not (t.dtype == "float32" or (x.dq and t.dtype == "int8")):
        raise ctx.fail(f"QuantizeLinear of a {t.dtype} tensor to int16 is not supported")
    y = ctx.emit("quantize", [t], {"out_dtype": "int16"}, quant=q)
    return Value(tensor=y, perm=x.perm, flat=x.flat)


def _dequantize_linear(ctx) -> Value:
    a = ctx.attrs(axis=1, block_size=0)
    if a["block_size"]:
        raise ctx.fail("blocked quantization (block_size) is not supported")
    x = ctx.value(0)
    q, _ = _qparams(ctx, 1, 2, a["axis"], ctx.shape(x), "input")
    if x.is_const:
        data = x.const
        if data.dtype == np.int32:
            if any(q.zero_point):
                raise ctx.fail("int32 data needs zero point 0")
        elif data.dtype in (np.int8, np.uint8):
            data = _shift(data)
        else:
            raise ctx.fail(f"dequantizing {data.dtype} is not supported")
        return Value(const=data, quant=q, dq=True)
    if x.dq:
        raise ctx.fail("the input is already float")
    t = x.tensor
    if t.dtype == "uint8" and q.axis is None:
        t = _from_uint8(ctx, x, q)
    if t.dtype not in ("int8", "int16") or q.axis is not None:
        raise ctx.fail(f"dequantizing a {t.dtype} activation per "
                       f"{'axis' if q.axis is not None else 'tensor'} is not supported")
    if t.quant is None and t.kind == "input":
        t.type = t.type.with_quant(q)  # an integer model input: the first reader says how
    if t.quant != q:
        raise ctx.fail("DequantizeLinear uses other parameters than the QuantizeLinear "
                       "that made its input; not supported")
    return Value(tensor=t, perm=x.perm, flat=x.flat, dq=True)


def _from_uint8(ctx, x: Value, q: Quantization):
    """A uint8 model input read with ``q`` (zero point already moved to int8's range):
    the input takes q's uint8 form and one quantize node moves it to int8."""
    t = x.tensor
    if t.kind != "input":
        raise ctx.fail("uint8 data other than a model input is not supported")
    uq = Quantization(q.scale, tuple(z + 128 for z in q.zero_point))
    if t.quant is None:
        t.type = t.type.with_quant(uq)
    if t.quant != uq:
        raise ctx.fail("the uint8 input is read with two different quantizations; "
                       "not supported")
    if "int8" not in x.cache:
        x.cache["int8"] = ctx.emit("quantize", [t], {"out_dtype": "int8"}, quant=q)
    return x.cache["int8"]


def _is_int_act(ctx, v: Value | None) -> bool:
    """A dequantized int8 activation with per-tensor quantization."""
    return (v is not None and not v.is_const and v.dq and v.tensor.dtype == "int8"
            and v.tensor.quant is not None and v.tensor.quant.axis is None)


def _requant(ctx, t, q: Quantization, name: str | None = None):
    """``t`` (int8) with quantization ``q``: itself, or a requantize node."""
    if t.quant == q:
        return t
    return ctx.emit("quantize", [t], {"out_dtype": "int8"}, quant=q)


# --------------------------------------------------------------------------- weights

class _Weights(NamedTuple):
    """Constant weights in ONNX layout: float data, or int8 data with its quantization."""

    data: np.ndarray
    quant: Quantization | None


def _weights(ctx, i: int, what: str, int_mode: bool) -> _Weights:
    v = ctx.value(i)
    if not v.is_const:
        raise ctx.fail(f"{what} (input {i}) must be known at import (computed {what} are "
                       f"not supported), but {ctx.describe_input(i)}")
    if int_mode and v.dq and v.const.dtype == np.int8:
        return _Weights(v.const, v.quant)
    data = ctx.const_value(v)
    if data.dtype != np.float32:
        raise ctx.fail(f"{what} must be float32, got {data.dtype}")
    return _Weights(data, None)


def _int_weights_ok(w: _Weights, axis: int, zero_zp: bool = True) -> bool:
    if w.quant is None:
        return False
    if w.quant.axis is not None and w.quant.axis != axis:
        return False
    return not zero_zp or not any(w.quant.zero_point)


def _int_bias(ctx, v: Value | None, x_scale: float, w_quant: Quantization, units: int):
    """The int32 bias of an integer layer: ints kept when their scale is x_scale*w_scale."""
    if v is None:
        return None
    want = np.float64(np.float32(x_scale)) * np.asarray(w_quant.scale, np.float64)
    want = np.broadcast_to(want, (units,))
    if v.dq and v.const.dtype == np.int32 and np.size(v.const) in (1, units):
        have = np.broadcast_to(np.asarray(v.quant.scale, np.float64), (units,))
        if np.allclose(have, want, rtol=1e-6, atol=0):
            return np.broadcast_to(v.const.reshape(-1), (units,)).astype(np.int32)
    real = np.broadcast_to(ctx.const_value(v).astype(np.float64).reshape(-1), (units,))
    ints = np.rint(real / want)
    return np.clip(ints, -(2**31), 2**31 - 1).astype(np.int32)


# --------------------------------------------------------------------------- windows

def _padding(ctx, a: dict, in_hw, kernel, strides, dilations) -> tuple[int, int, int, int]:
    """Explicit (top, left, bottom, right) padding from pads / auto_pad."""
    auto = a.get("auto_pad", "NOTSET") or "NOTSET"
    if auto == "NOTSET":
        pads = a.get("pads") or [0, 0, 0, 0]
        if len(pads) != 4:
            raise ctx.fail(f"pads must have 4 entries for a 2-D window, got {list(pads)}")
        if min(pads) < 0:
            raise ctx.fail(f"negative pads {list(pads)} are not supported")
        return (pads[0], pads[1], pads[2], pads[3])
    if auto == "VALID":
        return (0, 0, 0, 0)
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise ctx.fail(f"auto_pad {auto!r} is not supported; supported: NOTSET, VALID, "
                       "SAME_UPPER, SAME_LOWER")
    begin, end = [], []
    for size, k, s, d in zip(in_hw, kernel, strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small, big = total // 2, total - total // 2
        begin.append(small if auto == "SAME_UPPER" else big)
        end.append(big if auto == "SAME_UPPER" else small)
    return (begin[0], begin[1], end[0], end[1])


def _pair(ctx, a: dict, key: str, default=(1, 1)) -> tuple[int, int]:
    value = a.get(key)
    if value is None:
        return tuple(default)
    if len(value) != 2:
        raise ctx.fail(f"{key} {list(value)}: only 2-D windows are supported")
    if min(value) < 1:
        raise ctx.fail(f"{key} must be at least 1, got {list(value)}")
    return (int(value[0]), int(value[1]))


def _rank4(ctx, v: Value, what: str = "input") -> tuple[int, int, int, int]:
    shape = ctx.shape(v)
    if len(shape) != 4:
        raise ctx.fail(f"the {what} has shape {list(shape)}; only 2-D {ctx.op} on "
                       "[N, C, H, W] data is supported")
    return shape


# --------------------------------------------------------------------------- conv

def _conv(ctx) -> Value | None:
    a = ctx.attrs(auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, pads=None,
                  strides=None)
    x, bias = ctx.value(0), ctx.value(2, optional=True)
    qout = ctx.int_output(fuse_activation=True)
    int_mode = qout is not None and _is_int_act(ctx, x)
    w = _weights(ctx, 1, "weights", int_mode)
    if int_mode and not _int_weights_ok(w, 0):
        int_mode, w = False, _weights(ctx, 1, "weights", False)
    if bias is not None and not bias.is_const:
        raise ctx.fail("a computed bias is not supported")
    x_q = x.tensor.quant if int_mode else None
    return _conv_common(ctx, a, x, w, bias, qout if int_mode else None, x_q)


def _conv_common(ctx, a, x: Value, w: _Weights, bias: Value | None, qout, x_q):
    n, c, h, wd = _rank4(ctx, x)
    if w.data.ndim != 4:
        raise ctx.fail(f"weights have shape {list(w.data.shape)}; only 2-D convolution is "
                       "supported")
    oc, icg, kh, kw = w.data.shape
    kernel = _pair(ctx, a, "kernel_shape", (kh, kw))
    if kernel != (kh, kw):
        raise ctx.fail(f"kernel_shape {list(kernel)} does not match the weights {[kh, kw]}")
    strides, dilations = _pair(ctx, a, "strides"), _pair(ctx, a, "dilations")
    padding = _padding(ctx, a, (h, wd), kernel, strides, dilations)
    group = a["group"]
    attrs = {"strides": strides, "padding": padding, "dilation": dilations}
    if qout is not None:
        attrs["activation"] = qout.activation
    if group == 1:
        if icg != c:
            raise ctx.fail(f"weights expect {icg} input channels, the input has {c}")
        op, data, axis = "conv2d", np.transpose(w.data, (0, 2, 3, 1)), 0
    elif group == c and icg == 1 and oc % c == 0:
        op, data, axis = "depthwise_conv2d", np.transpose(w.data, (1, 2, 3, 0)), 3
        attrs["depth_multiplier"] = oc // c
    else:
        raise ctx.fail(f"group={group} (grouped convolution) is not supported; supported: "
                       f"group 1 and depthwise (group = input channels = {c})")
    xt = ctx.in_layout(x if qout is not None else ctx.floated(x), NHWC)
    if qout is None:
        weight = ctx.constant(data)
        b = None
        if bias is not None:
            b = ctx.constant(_f32(ctx.const_value(bias)).reshape(oc))
        y = ctx.emit(op, [xt, weight, b], attrs)
        return Value(tensor=y, perm=NHWC)
    wq = w.quant
    wq_ir = Quantization(wq.scale, wq.zero_point, axis if wq.axis is not None else None)
    weight = ctx.constant(data, wq_ir)
    b = _int_bias(ctx, bias, x_q.scale[0], wq, oc)
    bt = ctx.constant(b) if b is not None else None
    y = ctx.emit(op, [xt, weight, bt], attrs, quant=qout.quant)
    ctx.finish_int(qout, y, perm=NHWC)
    return None


def _qlinear_x(ctx, x: Value, q: Quantization, what: str):
    if x.is_const or x.dq:
        raise ctx.fail(f"{what} must be an integer activation")
    t = x.tensor
    if t.dtype == "uint8":
        t = _from_uint8(ctx, x, q)
    if t.dtype != "int8":
        raise ctx.fail(f"{what} is {t.dtype}; int8 and uint8 are supported")
    if t.quant is None and t.kind == "input":
        t.type = t.type.with_quant(q)
    if t.quant != q:
        raise ctx.fail(f"{what}'s scale and zero point differ from those it was quantized "
                       "with; not supported")
    return Value(tensor=t, perm=x.perm, flat=x.flat, dq=True)


def _qlinear_weights(ctx, i: int, axis_hint: int) -> _Weights:
    v = ctx.value(i)
    if not v.is_const:
        raise ctx.fail(f"weights (input {i}) must be known at import, but "
                       f"{ctx.describe_input(i)}")
    if v.const.dtype not in (np.int8, np.uint8):
        raise ctx.fail(f"weights (input {i}) must be int8 or uint8, got {v.const.dtype}")
    q, _ = _qparams(ctx, i + 1, i + 2, axis_hint, v.const.shape, "weights")
    return _Weights(_shift(v.const), q)


def _qlinear_conv(ctx) -> Value | None:
    a = ctx.attrs(auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, pads=None,
                  strides=None)
    xq, _ = _qparams(ctx, 1, 2, None, None, "x")
    x = _qlinear_x(ctx, ctx.value(0), xq, "x")
    w = _qlinear_weights(ctx, 3, 0)
    yq, ydtype = _qparams(ctx, 6, 7, None, None, "y")
    if any(w.quant.zero_point):
        raise ctx.fail("weights with a non-zero zero point are not supported (symmetric "
                       "int8 weights are)")
    bias = ctx.value(8, optional=True)
    if bias is not None:
        if not bias.is_const or bias.const.dtype != np.int32:
            raise ctx.fail("the bias must be a constant int32 tensor")
        wscale = np.float64(np.float32(xq.scale[0])) * np.asarray(w.quant.scale, np.float64)
        bias = Value(const=bias.const, quant=ir_quant(wscale, None, 0 if wscale.size > 1
                                                      else None), dq=True)
    qout = _QOut(yq, ydtype, ctx.output_name())
    return _conv_common(ctx, a, x, w, bias, qout, xq)


def _QOut(q: Quantization, zdtype, output: str) -> QuantOutput:
    """The output of a QLinear operator: its own, with its own quantization."""
    return QuantOutput(q, zdtype == np.uint8, "none", [], output)


# --------------------------------------------------------------------------- dense

def _dense_common(ctx, x: Value, w_kn: _Weights, bias: Value | None, qout,
                  x_q: Quantization | None, out_rank: int) -> Value | None:
    """``x @ w_kn (+ bias)``: w_kn is [K, N] in ONNX layout."""
    k, units = w_kn.data.shape
    xs = ctx.shape(x)
    if xs[-1] != k:
        raise ctx.fail(f"input has {xs[-1]} features, the weights expect {k}")
    data = w_kn.data
    src = x if qout is not None else ctx.floated(x)
    if src.flat is not None and len(xs) == 2:
        n, h, w, c = src.flat
        order = np.arange(c * h * w).reshape(c, h, w).transpose(1, 2, 0).reshape(-1)
        data = data[order, :]  # rows in the NHWC flattening order
        xt = src.tensor
    else:
        xt = ctx.plain(src)
    weight_data = np.ascontiguousarray(data.T)
    attrs = {"keep_num_dims": out_rank > 2}  # [..., K] in, [..., N] out
    if qout is None:
        b = None
        if bias is not None:
            b = ctx.constant(np.broadcast_to(_f32(ctx.const_value(bias)).reshape(-1),
                                             (units,)).astype(np.float32))
        y = ctx.emit("dense", [xt, ctx.constant(weight_data), b], attrs)
        return Value(tensor=y)
    wq = w_kn.quant
    weight = ctx.constant(weight_data, Quantization(wq.scale, wq.zero_point,
                                                    0 if wq.axis is not None else None))
    b = _int_bias(ctx, bias, x_q.scale[0], wq, units)
    attrs["activation"] = qout.activation
    y = ctx.emit("dense", [xt, weight, ctx.constant(b) if b is not None else None], attrs,
                 quant=qout.quant)
    ctx.finish_int(qout, y)
    return None


def _row_bias(c: Value | None, units: int) -> bool:
    """Whether Gemm's C is the same for every row (so it can be the dense bias)."""
    if c is None:
        return True
    if not c.is_const:
        return False
    shape = c.const.shape
    return c.const.size in (1, units) and (len(shape) < 2 or shape[0] == 1)


def _gemm(ctx) -> Value | None:
    a = ctx.attrs(alpha=1.0, beta=1.0, transA=0, transB=0, broadcast=0)
    x, c = ctx.value(0), ctx.value(2, optional=True)
    xs = ctx.shape(x)
    if len(xs) != 2:
        raise ctx.fail(f"A must be 2-D, got shape {list(xs)}")
    if not ctx.value(1).is_const:
        return _gemm_runtime(ctx, a, x, ctx.value(1), c)
    qout = ctx.int_output(fuse_activation=True)
    int_mode = (qout is not None and _is_int_act(ctx, x) and a["alpha"] == 1.0
                and a["beta"] == 1.0 and not a["transA"])
    w = _weights(ctx, 1, "B", int_mode)
    if w.data.ndim != 2:
        raise ctx.fail(f"B must be 2-D, got shape {list(w.data.shape)}")
    if a["transB"]:
        w = _Weights(w.data.T, None if w.quant is None else Quantization(
            w.quant.scale, w.quant.zero_point, None if w.quant.axis is None else 1 - w.quant.axis))
    units = w.data.shape[1]
    foldable_c = _row_bias(c, units)
    if int_mode and not (_int_weights_ok(w, 1, zero_zp=w.quant is not None
                                         and w.quant.axis is not None) and foldable_c):
        int_mode = False
    if int_mode:
        return _dense_common(ctx, x, w, c, qout, x.tensor.quant, 2)
    if w.quant is not None:
        w = _Weights(ctx.const_value(Value(const=w.data, quant=w.quant, dq=True)), None)
    data = w.data * np.float32(a["alpha"])
    src = ctx.floated(x)
    if a["transA"]:
        src = Value(tensor=ctx.transpose(ctx.plain(src), (1, 0)))
    bias = None
    if c is not None and foldable_c:
        bias = Value(const=_f32(ctx.const_value(c)) * np.float32(a["beta"]))
    y = _dense_common(ctx, src, _Weights(data.astype(np.float32), None), bias, None, None, 2)
    if c is None or foldable_c:
        return y
    return _gemm_add_c(ctx, a, y.tensor, c)


def _matmul(ctx) -> Value | None:
    ctx.attrs()
    x = ctx.value(0)
    xs = ctx.shape(x)
    b = ctx.value(1)
    if len(xs) < 2 or not b.is_const or b.const.ndim != 2:
        return _matmul_runtime(ctx, x, b)
    qout = ctx.int_output(fuse_activation=True)
    int_mode = qout is not None and _is_int_act(ctx, x)
    w = _weights(ctx, 1, "B", int_mode)
    if int_mode and not _int_weights_ok(w, 1, zero_zp=w.quant is not None
                                        and w.quant.axis is not None):
        int_mode, w = False, _weights(ctx, 1, "B", False)
    if int_mode:
        return _dense_common(ctx, x, w, None, qout, x.tensor.quant, len(xs))
    return _dense_common(ctx, x, w, None, None, None, len(xs))


def _batch_operand(ctx, v: Value) -> tuple[Any, int]:
    """A float MatMul operand as an IR tensor of rank >= 2, and its ONNX rank."""
    v = ctx.floated(v)
    t = ctx.plain(v)
    if t.dtype != "float32":
        raise ctx.fail(f"MatMul of {t.dtype} operands is not supported (float32 and "
                       "quantized int8 between QDQ pairs are)")
    shape = ctx.shape(v)
    if len(shape) == 1:
        return ctx.emit("reshape", [t], {"newshape": (1,) + shape}), 1
    if len(shape) > 5:
        raise ctx.fail(f"operands of rank {len(shape)}: at most 5 are supported")
    return t, len(shape)


def _matmul_runtime(ctx, x: Value, b: Value) -> Value | None:
    """MatMul of two values of any rank (numpy's matmul): batch_matmul in float.

    A 1-D operand is a row (A) or a column (B) whose axis the result drops,
    as numpy does; leading axes broadcast.  Between QDQ pairs (both operands
    dequantized int8 activations of rank 2 to 5, the only reader a
    QuantizeLinear) it is an int8 batch_matmul with TFLM's requantization.
    """
    ranks = (len(ctx.shape(x)), len(ctx.shape(b)))
    if all(2 <= r <= 5 for r in ranks) and _is_int_act(ctx, x) and _is_int_act(ctx, b):
        qout = ctx.int_output()
        if qout is not None:
            y = ctx.emit("batch_matmul", [ctx.plain(x), ctx.plain(b)], {}, quant=qout.quant)
            ctx.finish_int(qout, y)
            return None
    lhs, lrank = _batch_operand(ctx, x)
    rhs, rrank = _batch_operand(ctx, b)
    if rrank == 1:
        rhs = ctx.emit("reshape", [rhs], {"newshape": (rhs.shape[1], 1)})
    y = ctx.emit("batch_matmul", [lhs, rhs], {})
    shape = list(y.shape)
    if rrank == 1:
        shape.pop(-1)
    if lrank == 1:
        shape.pop(-2 if rrank != 1 else -1)
    if tuple(shape) != tuple(y.shape):
        y = ctx.emit("reshape", [y], {"newshape": tuple(shape)})
    return Value(tensor=y)


def _gemm_runtime(ctx, a: dict, x: Value, b: Value, c: Value | None) -> Value:
    """Gemm whose B is computed: ``alpha * A' @ B' + beta * C`` in float, where the
    transposes are batch_matmul's own and C broadcasts (unidirectionally)."""
    lhs, _ = _batch_operand(ctx, x)
    rhs, _ = _batch_operand(ctx, b)
    if len(rhs.shape) != 2:
        raise ctx.fail(f"B must be 2-D, got shape {list(rhs.shape)}")
    y = ctx.emit("batch_matmul", [lhs, rhs], {"adj_x": bool(a["transA"]),
                                               "adj_y": bool(a["transB"])})
    if a["alpha"] != 1.0:
        y = ctx.emit("mul", [y, ctx.constant(np.float32(a["alpha"]))], {})
    if c is None:
        return Value(tensor=y)
    return _gemm_add_c(ctx, a, y, c)


def _gemm_add_c(ctx, a: dict, y, c: Value) -> Value:
    """``y + beta * C`` (C broadcast to y's rows)."""
    cv = ctx.floated(c)
    if cv.is_const:
        ct = ctx.in_layout(Value(const=_f32(ctx.const_value(cv)) * np.float32(a["beta"])),
                           None, 2)
    else:
        ct = ctx.in_layout(cv, None, 2)
        if a["beta"] != 1.0:
            ct = ctx.emit("mul", [ct, ctx.constant(np.float32(a["beta"]))], {})
    return Value(tensor=ctx.emit("add", [y, ct], {}))


def _qlinear_matmul(ctx) -> Value:
    ctx.attrs()
    aq, _ = _qparams(ctx, 1, 2, None, None, "a")
    x = _qlinear_x(ctx, ctx.value(0), aq, "a")
    w = _qlinear_weights(ctx, 3, 1)
    yq, ydtype = _qparams(ctx, 6, 7, None, None, "y")
    qout = _QOut(yq, ydtype, ctx.output_name())
    if w.quant.axis is None and (w.data.ndim != 2 or any(w.quant.zero_point)):
        # The dense kernel takes symmetric weights only; batch_matmul subtracts
        # both zero points (and takes a batch of matrices).
        if not 2 <= w.data.ndim <= 5:
            raise ctx.fail(f"b has shape {list(w.data.shape)}: rank 2 to 5 is supported")
        y = ctx.emit("batch_matmul", [ctx.plain(x), ctx.constant(w.data, w.quant)], {},
                     quant=yq)
        ctx.finish_int(qout, y)
        return None
    if w.data.ndim != 2:
        raise ctx.fail(f"b must be a 2-D constant, got shape {list(w.data.shape)}")
    if w.quant.axis is not None and (w.quant.axis != 1 or any(w.quant.zero_point)):
        raise ctx.fail("per-axis b must be quantized per column with zero points 0")
    return _dense_common(ctx, x, w, None, qout, aq, len(ctx.shape(x)))


# --------------------------------------------------------------------------- elementwise

def _binary(ir_op: str, integer: bool = True):
    """``integer``: whether the IR operator has an integer form with a fused activation
    (maximum and minimum have not: between QDQ pairs they run in float)."""
    def convert(ctx) -> Value | None:
        ctx.attrs()
        if not integer and ctx.n_inputs != 2:
            return _variadic(ctx, ir_op)
        if ctx.n_inputs != 2:
            raise ctx.fail(f"{ctx.n_inputs} inputs: {ctx.op} takes two")
        lhs, rhs = ctx.value(0), ctx.value(1)
        qout = ctx.int_output(fuse_activation=True) if integer else None
        int_mode = qout is not None and all(
            _is_int_act(ctx, v) or (v.is_const and v.dq and v.const.dtype == np.int8
                                    and v.quant.axis is None) for v in (lhs, rhs))
        ranks = (len(ctx.shape(lhs)), len(ctx.shape(rhs)))
        rank = max(ranks)
        operands = (lhs, rhs) if int_mode else (ctx.floated(lhs), ctx.floated(rhs))
        layout = None
        for v, r in zip(operands, ranks):
            if not v.is_const and v.flat is None and v.perm is not None and r == rank:
                layout = v.perm
                break
        for v in operands:
            if v.is_const and not v.dq and v.const.dtype != np.float32:
                raise ctx.fail(f"{v.const.dtype} operands are not supported (float32 is)")
        tensors = [ctx.in_layout(v, layout, rank) for v in operands]
        if integer and not int_mode:  # maximum and minimum take plain integers too
            _plain_arithmetic(ctx, tensors)
        if int_mode:
            y = ctx.emit(ir_op, tensors, {"activation": qout.activation}, quant=qout.quant)
            ctx.finish_int(qout, y, perm=layout)
            return None
        return Value(tensor=ctx.emit(ir_op, tensors, {}), perm=layout)
    return convert


#: Element types of Add/Sub/Mul on plain (unquantized) values the kernels compute.
_PLAIN_ARITHMETIC = ("float32", "int32")


def _plain_arithmetic(ctx, tensors) -> None:
    for t in tensors:
        if t.quant is None and t.dtype not in _PLAIN_ARITHMETIC:
            raise ctx.fail(f"{ctx.op} of {t.dtype} data without quantization is not supported "
                           f"({', '.join(_PLAIN_ARITHMETIC)} are, and int8 between QDQ pairs)")


def _variadic(ctx, ir_op: str) -> Value:
    """Max/Min of one input (itself) or of three and more (a chain of pairs, float)."""
    values = [ctx.floated(ctx.value(i)) for i in range(ctx.n_inputs)]
    if not values:
        raise ctx.fail("no inputs")
    if len(values) == 1:
        return values[0]
    shapes = [ctx.shape(v) for v in values]
    rank = max(len(sh) for sh in shapes)
    for v in values:
        if v.is_const and v.const.dtype != np.float32:
            raise ctx.fail(f"{v.const.dtype} operands are not supported (float32 is)")
    out = ctx.in_layout(values[0], None, rank)
    for v in values[1:]:
        out = ctx.emit(ir_op, [out, ctx.in_layout(v, None, rank)], {})
    return Value(tensor=out)


def _unary(ir_op: str, int_out: tuple[float, int] | None | str):
    """``int_out``: the integer output quantization the kernel needs, "any", or None."""
    def convert(ctx) -> Value | None:
        ctx.attrs()
        x = ctx.value(0)
        qout = ctx.int_output()
        if qout is not None and _is_int_act(ctx, x) and int_out is not None:
            q = qout.quant
            if int_out == "any" or (q.scale[0] == np.float32(int_out[0])
                                    and q.zero_point[0] == int_out[1]):
                y = ctx.emit(ir_op, [x.tensor], {}, quant=q)
                ctx.finish_int(qout, y, perm=x.perm, flat=x.flat)
                return None
        x = ctx.floated(x)
        # Elementwise: the result keeps the input's layout, even a deferred flatten.
        t = ctx.tensor(x) if x.is_const else x.tensor
        return Value(tensor=ctx.emit(ir_op, [t], {}), perm=x.perm, flat=x.flat)
    return convert


def _leaky_relu(ctx) -> Value:
    alpha = ctx.attrs(alpha=0.01)["alpha"]
    x = ctx.floated(ctx.value(0))
    t = ctx.tensor(x) if x.is_const else x.tensor
    return Value(tensor=ctx.emit("leaky_relu", [t], {"alpha": float(alpha)}), perm=x.perm,
                 flat=x.flat)


def _clip(ctx) -> Value:
    if ctx.opset < 11:
        a = ctx.attrs(min=-3.4028234663852886e38, max=3.4028234663852886e38)
        lo, hi = a["min"], a["max"]
    else:
        ctx.attrs()
        lo = hi = None
        for k in (1, 2):
            if ctx.value(k, optional=True) is not None:
                bound = ctx.const(k, "min" if k == 1 else "max")
                if bound.size != 1:
                    raise ctx.fail("min and max must be scalars")
                if k == 1:
                    lo = float(bound.reshape(()))
                else:
                    hi = float(bound.reshape(()))
    x = ctx.floated(ctx.value(0))
    if x.is_const:
        raise ctx.fail("Clip of a constant is not supported")
    t = x.tensor
    if t.dtype in ("int8", "uint8", "int16", "int32", "int64") and t.quant is None:
        return _clip_int(ctx, x, lo, hi)
    if t.dtype != "float32":
        raise ctx.fail(f"Clip of {t.dtype} data is not supported")
    op = {(0.0, None): "relu", (0.0, 6.0): "relu6"}.get((lo, hi))
    if op is not None:
        return Value(tensor=ctx.emit(op, [t], {}), perm=x.perm, flat=x.flat)
    if lo is not None:
        t = ctx.emit("maximum", [t, ctx.constant(np.float32(lo))], {})
    if hi is not None:
        t = ctx.emit("minimum", [t, ctx.constant(np.float32(hi))], {})
    if lo is None and hi is None:
        t = ctx.emit("reshape", [t], {"newshape": t.shape})
    return Value(tensor=t, perm=x.perm, flat=x.flat)


def _clip_int(ctx, x: Value, lo: float | None, hi: float | None) -> Value:
    """Clip of plain integers: maximum and minimum with bounds of the data's type."""
    t = x.tensor
    dtype = np.dtype(t.dtype)
    info = np.iinfo(dtype)
    for bound in (lo, hi):
        if bound is not None and bound != int(bound):
            raise ctx.fail(f"bound {bound} of {t.dtype} data is not an integer")
    if lo is not None:
        t = ctx.emit("maximum", [t, ctx.constant(np.asarray(max(lo, info.min), dtype))], {})
    if hi is not None:
        t = ctx.emit("minimum", [t, ctx.constant(np.asarray(min(hi, info.max), dtype))], {})
    if t is x.tensor:
        t = ctx.emit("reshape", [t], {"newshape": t.shape})
    return Value(tensor=t, perm=x.perm, flat=x.flat)


# --------------------------------------------------------------------------- pooling

def _pool(ir_op: str):
    def convert(ctx) -> Value | None:
        if ir_op == "max_pool2d":
            a = ctx.attrs(auto_pad="NOTSET", ceil_mode=0, dilations=None, kernel_shape=None,
                          pads=None, storage_order=0, strides=None)
            if a["storage_order"]:
                raise ctx.fail("storage_order=1 is not supported")
            if len(ctx.node.output) > 1 and ctx.node.output[1]:
                raise ctx.fail("the Indices output is not supported")
        else:
            a = ctx.attrs(auto_pad="NOTSET", ceil_mode=0, count_include_pad=0,
                          dilations=None, kernel_shape=None, pads=None, strides=None)
        if a["kernel_shape"] is None:
            raise ctx.fail("kernel_shape is required")
        x = ctx.value(0)
        one_d = len(ctx.shape(x)) == 3
        if one_d:  # [N, C, L] pooled as [N, C, 1, L]
            a = _as_2d_window(ctx, a)
        if _pair(ctx, a, "dilations") != (1, 1):
            raise ctx.fail(f"dilations {list(a['dilations'])} are not supported for pooling")
        _, _, h, w = _pool_shape(ctx, x)
        kernel, strides = _pair(ctx, a, "kernel_shape"), _pair(ctx, a, "strides")
        padding = _padding(ctx, a, (h, w), kernel, strides, (1, 1))
        extra = (0, 0)
        if a["ceil_mode"]:
            extra = tuple(_ceil_extra(size, k, s, p0, p1) for size, k, s, p0, p1 in
                          zip((h, w), kernel, strides, padding[:2], padding[2:]))
        return _pool_apply(ctx, ir_op, x, kernel, strides, padding,
                           include_pad=bool(a.get("count_include_pad")), extra=extra,
                           one_d=one_d)
    return convert


def _as_2d_window(ctx, a: dict) -> dict:
    """A 1-D window's attributes as those of a 2-D window of height 1."""
    out = dict(a)
    for key in ("kernel_shape", "strides", "dilations"):
        if a.get(key) is not None:
            if len(a[key]) != 1:
                raise ctx.fail(f"{key} {list(a[key])} for 1-D data needs one entry")
            out[key] = [1, int(a[key][0])]
    if a.get("pads") is not None:
        if len(a["pads"]) != 2:
            raise ctx.fail(f"pads {list(a['pads'])} for 1-D data need two entries")
        out["pads"] = [0, int(a["pads"][0]), 0, int(a["pads"][1])]
    return out


def _pool_shape(ctx, x: Value) -> tuple[int, int, int, int]:
    """[N, C, H, W] of 2-D data, or [N, C, 1, L] of 1-D data."""
    shape = ctx.shape(x)
    if len(shape) == 3:
        return (shape[0], shape[1], 1, shape[2])
    return _rank4(ctx, x)


def _ceil_extra(size: int, k: int, s: int, p0: int, p1: int) -> int:
    """Padding beyond ``p1`` that ceil_mode's output size needs: the last window
    may run past the end, but must start inside the input or its first padding
    (ONNX's rule); the extra elements are never counted (as padding is not)."""
    span = size + p0 + p1 - k
    out = -(-span // s) + 1
    if (out - 1) * s >= size + p0:
        out -= 1
    return max((out - 1) * s + k - (size + p0 + p1), 0)


def _pool_apply(ctx, ir_op, x: Value, kernel, strides, padding, include_pad=False,
                extra=(0, 0), one_d=False):
    """The pool of ``x`` ([N, C, H, W], or [N, C, L] when ``one_d``) in NHWC.

    ``include_pad``: the padding counts in averages (an explicit pad first);
    ``extra``: further bottom/right padding that never counts (ceil_mode).
    """
    qout = ctx.int_output() if ir_op == "avg_pool2d" else None
    int_mode = _is_int_act(ctx, x) and (ir_op == "max_pool2d" or qout is not None)
    src = x if int_mode else ctx.floated(x)
    if (not int_mode and not src.is_const and src.tensor.dtype != "float32"
            and src.tensor.quant is None):
        raise ctx.fail(f"pooling {src.tensor.dtype} data without quantization is not "
                       "supported (float32 is, and int8 between QDQ pairs)")
    if one_d:
        t = ctx.in_layout(src, (0, 2, 1))
        n, length, c = t.shape
        t = ctx.emit("reshape", [t], {"newshape": (n, 1, length, c)}, quant=t.quant)
    else:
        t = ctx.in_layout(src, NHWC)
    if include_pad and any(padding):
        top, left, bottom, right = padding
        t = ctx.emit("pad", [t], {"pad_width": ((0, 0), (top, bottom), (left, right),
                                                (0, 0))}, quant=t.quant)
        padding = (0, 0, 0, 0)
    top, left, bottom, right = padding
    attrs = {"pool_size": kernel, "strides": strides,
             "padding": (top, left, bottom + extra[0], right + extra[1])}
    y = ctx.emit(ir_op, [t], attrs, quant=t.quant if int_mode else None)
    perm = NHWC
    if one_d:  # [N, 1, OL, C] -> [N, OL, C], which is ONNX's [N, C, OL] transposed
        y = ctx.emit("reshape", [y], {"newshape": (y.shape[0], y.shape[2], y.shape[3])},
                     quant=y.quant)
        perm = (0, 2, 1)
    if int_mode and qout is not None:
        ctx.finish_int(qout, _requant(ctx, y, qout.quant), perm=perm)
        return None
    # max pool commutes with dequantization: it stays integer
    return Value(tensor=y, perm=perm, dq=int_mode)


def _global_pool(ir_op: str):
    def convert(ctx) -> Value | None:
        ctx.attrs()
        x = ctx.value(0)
        _, _, h, w = _pool_shape(ctx, x)
        return _pool_apply(ctx, ir_op, x, (h, w), (1, 1), (0, 0, 0, 0),
                           one_d=len(ctx.shape(x)) == 3)
    return convert


# --------------------------------------------------------------------------- shapes

def _reshape_target(ctx, in_shape) -> tuple[int, ...]:
    if ctx.opset < 5:
        a = ctx.attrs(shape=None, consumed_inputs=None)
        target = list(a["shape"] or [])
        allowzero = 0
    else:
        allowzero = ctx.attrs(allowzero=0)["allowzero"]
        target = [int(d) for d in ctx.const(1, "shape").reshape(-1)]
    out = []
    for i, d in enumerate(target):
        if d == 0 and not allowzero:
            if i >= len(in_shape):
                raise ctx.fail(f"shape {target} copies dimension {i}, which the input lacks")
            d = in_shape[i]
        out.append(d)
    size = int(np.prod(in_shape, dtype=np.int64))
    if out.count(-1) > 1:
        raise ctx.fail(f"shape {target} has more than one -1")
    if -1 in out:
        rest = int(np.prod([d for d in out if d != -1], dtype=np.int64))
        if rest == 0 or size % rest:
            raise ctx.fail(f"cannot reshape {list(in_shape)} to {target}")
        out[out.index(-1)] = size // rest
    if any(d < 0 for d in out) or int(np.prod(out, dtype=np.int64)) != size:
        raise ctx.fail(f"cannot reshape {list(in_shape)} to {target}")
    return tuple(out)


def _flatten_shape(ctx, in_shape) -> tuple[int, int]:
    axis = ctx.attrs(axis=1)["axis"]
    rank = len(in_shape)
    if not -rank <= axis <= rank:
        raise ctx.fail(f"axis {axis} is out of range for rank {rank}")
    axis %= rank + 1 if axis >= 0 else rank
    return (int(np.prod(in_shape[:axis], dtype=np.int64)),
            int(np.prod(in_shape[axis:], dtype=np.int64)))


def _reshape_value(ctx, x: Value, shape: tuple[int, ...]) -> Value:
    in_shape = ctx.shape(x)
    # Flattening an NHWC-held map: defer the element order to the next layer.
    if (x.perm == NHWC and x.flat is None and len(shape) == 2
            and shape == (in_shape[0], int(np.prod(in_shape[1:])))):
        n, c, h, w = in_shape
        t = ctx.emit("reshape", [x.tensor], {"newshape": shape},
                     quant=x.tensor.quant)
        if c == 1 or h * w == 1:  # both orders agree
            return Value(tensor=t, dq=x.dq)
        return Value(tensor=t, flat=(n, h, w, c), dq=x.dq)
    t = ctx.plain(x)
    y = ctx.emit("reshape", [t], {"newshape": shape}, quant=t.quant)
    return Value(tensor=y, dq=x.dq)


def _reshape(ctx) -> Value:
    x = ctx.value(0)
    return _reshape_value(ctx, x, _reshape_target(ctx, ctx.shape(x)))


def _flatten(ctx) -> Value:
    x = ctx.value(0)
    return _reshape_value(ctx, x, _flatten_shape(ctx, ctx.shape(x)))


def _squeeze(ctx) -> Value:
    """Squeeze of a computed value: a reshape (the unit axes go)."""
    x = ctx.value(0)
    shape = ctx.shape(x)
    axes = _axes(ctx, "axes", optional=True)
    if axes is None:
        axes = [i for i, d in enumerate(shape) if d == 1]
    rank = len(shape)
    if any(not -rank <= a < rank for a in axes):
        raise ctx.fail(f"axes {axes} are out of range for rank {rank}")
    axes = {a % rank for a in axes}
    if any(shape[a] != 1 for a in axes):
        raise ctx.fail(f"cannot squeeze axes {sorted(axes)} of the shape {list(shape)}")
    return _reshape_value(ctx, x, tuple(d for i, d in enumerate(shape) if i not in axes))


def _unsqueeze(ctx) -> Value:
    """Unsqueeze of a computed value: a reshape (unit axes inserted)."""
    x = ctx.value(0)
    shape = list(ctx.shape(x))
    axes = _axes(ctx, "axes")
    rank = len(shape) + len(axes)
    if any(not -rank <= a < rank for a in axes) or len({a % rank for a in axes}) != len(axes):
        raise ctx.fail(f"axes {axes} are out of range or repeated for rank {rank}")
    for a in sorted(a % rank for a in axes):
        shape.insert(a, 1)
    return _reshape_value(ctx, x, tuple(shape))


def _transpose_perm(ctx, rank: int) -> tuple[int, ...]:
    perm = ctx.attrs(perm=None)["perm"]
    if perm is None:
        return tuple(range(rank))[::-1]
    if sorted(perm) != list(range(rank)):
        raise ctx.fail(f"perm {list(perm)} is not a permutation of {rank} axes")
    return tuple(int(p) for p in perm)


def _transpose(ctx) -> Value:
    x = ctx.value(0)
    rank = len(ctx.shape(x))
    perm = _transpose_perm(ctx, rank)
    if x.flat is not None:
        x = Value(tensor=ctx.plain(x), dq=x.dq)
    # IR in = ONNX in transposed by x.perm; ONNX out = ONNX in transposed by perm.
    inverse = np.argsort(x.perm) if x.perm is not None else np.arange(rank)
    composed = tuple(int(inverse[p]) for p in perm)
    return Value(tensor=ctx.transpose(x.tensor, composed), dq=x.dq)


def _concat(ctx) -> Value:
    axis = ctx.attrs(axis=None)["axis"]
    if axis is None:
        raise ctx.fail("axis is required")
    values = [ctx.value(i) for i in range(ctx.n_inputs)]
    rank = len(ctx.shape(values[0]))
    if not -rank <= axis < rank:
        raise ctx.fail(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    quants = {v.tensor.quant if not v.is_const else None for v in values}
    int_mode = all(_is_int_act(ctx, v) for v in values) and len(quants) == 1
    if not int_mode:
        values = [ctx.floated(v) for v in values]
    layout = next((v.perm for v in values if not v.is_const and v.flat is None
                   and v.perm is not None), None)
    tensors = [ctx.in_layout(v, layout, rank) for v in values]
    ir_axis = list(layout).index(axis) if layout is not None else axis
    y = ctx.emit("concatenate", tensors, {"axis": ir_axis},
                 quant=tensors[0].quant if int_mode else None)
    return Value(tensor=y, perm=layout, dq=int_mode)


def _softmax(ctx) -> Value | None:
    """Softmax and LogSoftmax over ``axis`` (the IR's work on the last axis)."""
    ir_op = "log_softmax" if ctx.op == "LogSoftmax" else "softmax"
    default = -1 if ctx.opset >= 13 else 1
    axis = ctx.attrs(axis=default)["axis"]
    x = ctx.value(0)
    shape = ctx.shape(x)
    rank = len(shape)
    if not -rank <= axis < rank:
        raise ctx.fail(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    qout = ctx.int_output()
    int_mode = (ir_op == "softmax" and qout is not None and _is_int_act(ctx, x)
                and qout.quant.scale[0] == np.float32(1 / 256)
                and qout.quant.zero_point[0] == -128)
    src = x if int_mode else ctx.floated(x)
    quant = qout.quant if int_mode else None
    if ctx.opset < 13 and axis != rank - 1:
        # Before opset 13 Softmax works on the input flattened to 2-D at axis.
        flat = (int(np.prod(shape[:axis])), int(np.prod(shape[axis:])))
        t = ctx.emit("reshape", [ctx.plain(src)], {"newshape": flat}, quant=src.tensor.quant
                     if int_mode else None)
        t = ctx.emit(ir_op, [t], {}, quant=quant)
        y = ctx.emit("reshape", [t], {"newshape": shape}, quant=quant)
        perm = None
    else:
        t = ctx.tensor(src) if src.flat is None else ctx.plain(src)
        perm = src.perm if src.flat is None else None
        ir_axis = list(perm).index(axis) if perm is not None else axis
        if ir_axis == rank - 1:
            y = ctx.emit(ir_op, [t], {}, quant=quant)
        else:
            move = tuple(i for i in range(rank) if i != ir_axis) + (ir_axis,)
            back = tuple(int(i) for i in np.argsort(move))
            t = ctx.emit(ir_op, [ctx.transpose(t, move)], {}, quant=quant)
            y = ctx.transpose(t, back)
    if int_mode:
        ctx.finish_int(qout, y, perm=perm)
        return None
    return Value(tensor=y, perm=perm)


def _pad(ctx) -> Value:
    """Constant-mode Pad; the pads follow the data's layout."""
    if ctx.opset < 11:
        a = ctx.attrs(mode="constant", pads=None, value=0.0)
        pads, value = a["pads"], float(a["value"])
    else:
        a = ctx.attrs(mode="constant")
        pads = [int(p) for p in ctx.const(1, "pads").reshape(-1)]
        value = 0.0
        if ctx.value(2, optional=True) is not None:
            value = ctx.const(2, "constant_value").reshape(-1)
            if value.size != 1:
                raise ctx.fail("constant_value must be a scalar")
            value = float(value[0])
    if a["mode"] not in _PAD_MODES:
        raise ctx.fail(f"mode {a['mode']!r} is not supported; supported: "
                       f"{', '.join(_PAD_MODES)}")
    x = ctx.value(0)
    shape = ctx.shape(x)
    rank = len(shape)
    if ctx.value(3, optional=True) is not None:
        axes = [int(v) % rank for v in ctx.const(3, "axes").reshape(-1)]
        full = [0] * (2 * rank)
        for k, axis in enumerate(axes):
            full[axis], full[rank + axis] = pads[k], pads[len(axes) + k]
        pads = full
    if pads is None or len(pads) != 2 * rank:
        raise ctx.fail(f"pads need {2 * rank} entries for rank {rank}")
    if min(pads) < 0:
        raise ctx.fail("negative pads (cropping) are not supported")
    if not (_is_int_act(ctx, x) and (value == 0.0 or a["mode"] != "constant")):
        x = ctx.floated(x)
    layout = x.perm if x.flat is None and not x.is_const else None
    t = ctx.in_layout(x, layout, rank)
    order = layout if layout is not None else range(rank)
    width = tuple((pads[i], pads[rank + i]) for i in order)
    if a["mode"] != "constant":
        src = t
        for axis, (before, after) in enumerate(width):
            if before or after:
                index = _pad_index(ctx, a["mode"], t.shape[axis], before, after)
                t = ctx.emit("gather", [t, ctx.constant(index)], {"axis": axis},
                             quant=t.quant)
        if t is src:  # nothing padded: still a tensor of its own
            t = ctx.emit("reshape", [t], {"newshape": t.shape}, quant=t.quant)
        return Value(tensor=t, perm=layout, dq=x.dq)
    return Value(tensor=ctx.emit("pad", [t], {"pad_width": width, "value": value}),
                 perm=layout, dq=x.dq)


#: Pad modes; all but constant copy elements of the data, by a gather with
#: indices computed at import (:func:`_pad_index`).
_PAD_MODES = ("constant", "reflect", "edge", "wrap")


def _pad_index(ctx, mode: str, size: int, before: int, after: int) -> np.ndarray:
    """Which input element each padded position of one axis copies (int32)."""
    i = np.arange(-before, size + after)
    if mode == "edge":
        i = np.clip(i, 0, size - 1)
    elif mode == "wrap":
        i = i % size
    else:  # reflect: the border element is not repeated
        if max(before, after) > size - 1:
            raise ctx.fail(f"reflect pads {before}, {after} must be below the axis size "
                           f"{size}")
        i = np.abs(i)
        i = np.where(i > size - 1, 2 * (size - 1) - i, i)
    return i.astype(np.int32)


def _reduce_mean(ctx) -> Value | None:
    axes, keep, noop = _reduce_attrs(ctx)
    if noop:
        raise ctx.fail("noop_with_empty_axes=1 without axes is not supported")
    x = ctx.value(0)
    rank = len(ctx.shape(x))
    axes = sorted({int(v) % rank for v in (axes if axes is not None else range(rank))})
    qout = ctx.int_output()
    int_mode = qout is not None and _is_int_act(ctx, x)
    src = x if int_mode else ctx.floated(x)
    layout = src.perm if src.flat is None else None
    t = ctx.in_layout(src, layout, rank)
    order = list(layout) if layout is not None else list(range(rank))
    ir_axes = tuple(order.index(a) for a in axes)
    attrs = {"axes": ir_axes, "keepdims": keep}
    out_layout = layout
    if not keep and layout is not None:
        rest = [p for p in order if p not in axes]  # ONNX axes left, in IR order
        out_layout = tuple(sorted(rest).index(p) for p in rest)
        if out_layout == tuple(range(len(rest))):
            out_layout = None
    if int_mode:
        y = ctx.emit("mean", [t], attrs, quant=qout.quant)
        ctx.finish_int(qout, y, perm=out_layout)
        return None
    return Value(tensor=ctx.emit("mean", [t], attrs), perm=out_layout)


def _batch_norm(ctx) -> Value:
    """Inference BatchNormalization as ``x * a + b`` with per-channel constants."""
    a = ctx.attrs(epsilon=1e-5, momentum=0.9, training_mode=0, spatial=1)
    if a["training_mode"] or len(ctx.node.output) > 1 and any(ctx.node.output[1:]):
        raise ctx.fail("training mode (running statistics as outputs) is not supported")
    if not a["spatial"]:
        raise ctx.fail("spatial=0 is not supported")
    x = ctx.floated(ctx.value(0))
    rank = len(ctx.shape(x))
    if rank < 2:
        raise ctx.fail("the input needs a channel axis")
    scale, bias, mean, var = (ctx.const(i, n).astype(np.float64).reshape(-1) for i, n in
                              ((1, "scale"), (2, "B"), (3, "mean"), (4, "var")))
    mult = scale / np.sqrt(var + np.float64(np.float32(a["epsilon"])))
    shift = bias - mean * mult
    per_channel = (-1,) + (1,) * (rank - 2)
    layout = x.perm if x.flat is None else None
    t = ctx.in_layout(x, layout, rank)
    k_mult = ctx.in_layout(Value(const=_f32(mult).reshape(per_channel)), layout, rank)
    k_shift = ctx.in_layout(Value(const=_f32(shift).reshape(per_channel)), layout, rank)
    y = ctx.emit("add", [ctx.emit("mul", [t, k_mult], {}), k_shift], {})
    return Value(tensor=y, perm=layout)


def _dropout(ctx) -> Value | list[Value]:
    """Dropout at inference is the identity and its mask all true.

    In training mode (``training_mode``, input 2 from opset 12) it drops
    random elements: refused, unless the ratio is 0 (nothing is dropped).
    """
    a = ctx.attrs(seed=0, ratio=0.5, is_test=1)
    ratio, training = float(a["ratio"]), not a["is_test"] if ctx.opset < 7 else False
    if ctx.value(1, optional=True) is not None:
        ratio = float(ctx.const(1, "ratio").reshape(-1)[0])
    if ctx.value(2, optional=True) is not None:
        training = bool(ctx.const(2, "training_mode").reshape(-1)[0])
    if training and ratio != 0.0:
        raise ctx.fail(f"training mode (training_mode=True, ratio {ratio}) drops random "
                       "elements; not supported (export the model for inference)")
    x = ctx.value(0)
    if len(ctx.node.output) > 1 and ctx.node.output[1]:
        return [x, Value(const=np.ones(ctx.shape(x), np.bool_))]
    return x


# --------------------------------------------------------------------------- run time

def _plain_operands(ctx, count: int, float_only: bool = False):
    """Inputs 0..count-1 as IR tensors in ONNX order, broadcast-aligned to one rank."""
    values = [ctx.floated(ctx.value(i)) for i in range(count)]
    rank = max(len(ctx.shape(v)) for v in values)
    tensors = [ctx.in_layout(v, None, rank) for v in values]
    for t in tensors:
        if float_only and t.dtype != "float32":
            raise ctx.fail(f"{t.dtype} data is not supported here (float32 is)")
    return tensors


def _float_unary_op(ir_op: str):
    """A float elementwise operator: its output keeps the input's layout."""
    def convert(ctx) -> Value:
        ctx.attrs()
        x = ctx.floated(ctx.value(0))
        t = ctx.tensor(x) if x.is_const else x.tensor
        if t.dtype != "float32":
            raise ctx.fail(f"{ctx.op} of {t.dtype} data is not supported (float32 is)")
        return Value(tensor=ctx.emit(ir_op, [t], {}), perm=x.perm, flat=x.flat)
    return convert


def _plain_binary(ir_op: str, float_only: bool):
    """Div and comparisons of run-time values (in ONNX order, numpy broadcasting)."""
    def convert(ctx) -> Value:
        ctx.attrs()
        lhs, rhs = _plain_operands(ctx, 2, float_only)
        if lhs.dtype != rhs.dtype:
            raise ctx.fail(f"operands of types {lhs.dtype} and {rhs.dtype}")
        return Value(tensor=ctx.emit(ir_op, [lhs, rhs], {}))
    return convert


def _not(ctx) -> Value:
    ctx.attrs()
    (x,) = _plain_operands(ctx, 1)
    if x.dtype != "bool":
        raise ctx.fail(f"Not of {x.dtype} data (bool is supported)")
    return Value(tensor=ctx.emit("logical_not", [x], {}))


def _where(ctx) -> Value:
    ctx.attrs()
    cond, lhs, rhs = _plain_operands(ctx, 3)
    if cond.dtype != "bool" or lhs.dtype != rhs.dtype:
        raise ctx.fail(f"Where needs a bool condition and two values of one type, got "
                       f"{cond.dtype}, {lhs.dtype} and {rhs.dtype}")
    shape = tuple(np.broadcast_shapes(cond.shape, lhs.shape, rhs.shape))
    # select broadcasts, but its output is read as the first value's shape:
    # make that the full one.
    if tuple(lhs.shape) != shape:
        lhs = ctx.emit("broadcast_to", [lhs], {"shape": shape})
    return Value(tensor=ctx.emit("select", [cond, lhs, rhs], {}))


def _cast(ctx) -> Value:
    to = ctx.attrs(to=None, saturate=1)["to"]
    if to is None:
        raise ctx.fail("the attribute 'to' is required")
    dtype = _FOLD_DTYPES.get(to)
    x = ctx.floated(ctx.value(0))
    if dtype not in ("float32", "int8", "uint8", "int16", "int32", "int64", "bool"):
        raise ctx.fail(f"casting to {dtype_name(to)} at run time is not supported")
    t = x.tensor
    if t.dtype == dtype:
        return x
    return Value(tensor=ctx.emit("cast", [t], {"dtype": dtype}), perm=x.perm, flat=x.flat)


def _expand(ctx) -> Value:
    ctx.attrs()
    x = ctx.floated(ctx.value(0))
    target = tuple(int(d) for d in ctx.const(1, "shape").reshape(-1))
    shape = tuple(np.broadcast_shapes(ctx.shape(x), target))
    t = ctx.plain(x)
    if len(t.shape) < len(shape):
        t = ctx.emit("reshape", [t], {"newshape": (1,) * (len(shape) - len(t.shape))
                                      + tuple(t.shape)}, quant=t.quant)
    if tuple(t.shape) == shape:
        return Value(tensor=ctx.emit("reshape", [t], {"newshape": shape}, quant=t.quant),
                     dq=x.dq)
    return Value(tensor=ctx.emit("broadcast_to", [t], {"shape": shape}, quant=t.quant),
                 dq=x.dq)


def _gather(ctx) -> Value:
    """Gather along an axis with indices known at import or computed (int32 in the IR)."""
    axis = ctx.attrs(axis=0)["axis"]
    x = ctx.value(0)
    if x.flat is not None or x.perm is not None:
        x = Value(tensor=ctx.plain(x), dq=x.dq)
    shape = ctx.shape(x)
    rank = len(shape)
    if not -rank <= axis < rank:
        raise ctx.fail(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    data = ctx.tensor(x)
    iv = ctx.value(1)
    if iv.is_const:
        idx = ctx.const_value(iv).astype(np.int64)
        if np.any((idx < -shape[axis]) | (idx >= shape[axis])):
            raise ctx.fail(f"indices out of range for an axis of size {shape[axis]}")
        indices = ctx.constant((idx % shape[axis]).astype(np.int32))
    else:
        indices = iv.tensor
        if indices.dtype not in ("int32", "int64"):
            raise ctx.fail(f"indices of type {indices.dtype} (int32 and int64 are supported)")
        if indices.dtype == "int64":  # run-time indices must be in range, non-negative
            indices = ctx.emit("cast", [ctx.plain(iv)], {"dtype": "int32"})
    y = ctx.emit("gather", [data, indices], {"axis": axis}, quant=data.quant)
    return Value(tensor=y, dq=x.dq)


def _arg_extreme(ir_op: str):
    def convert(ctx) -> Value:
        a = ctx.attrs(axis=0, keepdims=1, select_last_index=0)
        if a["select_last_index"]:
            raise ctx.fail("select_last_index=1 is not supported (the first index is "
                           "picked)")
        x = ctx.value(0)
        src = x if _is_int_act(ctx, x) else ctx.floated(x)
        t = ctx.plain(src)
        rank = len(t.shape)
        if not -rank <= a["axis"] < rank:
            raise ctx.fail(f"axis {a['axis']} is out of range for rank {rank}")
        axis = a["axis"] % rank
        y = ctx.emit(ir_op, [t], {"axis": axis})
        # Through the keepdims shape in any case: the reshape (a view) keeps the
        # cast out of the arg_max kernel, whose reduction takes no epilogue.
        kept = tuple(1 if i == axis else d for i, d in enumerate(t.shape))
        y = ctx.emit("cast", [ctx.emit("reshape", [y], {"newshape": kept})],
                     {"dtype": "int64"})
        if not a["keepdims"]:
            y = ctx.emit("reshape", [y], {"newshape": tuple(
                d for i, d in enumerate(t.shape) if i != axis)})
        return Value(tensor=y)
    return convert


def _split(ctx) -> list[Value]:
    """Split: one strided_slice per output, in the value's layout."""
    a = ctx.attrs(axis=0, split=None, num_outputs=None)
    x = ctx.value(0)
    if x.flat is not None:
        x = Value(tensor=ctx.plain(x), dq=x.dq)
    shape = ctx.shape(x)
    rank = len(shape)
    if not -rank <= a["axis"] < rank:
        raise ctx.fail(f"axis {a['axis']} is out of range for rank {rank}")
    axis = a["axis"] % rank
    n = len(ctx.node.output)
    size = shape[axis]
    if ctx.value(1, optional=True) is not None:
        sizes = [int(v) for v in ctx.const(1, "split").reshape(-1)]
    elif a["split"] is not None:
        sizes = [int(v) for v in a["split"]]
    else:
        parts = a["num_outputs"] or n
        step = -(-size // parts)
        sizes = [min(step, size - k * step) for k in range(parts)]
    if len(sizes) != n or sum(sizes) != size or min(sizes) < 1:
        raise ctx.fail(f"split sizes {sizes} do not cut an axis of size {size} into {n} "
                       "non-empty parts")
    t = ctx.tensor(x) if x.is_const else x.tensor
    order = list(x.perm) if x.perm is not None and not x.is_const else list(range(rank))
    ir_axis = order.index(axis)
    outs, start = [], 0
    for k in sizes:
        begin = [0] * rank
        end = list(t.shape)
        begin[ir_axis], end[ir_axis] = start, start + k
        y = ctx.emit("strided_slice", [t], {"begin": tuple(begin), "end": tuple(end),
                                            "strides": (1,) * rank}, quant=t.quant)
        outs.append(Value(tensor=y, perm=x.perm if not x.is_const else None, dq=x.dq))
        start += k
    return outs


def _layer_norm(ctx) -> list[Value] | Value:
    """LayerNormalization as mean -> sub -> mul -> mean -> add eps -> rsqrt -> mul
    (-> mul scale -> add bias), float32, over the axes from ``axis`` on."""
    a = ctx.attrs(axis=-1, epsilon=1e-5, stash_type=1)
    if a["stash_type"] != 1:
        raise ctx.fail(f"stash_type {a['stash_type']} is not supported (1, float32, is)")
    if any(ctx.node.output[1:]):
        raise ctx.fail("the Mean and InvStdDev outputs are not supported")
    x = ctx.floated(ctx.value(0))
    t = ctx.plain(x)
    if t.dtype != "float32":
        raise ctx.fail(f"{t.dtype} data is not supported (float32 is)")
    rank = len(t.shape)
    if not -rank <= a["axis"] < rank:
        raise ctx.fail(f"axis {a['axis']} is out of range for rank {rank}")
    axes = tuple(range(a["axis"] % rank, rank))
    mean = ctx.emit("mean", [t], {"axes": axes, "keepdims": True})
    d = ctx.emit("sub", [t, mean], {})
    var = ctx.emit("mean", [ctx.emit("mul", [d, d], {})], {"axes": axes, "keepdims": True})
    eps = ctx.constant(np.float32(a["epsilon"]))
    y = ctx.emit("mul", [d, ctx.emit("rsqrt", [ctx.emit("add", [var, eps], {})], {})], {})
    for i, op in ((1, "mul"), (2, "add")):
        v = ctx.value(i, optional=True)
        if v is not None:
            y = ctx.emit(op, [y, ctx.in_layout(ctx.floated(v), None, rank)], {})
    return Value(tensor=y)


def _hard_sigmoid(ctx) -> Value:
    """``max(0, min(1, alpha * x + beta))`` (float)."""
    a = ctx.attrs(alpha=0.2, beta=0.5)
    x = ctx.floated(ctx.value(0))
    t = x.tensor if not x.is_const else ctx.tensor(x)
    if t.dtype != "float32":
        raise ctx.fail(f"{t.dtype} data is not supported (float32 is)")
    y = ctx.emit("add", [ctx.emit("mul", [t, ctx.constant(np.float32(a["alpha"]))], {}),
                         ctx.constant(np.float32(a["beta"]))], {})
    y = ctx.emit("minimum", [ctx.emit("relu", [y], {}), ctx.constant(np.float32(1.0))], {})
    return Value(tensor=y, perm=x.perm, flat=x.flat)


def _topk(ctx) -> list[Value]:
    """TopK with ``k`` known at import: one ``topk`` node per output read (values,
    int64 indices), in ONNX's element order; int8 values between QDQ stay int8."""
    a = ctx.attrs(axis=-1, largest=1, sorted=1, k=None)
    x = ctx.value(0)
    if x.flat is not None or x.perm is not None:
        x = Value(tensor=ctx.plain(x), dq=x.dq)
    t = ctx.tensor(x)
    if ctx.opset < 10:
        k = a["k"]
        if k is None:
            raise ctx.fail("the attribute 'k' is required before opset 10")
    else:
        k = ctx.const(1, "K").reshape(-1)
        if k.size != 1:
            raise ctx.fail(f"K must hold one value, got {k.size}")
        k = int(k[0])
    rank = len(t.shape)
    if not -rank <= a["axis"] < rank:
        raise ctx.fail(f"axis {a['axis']} is out of range for rank {rank}")
    if t.dtype not in TOPK_DTYPES:
        raise ctx.fail(f"{t.dtype} data is not supported ({', '.join(TOPK_DTYPES)} are)")
    if not 1 <= k <= t.shape[a["axis"]]:
        raise ctx.fail(f"K={k} must be 1 to the axis size {t.shape[a['axis']]} (an empty "
                       "result is not supported)")
    # sorted=0 leaves the order to the implementation: the sorted one is valid.
    attrs = {"k": k, "axis": a["axis"] % rank, "largest": bool(a["largest"])}
    outs = []
    for i, what in enumerate(("values", "indices")):
        name = ctx.output_name(i)
        if not (name in ctx.imp.graph_outputs or ctx.imp.consumers.get(name)):
            outs.append(None)  # nothing reads it: no node
            continue
        y = ctx.emit("topk", [t], {**attrs, "output": what},
                     quant=t.quant if what == "values" else None)
        outs.append(Value(tensor=y, dq=x.dq and what == "values"))
    return outs


def _gelu(ctx) -> Value | None:
    """Gelu: the IR's gelu, exact (approximate="none", through erf) or the tanh
    form; int8 (a table) between DequantizeLinear and QuantizeLinear, else float32."""
    approx = ctx.attrs(approximate="none")["approximate"]
    if approx not in ("none", "tanh"):
        raise ctx.fail(f"approximate={approx!r} is not allowed ('none' or 'tanh')")
    attrs = {"approximate": approx == "tanh"}
    x = ctx.value(0)
    qout = ctx.int_output()
    if qout is not None and _is_int_act(ctx, x) and x.tensor.dtype == "int8":
        y = ctx.emit("gelu", [x.tensor], attrs, quant=qout.quant)
        ctx.finish_int(qout, y, perm=x.perm, flat=x.flat)
        return None
    x = ctx.floated(x)
    t = ctx.tensor(x) if x.is_const else x.tensor
    if t.dtype != "float32":
        raise ctx.fail(f"{t.dtype} data is not supported (float32, or int8 through QDQ, is)")
    return Value(tensor=ctx.emit("gelu", [t], attrs), perm=x.perm, flat=x.flat)


def _scalar_near(ctx, name: str, want: float) -> bool:
    """Whether ONNX value ``name`` is a float scalar constant holding ``want``
    (float32 close): an initializer, a value converted already, or a Constant
    node later in the graph (exporters write constants where they are first read)."""
    v = ctx.imp.values.get(name)
    if v is not None:
        if not v.is_const or v.dq:
            return False
        c = v.const
    else:
        node = next((n for n in ctx.imp.graph_proto.node if name in n.output), None)
        if node is None or node.op_type != "Constant" or len(node.attribute) != 1:
            return False
        got = attribute_values(node)
        if "value_float" in got:
            c = np.float32(got["value_float"])
        elif "value" in got:
            try:
                c = tensor_attribute(ctx, got["value"], "value")
            except ModelError:
                return False
        else:
            return False
    c = np.asarray(c)
    return (c.size == 1 and c.dtype.kind == "f"
            and abs(float(c.reshape(())) - want) <= 1e-6 * abs(want))


def _erf_gelu(ctx) -> Value | None:
    """The erf GELU PyTorch's exporters write for ``nn.GELU()`` (before ONNX had
    Gelu): ``Div(x, sqrt 2) | Mul(x, 1/sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5``
    (the two last Muls in either order), each step read only by the next.  Seen at
    the Div (Mul), the chain becomes one exact gelu and its later nodes are
    absorbed; None when the node does not start such a chain."""
    imp, node = ctx.imp, ctx.node
    if len(node.input) != 2 or not node.input[1]:
        return None
    scale = math.sqrt(2.0) if node.op_type == "Div" else math.sqrt(0.5)
    x_name = node.input[0]
    x = imp.values.get(x_name)
    if x is None or x.is_const or x.dq or not _scalar_near(ctx, node.input[1], scale):
        return None

    def only_reader(name: str, op: str):
        reader = imp.sole_reader(name)
        if reader is None:
            return None
        user = reader[1]
        if user.op_type != op or user.domain not in ("", "ai.onnx") or user.attribute:
            return None
        return reader

    def other(user, name: str) -> str | None:
        ins = list(user.input)
        if len(ins) != 2 or name not in ins:
            return None
        return ins[1] if ins[0] == name else ins[0]

    erf = only_reader(node.output[0], "Erf")
    add = erf and only_reader(erf[1].output[0], "Add")
    if not add or not _scalar_near(ctx, other(add[1], erf[1].output[0]) or "", 1.0):
        return None
    # Mul by x then by 0.5, or by 0.5 then by x.
    first = only_reader(add[1].output[0], "Mul")
    second = first and only_reader(first[1].output[0], "Mul")
    if not second:
        return None
    a = other(first[1], add[1].output[0])
    b = other(second[1], first[1].output[0])
    if not ((a == x_name and _scalar_near(ctx, b or "", 0.5))
            or (b == x_name and _scalar_near(ctx, a or "", 0.5))):
        return None
    chain = [erf[0], add[0], first[0], second[0]]
    t = x.tensor if x.flat is None else ctx.plain(x)
    if t.dtype != "float32":
        return None
    y = ctx.emit("gelu", [t], {"approximate": False})
    imp.absorbed.update(chain)
    out = second[1].output[0]
    imp.values[out] = Value(tensor=y, perm=x.perm if x.flat is None else None)
    y.name = out
    return y


def _with_erf_gelu(convert: Callable) -> Callable:
    """``convert``, unless its node starts PyTorch's erf GELU (:func:`_erf_gelu`)."""
    def wrapped(ctx):
        if _erf_gelu(ctx) is not None:
            return None
        return convert(ctx)
    return wrapped


CONVERTERS: dict[str, Callable] = {
    "Conv": _conv,
    "QLinearConv": _qlinear_conv,
    "Gemm": _gemm,
    "MatMul": _matmul,
    "QLinearMatMul": _qlinear_matmul,
    "Add": _binary("add"),
    "Sub": _binary("sub"),
    "Mul": _with_erf_gelu(_binary("mul")),
    "Max": _binary("maximum", integer=False),
    "Min": _binary("minimum", integer=False),
    "Relu": _unary("relu", "any"),
    "LeakyRelu": _leaky_relu,
    "HardSwish": _unary("hard_swish", None),
    "Sigmoid": _unary("logistic", (1 / 256, -128)),
    "Tanh": _unary("tanh", (1 / 128, 0)),
    "Clip": _clip,
    "MaxPool": _pool("max_pool2d"),
    "AveragePool": _pool("avg_pool2d"),
    "GlobalAveragePool": _global_pool("avg_pool2d"),
    "GlobalMaxPool": _global_pool("max_pool2d"),
    "Reshape": _reshape,
    "Flatten": _flatten,
    "Squeeze": _squeeze,
    "Unsqueeze": _unsqueeze,
    "Slice": _slice,
    "Transpose": _transpose,
    "Concat": _concat,
    "Softmax": _softmax,
    "QuantizeLinear": _quantize_linear,
    "DequantizeLinear": _dequantize_linear,
    "Identity": _identity,
    "Dropout": _dropout,
    "BatchNormalization": _batch_norm,
    "Pad": _pad,
    "ReduceMean": _reduce_mean,
    "Constant": _constant,
    "Shape": _shape,
    "Size": _size,
    **{op: _const_only for op in FOLD_ONLY},
    # Evaluated at import when their inputs are known then, else run-time IR.
    "Gather": _gather,
    "Cast": _cast,
    "Where": _where,
    "Expand": _expand,
    "Equal": _plain_binary("equal", False),
    "Less": _plain_binary("less", False),
    "Greater": _plain_binary("greater", False),
    "Div": _with_erf_gelu(_plain_binary("div", True)),
    "Not": _not,
    "Neg": _float_unary_op("neg"),
    "Abs": _float_unary_op("abs"),
    "Floor": _float_unary_op("floor"),
    "Ceil": _float_unary_op("ceil"),
    "Sqrt": _float_unary_op("sqrt"),
    "Exp": _float_unary_op("exp"),
    "Log": _float_unary_op("log"),
    "Erf": _float_unary_op("erf"),
    "ArgMax": _arg_extreme("arg_max"),
    "ArgMin": _arg_extreme("arg_min"),
    "Split": _split,
    "LayerNormalization": _layer_norm,
    "HardSigmoid": _hard_sigmoid,
    "Gelu": _gelu,
    "TopK": _topk,
    "LogSoftmax": _softmax,
}


#: The TFLite builtins whose kernels each ONNX operator reaches (docs/operators.md's
#: ONNX column; GELU is one of aot's extensions beyond TFLM).  Operators missing
#: here have no single counterpart: they are evaluated at import (Constant, Shape,
#: Size, the FOLD_ONLY ones), aliases (Identity, Dropout), chains of IR operators
#: (BatchNormalization, LayerNormalization, HardSigmoid), or ONNX_ONLY.
TFLITE_COUNTERPARTS: dict[str, tuple[str, ...]] = {
    "Conv": ("CONV_2D", "DEPTHWISE_CONV_2D"),
    "QLinearConv": ("CONV_2D", "DEPTHWISE_CONV_2D"),
    "Gemm": ("FULLY_CONNECTED", "BATCH_MATMUL"),
    "MatMul": ("FULLY_CONNECTED", "BATCH_MATMUL"),
    "QLinearMatMul": ("FULLY_CONNECTED", "BATCH_MATMUL"),
    "Add": ("ADD",), "Sub": ("SUB",), "Mul": ("MUL",), "Div": ("DIV",),
    "Max": ("MAXIMUM",), "Min": ("MINIMUM",),
    "Relu": ("RELU",), "Sigmoid": ("LOGISTIC",), "Tanh": ("TANH",),
    "LeakyRelu": ("LEAKY_RELU",), "HardSwish": ("HARD_SWISH",),
    "Clip": ("RELU", "RELU6", "MAXIMUM", "MINIMUM"),
    "MaxPool": ("MAX_POOL_2D",), "AveragePool": ("AVERAGE_POOL_2D",),
    "GlobalAveragePool": ("AVERAGE_POOL_2D",), "GlobalMaxPool": ("MAX_POOL_2D",),
    "Reshape": ("RESHAPE",), "Flatten": ("RESHAPE",), "Squeeze": ("SQUEEZE",),
    "Unsqueeze": ("EXPAND_DIMS",), "Transpose": ("TRANSPOSE",),
    "Slice": ("STRIDED_SLICE",), "Split": ("SPLIT", "SPLIT_V"),
    "Concat": ("CONCATENATION",), "Softmax": ("SOFTMAX",), "LogSoftmax": ("LOG_SOFTMAX",),
    "QuantizeLinear": ("QUANTIZE",), "DequantizeLinear": ("DEQUANTIZE",),
    "Pad": ("PAD", "PADV2", "GATHER"), "ReduceMean": ("MEAN",),
    "Gather": ("GATHER",), "Cast": ("CAST",), "Where": ("SELECT_V2",),
    "Expand": ("BROADCAST_TO",), "Equal": ("EQUAL",), "Less": ("LESS",),
    "Greater": ("GREATER",), "Not": ("LOGICAL_NOT",), "Neg": ("NEG",), "Abs": ("ABS",),
    "Floor": ("FLOOR",), "Ceil": ("CEIL",), "Sqrt": ("SQRT",), "Exp": ("EXP",),
    "Log": ("LOG",), "ArgMax": ("ARG_MAX",), "ArgMin": ("ARG_MIN",), "Gelu": ("GELU",),
}

#: ONNX operators onto IR operators that no TFLite builtin aot imports reaches
#: (docs/operators.md lists them with their kernels).
ONNX_ONLY: dict[str, tuple[str, ...]] = {"Erf": ("erf",), "TopK": ("topk",)}
