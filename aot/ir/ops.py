"""The operator registry: every operator the IR knows, declared once.

Each operator is registered by decorating its type-inference function with
:func:`register`, which records

* its input slots, in order (``"bias?"`` is optional and may be ``None``,
  ``"inputs*"`` takes one or more tensors);
* its attribute schema (:class:`Attr`: kind, default, allowed values);
* its pattern kind for fusion (one of :data:`PATTERNS`);
* its type inference: output shapes and dtypes from the input types and the
  attributes.  Output quantization is data from the model, not something to
  infer, so inference leaves it out (``quant=None``) and
  :func:`check_node` compares shapes and dtypes only.

Registering a name twice raises; :data:`REGISTRY` is the one place to look
an operator up.  Layouts are fixed: activations NHWC, conv weights OHWI,
depthwise weights 1HWC (C = input channels x depth multiplier), dense
weights [units, input depth].  Padding is explicit, ``(top, left, bottom,
right)``, so SAME/VALID (TFLite) and pads (ONNX) map onto the same thing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aot.errors import did_you_mean, one_of
from aot.ir.types import INTEGER_DTYPES, IRError, TensorType

#: Pattern kinds, from most to least fusable.
PATTERNS = (
    "elementwise",  # out[i] = f(in[i])
    "broadcast",  # elementwise after numpy broadcasting of the inputs
    "injective",  # each output element is one input element (reshape, pad, slice)
    "reduction",  # reduces axes (mean)
    "out_elemwise_fusable",  # heavy op whose output can absorb elementwise ops (conv, dense)
    "opaque",  # fuses with nothing (softmax, stateful ops)
)

#: Fused activations an operator can carry as an attribute.
ACTIVATIONS = ("none", "relu", "relu6", "relu_n1_to_1")

#: Input slots that hold state persisting across invocations (variable tensors).
STATE_SLOTS = frozenset({"state", "output_state", "cell_state"})

_REQUIRED = object()
_ATTR_KINDS = ("int", "float", "bool", "str", "ints", "pairs")


@dataclass(frozen=True)
class Attr:
    """One attribute: ``kind`` in int/float/bool/str/ints/pairs.

    ``ints`` is a tuple of ints (``length`` fixes its length), ``pairs`` a
    tuple of ``(int, int)``.  No default means the attribute is required.
    """

    kind: str
    default: Any = _REQUIRED
    choices: tuple | None = None
    length: int | None = None

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    def convert(self, value: Any, where: str) -> Any:
        """Return ``value`` in canonical form or raise :class:`IRError`."""
        try:
            if self.kind == "int":
                if isinstance(value, bool) or int(value) != value:
                    raise ValueError
                out = int(value)
            elif self.kind == "float":
                out = float(value)
            elif self.kind == "bool":
                if value not in (True, False, 0, 1):
                    raise ValueError
                out = bool(value)
            elif self.kind == "str":
                if not isinstance(value, str):
                    raise ValueError
                out = value
            elif self.kind == "ints":
                out = tuple(int(v) for v in value)
                if any(o != v for o, v in zip(out, value)):
                    raise ValueError
            else:  # pairs
                out = tuple((int(a), int(b)) for a, b in value)
        except (TypeError, ValueError):
            raise IRError(f"{where}: expected {self.kind}, got {value!r}") from None
        if self.length is not None and len(out) != self.length:
            raise IRError(f"{where}: expected {self.length} values, got {len(out)}")
        if self.choices is not None and out not in self.choices:
            raise IRError(f"{where}: {out!r} is not allowed, expected {one_of(self.choices)}")
        return out


InferFn = Callable[[list[TensorType | None], dict[str, Any], str], list[TensorType]]


@dataclass(frozen=True)
class OpDef:
    name: str
    pattern: str
    inputs: tuple[str, ...]
    attrs: dict[str, Attr] = field(default_factory=dict)
    infer: InferFn | None = None
    doc: str = ""

    def normalize_attrs(self, attrs: dict[str, Any], where: str) -> dict[str, Any]:
        """Check ``attrs`` against the schema; return them with defaults filled in."""
        unknown = set(attrs) - set(self.attrs)
        if unknown:
            name = sorted(unknown)[0]
            raise IRError(
                f"{where}: unknown attribute {name!r}{did_you_mean(name, self.attrs)}; "
                f"{self.name} takes {one_of(self.attrs) if self.attrs else 'no attributes'}"
            )
        out = {}
        for key, spec in self.attrs.items():
            if key in attrs:
                out[key] = spec.convert(attrs[key], f"{where}: attribute {key!r}")
            elif spec.required:
                raise IRError(f"{where}: attribute {key!r} is required")
            else:
                out[key] = spec.default
        return out

    def infer_types(
        self, in_types: list[TensorType | None], attrs: dict[str, Any], where: str
    ) -> list[TensorType]:
        self._check_arity(in_types, where)
        return self.infer(in_types, attrs, where)

    def _check_arity(self, in_types: list, where: str) -> None:
        slots = self.inputs
        if slots and slots[-1].endswith("*"):
            if len(in_types) < len(slots):
                raise IRError(f"{where}: needs at least {len(slots)} inputs")
            if any(t is None for t in in_types):
                raise IRError(f"{where}: every input is required")
            return
        if len(in_types) != len(slots):
            raise IRError(f"{where}: takes {len(slots)} inputs (None for an absent optional "
                          f"one), got {len(in_types)}")
        for i, slot in enumerate(slots):
            present = i < len(in_types) and in_types[i] is not None
            if not present and not slot.endswith("?"):
                raise IRError(f"{where}: input {i} ({slot}) is required")


REGISTRY: dict[str, OpDef] = {}


def register(
    name: str,
    pattern: str,
    inputs: tuple[str, ...],
    attrs: dict[str, Attr] | None = None,
) -> Callable[[InferFn], InferFn]:
    """Register the decorated type-inference function as operator ``name``."""
    if pattern not in PATTERNS:
        raise ValueError(f"operator {name}: unknown pattern {pattern!r}")

    def wrap(fn: InferFn) -> InferFn:
        if name in REGISTRY:
            raise ValueError(f"operator {name!r} is registered twice")
        REGISTRY[name] = OpDef(name, pattern, tuple(inputs), dict(attrs or {}), fn,
                               (fn.__doc__ or "").strip())
        return fn

    return wrap


def get_op(name: str) -> OpDef:
    try:
        return REGISTRY[name]
    except KeyError:
        raise IRError(
            f"unknown operator {name!r}{did_you_mean(name, REGISTRY)}; "
            f"known: {', '.join(sorted(REGISTRY))}"
        ) from None


def check_node(node) -> None:
    """Check a node's attributes and that its outputs agree with type inference."""
    opdef = get_op(node.op)
    where = node.label()
    attrs = opdef.normalize_attrs(node.attrs, where)
    if attrs != node.attrs:
        raise IRError(f"{where}: attributes are not normalized (missing defaults?)")
    inferred = opdef.infer_types([t.type if t is not None else None for t in node.inputs],
                                 attrs, where)
    for slot, t in zip(opdef.inputs, node.inputs):
        if slot in STATE_SLOTS and t.kind != "variable":
            raise IRError(f"{where}: input {slot} must be a variable tensor, got a {t.kind}")
    if len(inferred) != len(node.outputs):
        raise IRError(f"{where}: has {len(node.outputs)} outputs, expected {len(inferred)}")
    for i, (want, got) in enumerate(zip(inferred, node.outputs)):
        if want.shape != got.type.shape or want.dtype != got.type.dtype:
            raise IRError(
                f"{where}: output {i} is declared {got.type.dtype}{list(got.type.shape)} "
                f"but the inputs give {want.dtype}{list(want.shape)}"
            )


# --------------------------------------------------------------------------- helpers

def _need(cond: bool, where: str, message: str) -> None:
    if not cond:
        raise IRError(f"{where}: {message}")


def _rank(t: TensorType, rank: int, where: str, what: str) -> None:
    _need(t.rank == rank, where, f"{what} must have rank {rank}, got shape {list(t.shape)}")


def _same_dtype(types: list[TensorType], where: str) -> str:
    dtypes = sorted({t.dtype for t in types})
    _need(len(dtypes) == 1, where, f"inputs must share one dtype, got {', '.join(dtypes)}")
    return dtypes[0]


def _check_weights(data: TensorType, weight: TensorType, bias: TensorType | None,
                   where: str, channel_axis: int = 0) -> None:
    """Dtype rules of the heavy ops: float, int8 x int8, or int16 x int8 (16x8)."""
    if data.dtype == "float32":
        _need(weight.dtype == "float32", where,
              f"float32 data needs float32 weights, got {weight.dtype} (hybrid models, with "
              "float activations and integer weights, are not supported)")
        _need(bias is None or bias.dtype == "float32", where, "float32 data needs a float32 bias")
        return
    _need(data.dtype in ("int8", "int16"), where,
          f"data dtype {data.dtype} is not supported (float32, int8 or int16)")
    _need(weight.dtype == "int8", where, f"weights must be int8, got {weight.dtype}")
    bias_ok = ("int32",) if data.dtype == "int8" else ("int32", "int64")
    _need(bias is None or bias.dtype in bias_ok, where,
          f"a {data.dtype} layer needs a bias of {' or '.join(bias_ok)}, got "
          f"{bias.dtype if bias else None}")
    _need(data.quant is not None and weight.quant is not None, where,
          "integer data and weights must be quantized")
    if weight.quant.is_per_axis:
        _need(weight.quant.axis == channel_axis, where,
              f"weights must be quantized per output channel (axis {channel_axis}), "
              f"not along axis {weight.quant.axis}")


def _window_out(size: int, kernel: int, stride: int, dilation: int, pad_a: int, pad_b: int,
                where: str) -> int:
    _need(stride >= 1 and dilation >= 1, where, "strides and dilations must be at least 1")
    _need(pad_a >= 0 and pad_b >= 0, where, "padding must not be negative")
    effective = (kernel - 1) * dilation + 1
    span = size + pad_a + pad_b - effective
    _need(kernel >= 1 and span >= 0, where,
          f"window of {effective} does not fit input of {size} with padding {pad_a}+{pad_b}")
    return span // stride + 1


def _spatial(data: TensorType, kh: int, kw: int, attrs: dict, where: str,
             dilation=(1, 1)) -> tuple[int, int]:
    top, left, bottom, right = attrs["padding"]
    sh, sw = attrs["strides"]
    oh = _window_out(data.shape[1], kh, sh, dilation[0], top, bottom, where)
    ow = _window_out(data.shape[2], kw, sw, dilation[1], left, right, where)
    return oh, ow


def _broadcast_shape(shapes: list[tuple[int, ...]], where: str) -> tuple[int, ...]:
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0} - {1}
        _need(len(dims) <= 1, where,
              f"shapes {', '.join(str(list(s)) for s in shapes)} do not broadcast")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def _axis(axis: int, rank: int, where: str) -> int:
    _need(-rank <= axis < rank, where, f"axis {axis} is out of range for rank {rank}")
    return axis % rank


def _out(shape, dtype: str) -> list[TensorType]:
    return [TensorType(tuple(shape), dtype)]


_ACT = Attr("str", "none", ACTIVATIONS)
_WINDOW = {
    "strides": Attr("ints", (1, 1), length=2),
    "padding": Attr("ints", (0, 0, 0, 0), length=4),
}


# --------------------------------------------------------------------------- heavy ops

def _ohwi_weights(data, weight, bias, where) -> tuple[int, int, int, int]:
    """Check NHWC ``data`` against OHWI ``weight`` and a bias [O]; the weight's shape."""
    _rank(data, 4, where, "data")
    _rank(weight, 4, where, "weight")
    _check_weights(data, weight, bias, where)
    oc, kh, kw, ic = weight.shape
    _need(ic == data.shape[3], where,
          f"weight expects {ic} input channels, data has {data.shape[3]}")
    _need(bias is None or bias.shape == (oc,), where, f"bias must have shape [{oc}]")
    return oc, kh, kw, ic


@register("conv2d", "out_elemwise_fusable", ("data", "weight", "bias?"),
          {**_WINDOW, "dilation": Attr("ints", (1, 1), length=2), "activation": _ACT})
def _conv2d(ts, attrs, where):
    """2-D convolution, NHWC data, OHWI weights, optional bias [O]."""
    data, weight, bias = (ts + [None])[:3]
    oc, kh, kw, _ = _ohwi_weights(data, weight, bias, where)
    oh, ow = _spatial(data, kh, kw, attrs, where, attrs["dilation"])
    return _out((data.shape[0], oh, ow, oc), data.dtype)


@register("depthwise_conv2d", "out_elemwise_fusable", ("data", "weight", "bias?"),
          {**_WINDOW, "dilation": Attr("ints", (1, 1), length=2),
           "depth_multiplier": Attr("int", 1), "activation": _ACT})
def _depthwise_conv2d(ts, attrs, where):
    """Depthwise 2-D convolution, NHWC data, 1HWC weights (C = IC x multiplier)."""
    data, weight, bias = (ts + [None])[:3]
    _rank(data, 4, where, "data")
    _rank(weight, 4, where, "weight")
    _check_weights(data, weight, bias, where, channel_axis=3)
    one, kh, kw, oc = weight.shape
    mult = attrs["depth_multiplier"]
    _need(one == 1, where,
          f"depthwise weight must have shape [1,KH,KW,C], got {list(weight.shape)}")
    _need(mult >= 1 and oc == data.shape[3] * mult, where,
          f"weight has {oc} channels, expected {data.shape[3]} x depth multiplier {mult}")
    _need(bias is None or bias.shape == (oc,), where, f"bias must have shape [{oc}]")
    oh, ow = _spatial(data, kh, kw, attrs, where, attrs["dilation"])
    return _out((data.shape[0], oh, ow, oc), data.dtype)


@register("dense", "out_elemwise_fusable", ("data", "weight", "bias?"),
          {"activation": _ACT, "keep_num_dims": Attr("bool", False)})
def _dense(ts, attrs, where):
    """Fully connected: data [..., K] (flattened to rows of K), weight [units, K]."""
    data, weight, bias = (ts + [None])[:3]
    _rank(weight, 2, where, "weight")
    _check_weights(data, weight, bias, where)
    units, depth = weight.shape
    _need(depth > 0 and data.size % depth == 0, where,
          f"data of shape {list(data.shape)} does not split into rows of {depth}")
    _need(bias is None or bias.shape == (units,), where, f"bias must have shape [{units}]")
    if attrs["keep_num_dims"]:
        _need(data.shape[-1] == depth, where, "keep_num_dims needs data's last axis = depth")
        return _out(data.shape[:-1] + (units,), data.dtype)
    return _out((data.size // depth, units), data.dtype)


@register("transpose_conv2d", "out_elemwise_fusable", ("data", "weight", "bias?"),
          {"strides": Attr("ints", (1, 1), length=2), "padding": Attr("ints", (0, 0), length=2),
           "output_size": Attr("ints", length=2)})
def _transpose_conv2d(ts, attrs, where):
    """Transposed 2-D convolution, NHWC data, OHWI weights: input pixel
    ``(y, x)`` adds its products to output pixels ``(y s_h - pad_top + ky,
    x s_w - pad_left + kx)``; ``output_size`` (H, W) is the output's, as the
    model states it (the inverse of a strided convolution is ambiguous)."""
    data, weight, bias = (ts + [None])[:3]
    oc = _ohwi_weights(data, weight, bias, where)[0]
    _need(min(attrs["strides"]) >= 1, where, "strides must be at least 1")
    _need(min(attrs["padding"]) >= 0, where, "padding must not be negative")
    oh, ow = attrs["output_size"]
    _need(oh >= 1 and ow >= 1, where, f"output size {[oh, ow]} must be positive")
    return _out((data.shape[0], oh, ow, oc), data.dtype)


@register("batch_matmul", "out_elemwise_fusable", ("lhs", "rhs"),
          {"adj_x": Attr("bool", False), "adj_y": Attr("bool", False)})
def _batch_matmul(ts, attrs, where):
    """``lhs @ rhs`` over the last two axes (each transposed first when
    ``adj_x`` / ``adj_y``), the leading axes broadcast; rank 2 to 5, float32,
    int8 or int16 operands of one type (per-tensor quantization)."""
    lhs, rhs = ts
    dtype = _same_dtype(ts, where)
    _need(dtype in ("float32", "int8", "int16"), where,
          f"{dtype} operands are not supported (float32, int8 or int16)")
    for name, t in (("lhs", lhs), ("rhs", rhs)):
        _need(2 <= t.rank <= 5, where, f"{name} must have rank 2 to 5, got {list(t.shape)}")
        _need(t.quant is None or not t.quant.is_per_axis, where,
              f"{name} must be quantized per tensor")
    rows, depth = lhs.shape[-2:][::-1] if attrs["adj_x"] else lhs.shape[-2:]
    depth_r, cols = rhs.shape[-2:][::-1] if attrs["adj_y"] else rhs.shape[-2:]
    _need(depth == depth_r, where,
          f"lhs {list(lhs.shape)} and rhs {list(rhs.shape)} do not multiply (inner sizes "
          f"{depth} and {depth_r})")
    batch = _broadcast_shape([lhs.shape[:-2], rhs.shape[:-2]], where)
    return _out(tuple(batch) + (rows, cols), dtype)


def _pool(ts, attrs, where):
    (data,) = ts
    _rank(data, 4, where, "data")
    kh, kw = attrs["pool_size"]
    oh, ow = _spatial(data, kh, kw, attrs, where)
    return [TensorType((data.shape[0], oh, ow, data.shape[3]), data.dtype, data.quant)]


_POOL_ATTRS = {**_WINDOW, "pool_size": Attr("ints", length=2), "activation": _ACT}
register("avg_pool2d", "out_elemwise_fusable", ("data",), _POOL_ATTRS)(_pool)
register("max_pool2d", "out_elemwise_fusable", ("data",), _POOL_ATTRS)(_pool)


@register("l2_pool2d", "out_elemwise_fusable", ("data",), _POOL_ATTRS)
def _l2_pool(ts, attrs, where):
    """``sqrt(mean of x^2)`` over each window's covered pixels (float32 only, as TFLM)."""
    _need(ts[0].dtype == "float32", where, f"float32 only, got {ts[0].dtype}")
    return _pool(ts, attrs, where)


# --------------------------------------------------------------------------- elementwise

def _binary(ts, attrs, where):
    dtype = _same_dtype(ts, where)
    return _out(_broadcast_shape([t.shape for t in ts], where), dtype)


for _name in ("add", "sub", "mul"):
    register(_name, "broadcast", ("lhs", "rhs"), {"activation": _ACT})(_binary)
for _name in ("maximum", "minimum"):
    register(_name, "broadcast", ("lhs", "rhs"))(_binary)

#: Binary arithmetic computed in float32 only (TFLM's quantized DIV is
#: refused at import; its FLOOR_DIV and FLOOR_MOD are float32 only).
FLOAT_BINARY = ("div", "floor_div", "floor_mod")


def _plain_binary(ts, attrs, where):
    dtype = _same_dtype(ts, where)
    _need(dtype == "float32", where, f"float32 only, got {dtype}")
    return _out(_broadcast_shape([t.shape for t in ts], where), dtype)


for _name in FLOAT_BINARY:
    register(_name, "broadcast", ("lhs", "rhs"), {"activation": _ACT})(_plain_binary)


@register("squared_difference", "broadcast", ("lhs", "rhs"))
def _squared_difference(ts, attrs, where):
    """``(lhs - rhs)**2`` with broadcasting: float32, int32 (wrapping), or int8
    and int16 operands quantized per tensor (int16: zero points 0) with the
    result requantized to the output as TFLM does
    (:func:`aot.reference.ops.elementwise.squared_difference`)."""
    dtype = _same_dtype(ts, where)
    _need(dtype in ("float32", "int32", "int8", "int16"), where,
          f"{dtype} operands are not supported (float32, int32, int8 or int16)")
    if dtype in ("int8", "int16"):
        for name, t in zip(("lhs", "rhs"), ts):
            _need(t.quant is not None and not t.quant.is_per_axis, where,
                  f"{name} must be quantized per tensor")
    return _out(_broadcast_shape([t.shape for t in ts], where), dtype)


@register("add_n", "broadcast", ("inputs*",))
def _add_n(ts, attrs, where):
    """The sum of all inputs, left to right (one shape): float32, or int8 with
    one per-tensor quantization for all inputs (TFLM's arithmetic,
    :func:`aot.reference.ops.elementwise.add_n_int8`)."""
    dtype = _same_dtype(ts, where)
    _need(dtype in ("float32", "int8"), where, f"float32 or int8 only, got {dtype}")
    _need(len({t.shape for t in ts}) == 1, where, "all inputs must have one shape")
    if dtype == "int8":
        _need(all(t.quant is not None and not t.quant.is_per_axis for t in ts)
              and len({t.quant for t in ts}) == 1, where,
              "int8 inputs must share one per-tensor quantization (as TFLM requires)")
    return _out(ts[0].shape, dtype)


#: Comparisons: two operands of one element type (quantized ones compared on
#: a common scale, :func:`aot.reference.ops.compare.compare`), a bool result.
COMPARISONS = ("equal", "not_equal", "greater", "greater_equal", "less", "less_equal")


def _compare(ts, attrs, where):
    _same_dtype(ts, where)
    return _out(_broadcast_shape([t.shape for t in ts], where), "bool")


for _name in COMPARISONS:
    register(_name, "broadcast", ("lhs", "rhs"))(_compare)


def _logical(ts, attrs, where):
    for t in ts:
        _need(t.dtype == "bool", where, f"operands must be bool, got {t.dtype}")
    return _out(_broadcast_shape([t.shape for t in ts], where), "bool")


for _name in ("logical_and", "logical_or"):
    register(_name, "broadcast", ("lhs", "rhs"))(_logical)
register("logical_not", "elementwise", ("data",))(_logical)


@register("select", "broadcast", ("condition", "lhs", "rhs"))
def _select(ts, attrs, where):
    """``condition ? lhs : rhs`` with broadcasting on the raw values, as TFLM's
    SELECT_V2: differently quantized values are not requantized, and the output
    reads the picked integers with its own quantization (inferred as lhs's)."""
    cond, a, b = ts
    _need(cond.dtype == "bool", where, f"the condition must be bool, got {cond.dtype}")
    dtype = _same_dtype([a, b], where)
    return [TensorType(_broadcast_shape([t.shape for t in ts], where), dtype, a.quant)]


def _unary(ts, attrs, where):
    (data,) = ts
    return _out(data.shape, data.dtype)


for _name in ("logistic", "tanh", "relu", "relu6", "hard_swish"):
    register(_name, "elementwise", ("data",))(_unary)
register("leaky_relu", "elementwise", ("data",), {"alpha": Attr("float")})(_unary)
register("elu", "elementwise", ("data",))(_unary)


@register("gelu", "elementwise", ("data",), {"approximate": Attr("bool", False)})
def _gelu(ts, attrs, where):
    """``x * Phi(x)``, Phi the standard normal CDF: ``0.5 x (1 + erf(x / sqrt 2))``,
    or with ``approximate`` the tanh form ``0.5 x (1 + tanh(sqrt(2/pi) (x +
    0.044715 x^3)))``.  float32, or int8 quantized per tensor (a table of the
    exact function of each dequantized input, rounded to the output,
    :func:`aot.reference.ops.activations.gelu_int8`).  TFLM has no GELU: this
    is aot's extension (docs/models.md gives its accuracy)."""
    (data,) = ts
    _need(data.dtype in ("float32", "int8"), where, f"float32 or int8 only, got {data.dtype}")
    _need(data.dtype == "float32" or (data.quant is not None and not data.quant.is_per_axis),
          where, "an int8 input must be quantized per tensor")
    return _out(data.shape, data.dtype)


@register("prelu", "broadcast", ("data", "alpha"))
def _prelu(ts, attrs, where):
    """``x >= 0 ? x : alpha * x`` with ``alpha`` broadcast to ``x`` (usually per channel)."""
    data, alpha = ts
    _need(alpha.dtype == data.dtype, where,
          f"alpha must be {data.dtype} like the data, got {alpha.dtype}")
    shape = _broadcast_shape([data.shape, alpha.shape], where)
    _need(tuple(shape) == tuple(data.shape), where,
          f"alpha {list(alpha.shape)} must broadcast to the data {list(data.shape)}")
    return _out(data.shape, data.dtype)


@register("cast", "elementwise", ("data",),
          {"dtype": Attr("str", choices=("float32", "int8", "uint8", "int16", "int32", "int64",
                                         "bool"))})
def _cast(ts, attrs, where):
    """C's conversion of each value to ``dtype`` (quantization is ignored, as TFLM does)."""
    (data,) = ts
    return _out(data.shape, attrs["dtype"])


@register("zeros_like", "elementwise", ("data",))
def _zeros_like(ts, attrs, where):
    """Zeros of the input's shape and type."""
    (data,) = ts
    return [TensorType(data.shape, data.dtype, data.quant)]


@register("softmax", "opaque", ("data",),
          {"beta": Attr("float", 1.0),
           "out_dtype": Attr("str", "same", ("same", "int8", "int16", "float32"))})
def _softmax(ts, attrs, where):
    """Softmax over the last axis; int8 data may give int16 probabilities (TFLM allows it)."""
    (data,) = ts
    out = data.dtype if attrs["out_dtype"] == "same" else attrs["out_dtype"]
    _need(out == data.dtype or (data.dtype, out) == ("int8", "int16"), where,
          f"softmax from {data.dtype} to {out} is not supported")
    return _out(data.shape, out)


@register("log_softmax", "opaque", ("data",))
def _log_softmax(ts, attrs, where):
    """``x - max - log(sum(exp(x - max)))`` over the last axis: float32, or
    int8 with TFLM's fixed-point exp and log (output scale 16/256, zero point 127)."""
    (data,) = ts
    _need(data.dtype in ("float32", "int8"), where, f"float32 or int8 only, got {data.dtype}")
    return _out(data.shape, data.dtype)


@register("l2_normalization", "opaque", ("data",))
def _l2_normalization(ts, attrs, where):
    """``x / max(sqrt(sum(x^2)), 1e-6)`` over the last axis: float32, or int8
    with TFLM's fixed-point inverse square root (output scale 1/128)."""
    (data,) = ts
    _need(data.dtype in ("float32", "int8"), where, f"float32 or int8 only, got {data.dtype}")
    return _out(data.shape, data.dtype)


@register("quantize", "elementwise", ("data",),
          {"out_dtype": Attr("str", choices=("int8", "uint8", "int16", "int32"))})
def _quantize(ts, attrs, where):
    """Float to integer, or integer to integer with a new scale (requantize)."""
    (data,) = ts
    _need(data.dtype == "float32" or data.dtype in INTEGER_DTYPES, where,
          f"cannot quantize {data.dtype}")
    return _out(data.shape, attrs["out_dtype"])


@register("dequantize", "elementwise", ("data",))
def _dequantize(ts, attrs, where):
    (data,) = ts
    _need(data.dtype in INTEGER_DTYPES, where, f"cannot dequantize {data.dtype}")
    return _out(data.shape, "float32")


# --------------------------------------------------------------------------- injective

@register("reshape", "injective", ("data",), {"newshape": Attr("ints")})
def _reshape(ts, attrs, where):
    """Reshape to ``newshape`` (fully resolved: no -1)."""
    (data,) = ts
    shape = attrs["newshape"]
    size = 1
    for d in shape:
        _need(d >= 0, where, f"newshape {list(shape)} has a negative dimension")
        size *= d
    _need(size == data.size, where,
          f"cannot reshape {list(data.shape)} ({data.size} elements) to {list(shape)}")
    return [TensorType(shape, data.dtype, data.quant)]


@register("squeeze", "injective", ("data",), {"axes": Attr("ints")})
def _squeeze(ts, attrs, where):
    (data,) = ts
    axes = {_axis(a, data.rank, where) for a in attrs["axes"]}
    for a in axes:
        _need(data.shape[a] == 1, where, f"cannot squeeze axis {a} of size {data.shape[a]}")
    shape = [d for i, d in enumerate(data.shape) if i not in axes]
    return [TensorType(shape, data.dtype, data.quant)]


@register("expand_dims", "injective", ("data",), {"axis": Attr("int")})
def _expand_dims(ts, attrs, where):
    (data,) = ts
    axis = _axis(attrs["axis"], data.rank + 1, where)
    shape = list(data.shape)
    shape.insert(axis, 1)
    return [TensorType(shape, data.dtype, data.quant)]


@register("concatenate", "injective", ("inputs*",), {"axis": Attr("int"), "activation": _ACT})
def _concatenate(ts, attrs, where):
    dtype = _same_dtype(ts, where)
    first = ts[0]
    axis = _axis(attrs["axis"], first.rank, where)
    for t in ts[1:]:
        _need(t.rank == first.rank and all(
            a == b for i, (a, b) in enumerate(zip(t.shape, first.shape)) if i != axis),
            where, f"shapes {list(first.shape)} and {list(t.shape)} differ off axis {axis}")
    shape = list(first.shape)
    shape[axis] = sum(t.shape[axis] for t in ts)
    quants = {t.quant for t in ts}
    return [TensorType(shape, dtype, quants.pop() if len(quants) == 1 else None)]


@register("pad", "injective", ("data",),
          {"pad_width": Attr("pairs"), "value": Attr("float", 0.0)})
def _pad(ts, attrs, where):
    """Pad with the real ``value`` (the zero point when quantized and value is 0)."""
    (data,) = ts
    pads = attrs["pad_width"]
    _need(len(pads) == data.rank, where, f"pad_width needs {data.rank} (before, after) pairs")
    _need(all(a >= 0 and b >= 0 for a, b in pads), where, "padding must not be negative")
    return [TensorType([d + a + b for d, (a, b) in zip(data.shape, pads)], data.dtype,
                       data.quant)]


@register("strided_slice", "injective", ("data",),
          {"begin": Attr("ints"), "end": Attr("ints"), "strides": Attr("ints"),
           "squeeze_axes": Attr("ints", ())})
def _strided_slice(ts, attrs, where):
    """Python slicing ``data[b0:e0:s0, ...]`` per axis (resolved, in range), then squeeze."""
    (data,) = ts
    begin, end, strides = attrs["begin"], attrs["end"], attrs["strides"]
    _need(len(begin) == len(end) == len(strides) == data.rank, where,
          f"begin, end and strides need {data.rank} entries each")
    shape = []
    for b, e, s, d in zip(begin, end, strides, data.shape):
        _need(s != 0, where, "stride 0")
        shape.append(len(range(d)[b:e:s]))
    squeeze = {_axis(a, data.rank, where) for a in attrs["squeeze_axes"]}
    for a in squeeze:
        _need(shape[a] == 1, where, f"cannot shrink axis {a} of size {shape[a]}")
    return [TensorType([d for i, d in enumerate(shape) if i not in squeeze], data.dtype,
                       data.quant)]


@register("transpose", "injective", ("data",), {"perm": Attr("ints")})
def _transpose(ts, attrs, where):
    (data,) = ts
    perm = attrs["perm"]
    _need(sorted(perm) == list(range(data.rank)), where,
          f"perm {list(perm)} is not a permutation of {data.rank} axes")
    return [TensorType([data.shape[p] for p in perm], data.dtype, data.quant)]


@register("mirror_pad", "injective", ("data",),
          {"pad_width": Attr("pairs"), "mode": Attr("str", "reflect", ("reflect", "symmetric"))})
def _mirror_pad(ts, attrs, where):
    """Pad with the data mirrored at each border: ``reflect`` leaves the edge
    element out of the mirror image (pads <= size - 1), ``symmetric`` repeats
    it (pads <= size)."""
    (data,) = ts
    pads = attrs["pad_width"]
    _need(len(pads) == data.rank, where, f"pad_width needs {data.rank} (before, after) pairs")
    limit = 1 if attrs["mode"] == "reflect" else 0
    for axis, ((a, b), d) in enumerate(zip(pads, data.shape)):
        _need(0 <= a <= d - limit and 0 <= b <= d - limit, where,
              f"{attrs['mode']} padding ({a}, {b}) does not fit axis {axis} of size {d} "
              f"(at most {d - limit} on each side)")
    return [TensorType([d + a + b for d, (a, b) in zip(data.shape, pads)], data.dtype,
                       data.quant)]


@register("broadcast_to", "injective", ("data",), {"shape": Attr("ints")})
def _broadcast_to(ts, attrs, where):
    """numpy's broadcast_to: leading axes added, axes of size 1 repeated."""
    (data,) = ts
    shape = tuple(attrs["shape"])
    _need(len(shape) >= data.rank and all(
        d in (1, s) for d, s in zip(data.shape, shape[len(shape) - data.rank:])), where,
        f"cannot broadcast {list(data.shape)} to {list(shape)}")
    return [TensorType(shape, data.dtype, data.quant)]


@register("resize_nearest", "injective", ("data",),
          {"size": Attr("ints", length=2), "align_corners": Attr("bool", False),
           "half_pixel_centers": Attr("bool", False)})
def _resize_nearest(ts, attrs, where):
    """NHWC nearest-neighbour resize of H and W to ``size`` (TFLite's rounding,
    :func:`aot.reference.ops.shape.nearest_indices`)."""
    (data,) = ts
    _rank(data, 4, where, "data")
    h, w = attrs["size"]
    _need(h >= 1 and w >= 1, where, f"size {[h, w]} must be positive")
    return [TensorType((data.shape[0], h, w, data.shape[3]), data.dtype, data.quant)]


@register("gather", "injective", ("data", "indices"),
          {"axis": Attr("int", 0), "batch_dims": Attr("int", 0)})
def _gather(ts, attrs, where):
    """``data`` indexed along ``axis`` by the int32 ``indices``, whose first
    ``batch_dims`` axes match data's: the output is ``data.shape[:axis] +
    indices.shape[batch_dims:] + data.shape[axis + 1:]``, values copied raw."""
    data, indices = ts
    _need(indices.dtype == "int32", where, f"indices must be int32, got {indices.dtype}")
    axis = _axis(attrs["axis"], data.rank, where)
    bd = attrs["batch_dims"]
    bd = bd + indices.rank if bd < 0 else bd
    _need(0 <= bd <= min(axis, indices.rank), where,
          f"batch_dims {attrs['batch_dims']} must lie in [0, {min(axis, indices.rank)}] "
          f"(at most the axis {axis} and the indices' rank {indices.rank})")
    _need(data.shape[:bd] == indices.shape[:bd], where,
          f"the first {bd} axes of data {list(data.shape)} and indices "
          f"{list(indices.shape)} must match")
    shape = data.shape[:axis] + indices.shape[bd:] + data.shape[axis + 1:]
    return [TensorType(shape, data.dtype, data.quant)]


@register("gather_nd", "injective", ("data", "indices"))
def _gather_nd(ts, attrs, where):
    """Slices of ``data`` picked by the rows of the int32 ``indices`` (its
    last axis, ``nd`` long, indexes data's first ``nd`` axes): the output is
    ``indices.shape[:-1] + data.shape[nd:]``, values copied raw."""
    data, indices = ts
    _need(indices.dtype == "int32", where, f"indices must be int32, got {indices.dtype}")
    _need(data.rank >= 1 and indices.rank >= 1, where,
          "data and indices must have at least one axis each")
    nd = indices.shape[-1]
    _need(1 <= nd <= min(data.rank, 5), where,
          f"the indices' last axis ({nd}) must lie in [1, {min(data.rank, 5)}] (data rank "
          f"{data.rank}, at most 5 as TFLM)")
    return [TensorType(indices.shape[:-1] + data.shape[nd:], data.dtype, data.quant)]


@register("resize_bilinear", "injective", ("data",),
          {"size": Attr("ints", length=2), "align_corners": Attr("bool", False),
           "half_pixel_centers": Attr("bool", False)})
def _resize_bilinear(ts, attrs, where):
    """NHWC bilinear resize of H and W to ``size`` (TFLite's arithmetic,
    :func:`aot.reference.ops.shape.bilinear_taps`); float32 or int8, the
    output quantized as the input."""
    (data,) = ts
    _rank(data, 4, where, "data")
    _need(data.dtype in ("float32", "int8"), where,
          f"{data.dtype} data is not supported (float32 or int8, as TFLM)")
    h, w = attrs["size"]
    _need(h >= 1 and w >= 1, where, f"size {[h, w]} must be positive")
    _need(not (attrs["align_corners"] and attrs["half_pixel_centers"]), where,
          "align_corners and half_pixel_centers exclude each other")
    return [TensorType((data.shape[0], h, w, data.shape[3]), data.dtype, data.quant)]


@register("dynamic_update_slice", "injective", ("data", "update", "start"))
def _dynamic_update_slice(ts, attrs, where):
    """``data`` with ``update`` written at ``start`` (int32 or int64, one
    index per axis, given at run time), each start clamped to ``[0, size -
    update size]`` as TFLM clamps it; values copied raw."""
    data, update, start = ts
    _need(update.dtype == data.dtype, where,
          f"update must be {data.dtype} like the data, got {update.dtype}")
    _need(update.rank == data.rank and all(u <= d for u, d in zip(update.shape, data.shape)),
          where, f"update {list(update.shape)} does not fit data {list(data.shape)}")
    _need(start.dtype in ("int32", "int64") and start.shape == (data.rank,), where,
          f"start must be an int32 or int64 vector of {data.rank}, got {start}")
    return [TensorType(data.shape, data.dtype, data.quant)]


#: Elementwise float32 functions (TFLM's float kernels; quantized variants are
#: refused at import): y = f(x).
FLOAT_UNARY = ("neg", "floor", "ceil", "round", "sqrt", "exp", "log", "sin", "cos",
               "square", "erf")


@register("abs", "elementwise", ("data",))
def _abs(ts, attrs, where):
    """``|x|``: float32, int8 or int16 (quantized per tensor: ``|x - zp|``
    requantized to the output, :func:`aot.reference.ops.elementwise.abs_quantized`;
    an unquantized int16 is the plain absolute value)."""
    (data,) = ts
    _need(data.dtype in ("float32", "int8", "int16"), where,
          f"float32, int8 or int16 only, got {data.dtype}")
    _need(data.dtype != "int8" or (data.quant is not None and not data.quant.is_per_axis),
          where, "an int8 input must be quantized per tensor")
    return _out(data.shape, data.dtype)


@register("rsqrt", "elementwise", ("data",))
def _rsqrt(ts, attrs, where):
    """``1 / sqrt(x)``: float32, or int8 or int16 quantized per tensor (TFLM's
    integer inverse square root,
    :func:`aot.reference.ops.elementwise.rsqrt_quantized`)."""
    (data,) = ts
    _need(data.dtype in ("float32", "int8", "int16"), where,
          f"float32, int8 or int16 only, got {data.dtype}")
    _need(data.dtype == "float32" or (data.quant is not None and not data.quant.is_per_axis),
          where, f"an {data.dtype} input must be quantized per tensor")
    return _out(data.shape, data.dtype)


def _float_unary(ts, attrs, where):
    (data,) = ts
    _need(data.dtype == "float32", where, f"float32 only, got {data.dtype}")
    return _out(data.shape, data.dtype)


for _name in FLOAT_UNARY:
    register(_name, "elementwise", ("data",))(_float_unary)


# --------------------------------------------------------------------------- reductions

_REDUCE = {"axes": Attr("ints"), "keepdims": Attr("bool", False)}


def _reduced_shape(data: TensorType, attrs, where) -> list[int]:
    axes = {_axis(a, data.rank, where) for a in attrs["axes"]}
    if attrs["keepdims"]:
        return [1 if i in axes else d for i, d in enumerate(data.shape)]
    return [d for i, d in enumerate(data.shape) if i not in axes]


@register("mean", "reduction", ("data",), _REDUCE)
def _mean(ts, attrs, where):
    (data,) = ts
    return _out(_reduced_shape(data, attrs, where), data.dtype)


@register("sum", "reduction", ("data",), _REDUCE)
def _sum(ts, attrs, where):
    """The sum over ``axes``, requantized from the input's scale to the output's."""
    (data,) = ts
    _need(data.dtype in ("float32", "int8", "int16"), where,
          f"{data.dtype} data is not supported (float32, int8 or int16, as TFLM)")
    return _out(_reduced_shape(data, attrs, where), data.dtype)


@register("arg_max", "reduction", ("data",),
          {"axis": Attr("int"), "dtype": Attr("str", "int32", ("int32",))})
@register("arg_min", "reduction", ("data",),
          {"axis": Attr("int"), "dtype": Attr("str", "int32", ("int32",))})
def _arg_extreme(ts, attrs, where):
    """The index of the first largest (smallest) element along ``axis``, which is removed."""
    (data,) = ts
    axis = _axis(attrs["axis"], data.rank, where)
    return _out([d for i, d in enumerate(data.shape) if i != axis], attrs["dtype"])


@register("cumsum", "reduction", ("data",),
          {"axis": Attr("int"), "exclusive": Attr("bool", False), "reverse": Attr("bool", False)})
def _cumsum(ts, attrs, where):
    """Running sums along ``axis`` (from its end when ``reverse``; each
    excluding its own element when ``exclusive``), requantized when quantized."""
    (data,) = ts
    _need(data.dtype in ("float32", "int8"), where,
          f"{data.dtype} data is not supported (float32 or int8, as TFLM)")
    _axis(attrs["axis"], data.rank, where)
    return _out(data.shape, data.dtype)


@register("reduce_all", "reduction", ("data",), _REDUCE)
def _reduce_all(ts, attrs, where):
    """Whether every bool element over ``axes`` is true (true over no elements)."""
    (data,) = ts
    _need(data.dtype == "bool", where, f"bool data only, got {data.dtype}")
    return _out(_reduced_shape(data, attrs, where), "bool")


@register("reduce_max", "reduction", ("data",), _REDUCE)
@register("reduce_min", "reduction", ("data",), _REDUCE)
def _reduce_extreme(ts, attrs, where):
    """The largest (smallest) element over ``axes``: a value of the input, so
    the output keeps its quantization."""
    (data,) = ts
    return [TensorType(_reduced_shape(data, attrs, where), data.dtype, data.quant)]


#: Element types :func:`_topk` orders (quantized ones by their raw values, one scale).
TOPK_DTYPES = ("float32", "int8", "int16", "int32", "int64")


@register("topk", "opaque", ("data",),
          {"k": Attr("int"), "axis": Attr("int"), "largest": Attr("bool", True),
           "output": Attr("str", "values", ("values", "indices"))})
def _topk(ts, attrs, where):
    """The ``k`` largest (``largest`` false: smallest) elements along ``axis``,
    in that order, of equal ones the lower index first (ONNX's TopK); the axis
    becomes ``k`` long.  ``output`` picks what the node writes: the values (the
    input's type and quantization) or their int64 positions along the axis (a
    kernel writes one tensor: ONNX's two outputs are two nodes).  NaN is not
    ordered: a row holding one gives unspecified results."""
    (data,) = ts
    _need(data.dtype in TOPK_DTYPES, where,
          f"{data.dtype} data is not supported ({', '.join(TOPK_DTYPES)})")
    _need(data.quant is None or not data.quant.is_per_axis, where,
          "the data must be quantized per tensor")
    axis = _axis(attrs["axis"], data.rank, where)
    k = attrs["k"]
    _need(1 <= k <= data.shape[axis], where,
          f"k={k} must be 1 to the axis size {data.shape[axis]}")
    shape = tuple(k if i == axis else d for i, d in enumerate(data.shape))
    if attrs["output"] == "indices":
        return _out(shape, "int64")
    return [TensorType(shape, data.dtype, data.quant)]


# --------------------------------------------------------------------------- stateful

@register("svdf", "opaque", ("data", "weights_feature", "weights_time", "bias?", "state"),
          {"rank": Attr("int"), "activation": _ACT})
def _svdf(ts, attrs, where):
    """SVDF layer; ``state`` is a variable [batch, memory x filters] updated each call."""
    data, wf, wt, bias, state = ts
    _rank(data, 2, where, "data")
    _rank(wf, 2, where, "weights_feature")
    _rank(wt, 2, where, "weights_time")
    rank = attrs["rank"]
    filters, depth = wf.shape
    _need(rank >= 1 and filters % rank == 0, where,
          f"{filters} filters do not split into rank {rank}")
    _need(depth == data.shape[1], where, f"weights_feature expects depth {depth}")
    _need(wt.shape[0] == filters, where, "weights_time must have one row per filter")
    batch, units = data.shape[0], filters // rank
    _need(state.shape == (batch, wt.shape[1] * filters), where,
          f"state must have shape [{batch}, {wt.shape[1] * filters}]")
    _need(bias is None or bias.shape == (units,), where, f"bias must have shape [{units}]")
    return _out((batch, units), data.dtype)


@register("read_variable", "opaque", ("state",))
def _read_variable(ts, attrs, where):
    """A copy of the variable's value as it is at this point of the run."""
    (state,) = ts
    return [TensorType(state.shape, state.dtype, state.quant)]


@register("assign_variable", "opaque", ("state", "value"))
def _assign_variable(ts, attrs, where):
    """Write ``value`` into the variable (the next reads, in this run and the
    following ones, see it); the output is a copy of ``value``."""
    state, value = ts
    _need(value.shape == state.shape and value.dtype == state.dtype, where,
          f"value {value} does not match the variable {state}")
    _need(value.quant == state.quant, where,
          "value and variable quantized differently: not supported (raw values are stored)")
    return [TensorType(value.shape, value.dtype, value.quant)]


LSTM_INPUTS = (
    "data",
    "input_to_input_weights?", "input_to_forget_weights", "input_to_cell_weights",
    "input_to_output_weights",
    "recurrent_to_input_weights?", "recurrent_to_forget_weights", "recurrent_to_cell_weights",
    "recurrent_to_output_weights",
    "cell_to_input_weights?", "cell_to_forget_weights?", "cell_to_output_weights?",
    "input_gate_bias?", "forget_gate_bias", "cell_gate_bias", "output_gate_bias",
    "projection_weights?", "projection_bias?",
    "output_state", "cell_state",
    "input_layer_norm_coefficients?", "forget_layer_norm_coefficients?",
    "cell_layer_norm_coefficients?", "output_layer_norm_coefficients?",
)


@register("lstm", "opaque", LSTM_INPUTS,
          {"activation": Attr("str", "tanh", ACTIVATIONS + ("tanh", "sigmoid")),
           "cell_clip": Attr("float", 0.0), "proj_clip": Attr("float", 0.0),
           "time_major": Attr("bool", False)})
def _lstm(ts, attrs, where):
    """Unidirectional sequence LSTM; ``output_state`` and ``cell_state`` are variables."""
    data = ts[0]
    _rank(data, 3, where, "data")
    for i in (2, 3, 4, 6, 7, 8):
        _rank(ts[i], 2, where, LSTM_INPUTS[i])
    n_cell, depth = ts[2].shape
    _need(depth == data.shape[2], where, f"input weights expect depth {depth}")
    n_output = ts[6].shape[1]
    expected = {1: (n_cell, depth), 2: (n_cell, depth), 3: (n_cell, depth), 4: (n_cell, depth),
                5: (n_cell, n_output), 6: (n_cell, n_output), 7: (n_cell, n_output),
                8: (n_cell, n_output), 12: (n_cell,), 13: (n_cell,), 14: (n_cell,),
                15: (n_cell,)}
    for i, shape in expected.items():
        _need(ts[i] is None or ts[i].shape == shape, where,
              f"{LSTM_INPUTS[i].rstrip('?')} must have shape {list(shape)}, "
              f"got {list(ts[i].shape) if ts[i] else None}")
    _need(ts[16] is not None or n_output == n_cell, where,
          "without projection weights the output size must equal the cell count")
    batch = data.shape[1] if attrs["time_major"] else data.shape[0]
    _need(ts[18].shape == (batch, n_output), where,
          f"output_state must have shape [{batch}, {n_output}]")
    _need(ts[19].shape == (batch, n_cell), where, f"cell_state must have shape [{batch}, {n_cell}]")
    return _out(data.shape[:2] + (n_output,), data.dtype)
