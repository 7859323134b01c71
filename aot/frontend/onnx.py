"""ONNX ``ModelProto`` -> :class:`aot.ir.Graph`.

The ``onnx`` package parses the protobuf; it is imported only when a model
is read, so ``import aot`` stays cheap.  The importer walks the graph's
nodes in their (topological) order and converts each one with a converter
from :mod:`aot.frontend.onnx_ops`, which lists the operators and how they
map onto the IR.  The graph inputs' open sizes are fixed first
(:mod:`aot.frontend.shapes`: the user's ``input_shapes``, else batch 1), so
every value's shape is known at import.  Three things happen on the way:

* **Layout.**  ONNX convolution models are NCHW; the IR wants NHWC.  Every
  ONNX value remembers how the IR tensor holding it is laid out (a
  permutation of its ONNX axes, see :class:`~aot.frontend.onnx_ops.Value`).
  Conv and pooling produce NHWC tensors; elementwise operators follow their
  inputs' layout (their constants are transposed at import); axis
  attributes (Softmax, Concat) are permuted; operators that depend on the
  element order (Reshape, Flatten, MatMul on 4-D data, graph outputs) get
  their input back in ONNX order through a transpose.  Flattening an NHWC
  feature map is deferred: a following MatMul/Gemm with constant weights
  permutes its weight rows instead, so no transpose is emitted.
* **Constants.**  Initializers (and ``Constant`` nodes) become constant
  tensors; operators whose inputs are all constant (shape arithmetic,
  weight reshapes, QuantizeLinear of float weights) are evaluated at import.
* **QDQ.**  ``DequantizeLinear`` does not emit a node: its output stays
  the integer tensor, marked "dequantized".  An operator whose inputs are all
  such values and whose only consumer is a ``QuantizeLinear`` (optionally
  through a Relu or Clip that becomes the fused activation) becomes one
  integer IR operator with the QuantizeLinear's quantization; data movement
  (Reshape, Transpose, MaxPool, ...) on such values stays integer.  Where a
  pattern does not fit, the values are dequantized and the operator runs in
  float, as the ONNX graph says.  uint8 tensors are held as int8 with the
  zero point shifted by 128 (the same real values).

Every problem is a :class:`ModelError`: unsupported operators (with the
node's name, index and the supported list), attributes, dynamic shapes,
opsets, and files that do not parse.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from aot.frontend.errors import ModelError
from aot.frontend.shapes import (
    HOW_TO_FIX, check_input_names, fix_input_shape, format_declared, normalize_input_shapes,
)
from aot.frontend.onnx_ops import (
    CONVERTERS, FOLDABLE, NHWC, QuantOutput, Value, attribute_values, fold, ir_quant,
    onnx_dtype, onnx_shape,
)
from aot.ir import Graph, GraphBuilder, IRError, Quantization, Tensor, TensorType

#: Versions of the default ("ai.onnx") operator set this frontend reads.  Up to 23
#: the supported operators changed only by new dtypes or new attributes, which
#: the converters reject by name.
MIN_OPSET, MAX_OPSET = 7, 23

#: ONNX operators the frontend imports.
SUPPORTED_OPERATORS = tuple(sorted(CONVERTERS))

_DEFAULT_DOMAINS = ("", "ai.onnx")

#: Element types a model input may have.  A uint8 input stays uint8 in the IR;
#: its first DequantizeLinear (or QLinear operator) gives it its quantization
#: and moves it to int8 (the same real values, zero point - 128).
MODEL_INPUT_DTYPES = ("float32", "uint8", "int8", "int16", "int32", "int64", "bool")


def load_onnx(path: str | Path, input_shapes: Mapping | None = None) -> Graph:
    """Read an .onnx file into a :class:`Graph`; raise :class:`ModelError` if it cannot.

    ``input_shapes`` (``{input name: shape}``) fixes the dimensions the model
    leaves open (:func:`aot.frontend.shapes.fix_input_shape`).
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ModelError(f"cannot read {path}: {err.strerror or err}") from None
    return parse_onnx(data, name=path.stem, input_shapes=input_shapes,
                      base_dir=path.resolve().parent)


def parse_onnx(data: bytes, name: str = "main", input_shapes: Mapping | None = None,
               base_dir: Path | None = None) -> Graph:
    """Convert the bytes of an .onnx file; see :func:`load_onnx`.

    ``base_dir`` is the folder of the model file: initializers kept in external
    data files (what PyTorch's dynamo exporter writes, ``model.onnx.data``) are
    read from there.  Without it such initializers are an error.
    """
    given = normalize_input_shapes(input_shapes)
    model = _parse(data)
    _load_external_data(model, base_dir)
    opset = _check_opset(model)
    try:
        return _Importer(model, opset, name, given).run()
    except IRError as err:  # a converter bug or a model the IR rejects as a whole
        raise ModelError(f"inconsistent model: {err}") from None


def _parse(data: bytes):
    try:
        import onnx
        from google.protobuf.message import DecodeError
    except ImportError:  # pragma: no cover - onnx is a main dependency
        raise ModelError("reading ONNX models needs the 'onnx' package: "
                         "pip install onnx") from None
    if not data:
        raise ModelError("not an ONNX model: the file is empty")
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as err:
        raise ModelError(f"corrupted or truncated ONNX file: {err}") from None
    # Protobuf accepts many byte strings as a message with unknown fields.
    if model.ir_version <= 0 or not model.HasField("graph") or not model.graph.output:
        raise ModelError("not an ONNX model: no IR version or no graph with outputs "
                         "(corrupted file, or another format?)")
    return model


def _load_external_data(model, base_dir: Path | None) -> None:
    from onnx import TensorProto
    from onnx.external_data_helper import load_external_data_for_model

    external = [i.name for i in model.graph.initializer
                if i.data_location == TensorProto.EXTERNAL]
    if not external:
        return
    if base_dir is None:
        raise ModelError(f"initializer {external[0]!r} keeps its data in an external file; "
                         "read the model from its file (aot.frontend.load_model) so that the "
                         "data beside it is found")
    try:
        load_external_data_for_model(model, str(base_dir))
    except Exception as err:  # noqa: BLE001 - onnx raises OSError, ValueError, its own
        raise ModelError(f"cannot read the external data of initializer {external[0]!r} "
                         f"(looked in {base_dir}): {err}") from None


def _check_opset(model) -> int:
    versions = [o.version for o in model.opset_import if o.domain in _DEFAULT_DOMAINS]
    if not versions:
        if model.ir_version >= 3:
            raise ModelError("the model imports no version of the default ONNX operator set")
        versions = [1]
    opset = versions[0]
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise ModelError(
            f"ONNX opset {opset} is not supported; supported: {MIN_OPSET} to {MAX_OPSET} "
            "(onnx.version_converter can convert the model; set ir_version yourself)"
        )
    return opset


def _identifier(text: str) -> str:
    out = "".join(c if c.isalnum() else "_" for c in text)
    return out or "main"


class _Importer:
    def __init__(self, model, opset: int, name: str,
                 input_shapes: dict[str, tuple[int, ...]]) -> None:
        self.model = model
        self.input_shapes = input_shapes
        self.graph_proto = model.graph
        self.opset = opset
        self.builder = GraphBuilder(_identifier(name))
        self.values: dict[str, Value] = {}
        self.absorbed: set[int] = set()  # nodes folded into an earlier integer operator
        self.count = 0

    def run(self) -> Graph:
        g = self.graph_proto
        for init in g.initializer:
            self.values[init.name] = Value(const=_initializer(init))
        if g.sparse_initializer:
            raise ModelError("sparse initializers are not supported")
        # IR < 4 lists initializers as inputs too.
        inputs = [vi for vi in g.input if vi.name not in self.values]
        check_input_names(self.input_shapes, {vi.name: _declared_shape(vi) for vi in inputs})
        for vi in inputs:
            self.values[vi.name] = Value(tensor=self._graph_input(vi))
        self.consumers: dict[str, list[int]] = {}
        self.producers: dict[str, str] = {}  # value name -> its node's label, for errors
        for index, node in enumerate(g.node):
            for name in node.input:
                if name:
                    self.consumers.setdefault(name, []).append(index)
            for name in node.output:
                self.producers.setdefault(name, _label(index, node))
        self.graph_outputs = {o.name for o in g.output}
        for index, node in enumerate(g.node):
            if index not in self.absorbed:
                self._node(index, node)
        outputs = [self._graph_output(o) for o in g.output]
        return self.builder.build(outputs)

    def fresh(self, prefix: str) -> str:
        """A tensor or node name not used before (IR names feed C identifiers later)."""
        self.count += 1
        return f"{prefix}#{self.count}"

    # ------------------------------------------------------------------ graph boundary

    def _graph_input(self, vi) -> Tensor:
        where = f"graph input {vi.name!r}"
        if not vi.type.HasField("tensor_type"):
            raise ModelError(f"{where} is not a tensor")
        tt = vi.type.tensor_type
        dtype = onnx_dtype(tt.elem_type, where)
        if dtype not in MODEL_INPUT_DTYPES:
            raise ModelError(f"{where} has type {dtype}, which is not supported as a model "
                             f"input; supported: {', '.join(MODEL_INPUT_DTYPES)}")
        declared = _declared_shape(vi)
        given = self.input_shapes.get(vi.name)
        zeros = [k for k, d in enumerate(tt.shape.dim) if d.HasField("dim_value")
                 and d.dim_value == 0] if tt.HasField("shape") else []
        if zeros and given is None:
            dims = [0 if k in zeros else d for k, d in enumerate(declared)]
            raise ModelError(f"{where} declares the size 0 in dimension {zeros[0]} "
                             f"({format_declared(dims)}): empty inputs are not supported "
                             f"(nothing to compute); if the 0 means an open size, give the "
                             f"shape with {HOW_TO_FIX}")
        shape = fix_input_shape(vi.name, declared, given)
        return self.builder.input(vi.name, list(shape), dtype)

    def _graph_output(self, vi) -> Tensor:
        if vi.name not in self.values:
            raise ModelError(f"graph output {vi.name!r} is never produced")
        value = self.values[vi.name]
        ctx = _NodeContext(self, None)
        ctx.where = f"graph output {vi.name!r}"
        if value.is_const:
            # A value known at import (Shape, Size, a Constant): the caller's
            # output buffer is written at run time by a copy of the constant
            # (the fold_constants pass keeps the nodes that make graph outputs).
            data = ctx.const_value(value)
            if value.shifted:
                data = data.astype(np.int16) + 128
            tensor = ctx.emit("reshape", [ctx.constant(np.asarray(data))],
                              {"newshape": tuple(np.shape(data))})
            if not any(t.name == vi.name for t in self.builder._inputs):
                tensor.name = vi.name  # as every output: the ONNX name
            return tensor
        tensor = ctx.plain(ctx.floated(value) if value.dq else value)
        if value.shifted:
            # A uint8 ONNX value held as int8: back to uint8 (zero point + 128).
            q = tensor.quant
            tensor = ctx.emit("quantize", [tensor], {"out_dtype": "uint8"},
                              quant=Quantization(q.scale, tuple(z + 128 for z in q.zero_point)))
        if tensor.kind == "input":
            # An input returned as it is (an Identity): the output gets its own
            # buffer, a copy made by a reshape to the same shape, so that writing
            # the output can never clobber the input nor the other way round.
            tensor = ctx.emit("reshape", [tensor], {"newshape": tuple(tensor.shape)})
        if tensor.kind == "activation" and id(tensor) in ctx.created:
            inner = value.tensor
            if inner is not None and inner is not tensor and inner.name == vi.name:
                # The value's own tensor (e.g. a convolution's NHWC result before
                # the transpose back to ONNX's layout) carries the ONNX name: it
                # steps aside, tensor names are unique.
                inner.name = self.fresh(f"{vi.name}/inner")
            if not any(t.name == vi.name for t in self.builder._inputs):
                tensor.name = vi.name
        return tensor

    # ------------------------------------------------------------------ nodes

    def sole_reader(self, name: str):
        """``(index, node)`` of the one node that reads the value ``name``, or None
        when it is a graph output or has no reader or several: the condition for
        folding a chain of nodes into one (an absorbed QuantizeLinear, a GELU)."""
        if name in self.graph_outputs:
            return None
        users = self.consumers.get(name, [])
        if len(users) != 1:
            return None
        return users[0], self.graph_proto.node[users[0]]

    def _node(self, index: int, node) -> None:
        label = _label(index, node)
        if node.domain not in _DEFAULT_DOMAINS:
            raise ModelError(
                f"{label}: operator {node.domain}.{node.op_type} is not supported (only the "
                f"default ONNX domain is); supported operators: {', '.join(SUPPORTED_OPERATORS)}"
            )
        if node.op_type not in CONVERTERS:
            raise ModelError(f"{label}: operator {node.op_type} is not supported; supported "
                             f"operators: {', '.join(SUPPORTED_OPERATORS)}")
        for name in node.input:
            if name and name not in self.values:
                raise ModelError(f"{label} reads {name!r}, which no earlier node produces "
                                 "and which is neither an input nor an initializer")
        ctx = _NodeContext(self, node)
        ctx.where = label
        try:
            values = self._convert(ctx)
        except IRError as err:
            raise ModelError(f"{label}: {err}") from None
        except (ValueError, TypeError, IndexError) as err:
            # numpy refusing a malformed node's data (shapes that do not broadcast,
            # indices out of range): the file's fault, so a ModelError, with the detail.
            raise ModelError(f"{label}: malformed node ({type(err).__name__}: {err})") from None
        if values is None:  # the converter set its outputs through finish_int
            return
        if isinstance(values, Value):
            values = [values]
        for name, value in zip(node.output, values):
            if name and value is not None:
                if name in self.values:
                    raise ModelError(f"{label}: value {name!r} is produced twice")
                self.values[name] = value
                if value.tensor is not None and id(value.tensor) in ctx.created:
                    value.tensor.name = name

    def _convert(self, ctx: _NodeContext):
        node = ctx.node
        inputs = [self.values[n] if n else None for n in node.input]
        if (node.op_type in FOLDABLE and any(v is not None for v in inputs)
                and all(v is None or v.is_const for v in inputs)):
            return fold(ctx)
        return CONVERTERS[node.op_type](ctx)


def _label(index: int, node) -> str:
    """How messages name a node: ``node 4 ('flatten', Reshape)``."""
    return f"node {index}" + (f" ({node.name!r}, {node.op_type})" if node.name
                              else f" ({node.op_type})")


def _declared_shape(vi) -> tuple[int | str | None, ...] | None:
    """A graph input's shape as the file declares it (see :mod:`aot.frontend.shapes`)."""
    tt = vi.type.tensor_type
    if not vi.type.HasField("tensor_type") or not tt.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") and d.dim_value > 0
                 else (d.dim_param or None) for d in tt.shape.dim)


def _initializer(init) -> np.ndarray:
    from onnx import TensorProto, numpy_helper

    where = f"initializer {init.name!r}"
    if init.data_location == TensorProto.EXTERNAL:
        raise ModelError(f"{where} keeps its data in an external file, which is not supported")
    if init.data_type != TensorProto.DOUBLE:  # float64 appears in exported shape arithmetic
        onnx_dtype(init.data_type, where)
    try:
        arr = numpy_helper.to_array(init)
    except Exception as err:  # noqa: BLE001 - onnx raises many types on bad tensors
        raise ModelError(f"{where} cannot be decoded: {err}") from None
    return np.asarray(arr)


class _NodeContext:
    """What a converter needs: its node's inputs, attributes, and ways to emit IR."""

    def __init__(self, imp: _Importer, node) -> None:
        self.imp = imp
        self.node = node
        self.where = ""
        self.opset = imp.opset
        self.created: set[int] = set()  # ids of the tensors this node emitted

    @property
    def op(self) -> str:
        return self.node.op_type

    def fail(self, message: str) -> ModelError:
        return ModelError(f"{self.where}: {message}")

    # ---------------------------------------------------------------- reading

    def attrs(self, **defaults: Any) -> dict[str, Any]:
        """The node's attributes over ``defaults``; an attribute not listed is an error."""
        got = attribute_values(self.node)
        unknown = sorted(set(got) - set(defaults))
        if unknown:
            raise self.fail(f"attribute {unknown[0]!r} is not supported "
                            f"(known: {', '.join(sorted(defaults)) or 'none'})")
        return {**defaults, **got}

    @property
    def n_inputs(self) -> int:
        names = list(self.node.input)
        while names and not names[-1]:
            names.pop()
        return len(names)

    def value(self, i: int, optional: bool = False) -> Value | None:
        names = self.node.input
        if i >= len(names) or not names[i]:
            if optional:
                return None
            raise self.fail(f"input {i} is missing")
        return self.imp.values[names[i]]

    def const_value(self, v: Value) -> np.ndarray:
        """A constant's ONNX value (dequantized when it comes out of DequantizeLinear)."""
        if not v.dq:
            return v.const
        q = v.quant
        shape = [1] * v.const.ndim
        if q.axis is not None:
            shape[q.axis] = -1
        scale = np.asarray(q.scale, np.float32).reshape(shape)
        zp = np.asarray(q.zero_point, np.int64).reshape(shape)
        return ((v.const.astype(np.int64) - zp).astype(np.float32) * scale).astype(np.float32)

    def const(self, i: int, what: str) -> np.ndarray:
        v = self.value(i)
        if not v.is_const:
            raise self.fail(f"{what} (input {i}) must be known at import, but "
                            f"{self.describe_input(i)}")
        return self.const_value(v)

    def describe_input(self, i: int) -> str:
        """Why input ``i`` is not known at import: the tensor and the node making it.

        After folding, such a value depends on data only known at run time: a
        dynamic shape the compiler cannot fix.
        """
        name = self.node.input[i]
        producer = self.imp.producers.get(name)
        if producer is None:
            return f"its value {name!r} is a graph input, known only at run time"
        return (f"its value {name!r} is computed at run time by {producer} (from data, not "
                "from shapes or constants); dynamic shapes are not supported")

    def shape(self, v: Value) -> tuple[int, ...]:
        return onnx_shape(v)

    def output_name(self, k: int = 0) -> str:
        return self.node.output[k] if self.node is not None and k < len(self.node.output) else ""

    # ---------------------------------------------------------------- emitting

    def _prefix(self) -> str:
        if self.node is None:
            return "output"
        return self.node.name or self.output_name() or self.op

    def emit(self, op: str, inputs: list, attrs: dict,
             quant: Quantization | None = None) -> Tensor:
        """Append one IR node; ``quant`` sets its output's quantization.

        The output gets a fresh name; the importer renames the tensor that
        ends up holding an ONNX value after that value.
        """
        node_name = self.imp.fresh(f"{self._prefix()}/{op}")
        out_type = None
        if quant is not None:
            out_type = _infer(op, inputs, attrs, node_name).with_quant(quant)
        t = self.imp.builder.op(op, inputs, out_type=out_type, name=node_name,
                                out_name=node_name, **attrs)
        self.created.add(id(t))
        return t

    def transpose(self, t: Tensor, perm) -> Tensor:
        """``t`` transposed by ``perm``: nothing, a reshape when only unit axes move, or
        a transpose."""
        perm = tuple(int(p) for p in perm)
        if perm == tuple(range(len(perm))):
            return t
        moved = [p for p in perm if t.shape[p] != 1]
        if moved == sorted(moved):  # the element order does not change
            return self.emit("reshape", [t], {"newshape": tuple(t.shape[p] for p in perm)})
        return self.emit("transpose", [t], {"perm": perm})

    def constant(self, data: np.ndarray, quant: Quantization | None = None) -> Tensor:
        data = np.ascontiguousarray(data)
        return self.imp.builder.constant(self.imp.fresh(f"{self._prefix()}/const"), data,
                                         quant=quant)

    def tensor(self, v: Value) -> Tensor:
        """An IR tensor for ``v`` in its own layout (constants become constant tensors)."""
        if v.is_const:
            if v.dq:
                return self.constant(v.const, v.quant)
            return self.constant(v.const)
        if v.flat is not None:
            return self.plain(v)
        return v.tensor

    def plain(self, v: Value) -> Tensor:
        """``v`` as an IR tensor in ONNX's element order (a transpose if needed)."""
        if v.is_const:
            return self.tensor(v)
        key = ("plain",)
        if key in v.cache:
            return v.cache[key]
        t = v.tensor
        if v.flat is not None:
            n, h, w, c = v.flat
            t = self.emit("reshape", [t], {"newshape": (n, h, w, c)})
            t = self.transpose(t, (0, 3, 1, 2))
            t = self.emit("reshape", [t], {"newshape": onnx_shape(v)})
        elif v.perm is not None:
            inverse = tuple(int(i) for i in np.argsort(v.perm))
            t = self.transpose(t, inverse)
        v.cache[key] = t
        return t

    def in_layout(self, v: Value, perm: tuple[int, ...] | None, rank: int | None = None) -> Tensor:
        """``v`` broadcast-aligned to ``rank`` (leading 1s) and transposed by ``perm``."""
        shape = onnx_shape(v)
        rank = len(shape) if rank is None else rank
        if v.is_const:
            data = v.const.reshape((1,) * (rank - len(shape)) + shape)
            if perm is not None:
                data = np.transpose(data, perm)
            return self.constant(data, ir_quant_transposed(v.quant, rank - len(shape), perm)
                                 if v.dq else None)
        if v.flat is None and v.perm == perm and len(shape) == rank:
            return v.tensor
        key = ("layout", perm, rank)
        if key in v.cache:
            return v.cache[key]
        t = self.plain(v)
        if len(shape) < rank:
            t = self.emit("reshape", [t], {"newshape": (1,) * (rank - len(shape)) + shape})
        if perm is not None:
            t = self.transpose(t, perm)
        v.cache[key] = t
        return t

    def floated(self, v: Value) -> Value:
        """``v`` with float semantics made explicit (a dequantize node or float constant)."""
        if not v.dq:
            return v
        if v.is_const:
            return Value(const=self.const_value(v))
        if "float" not in v.cache:
            t = self.emit("dequantize", [v.tensor], {})
            v.cache["float"] = Value(tensor=t, perm=v.perm, flat=v.flat)
        return v.cache["float"]

    # ---------------------------------------------------------------- QDQ

    def int_output(self, fuse_activation: bool = False) -> QuantOutput | None:
        """How this node's output is quantized next, when it can run as integer compute.

        That is when output 0's only reader is a QuantizeLinear with constant,
        per-tensor parameters (through a Relu or Clip first, when
        ``fuse_activation``, which becomes the returned activation).
        """
        imp = self.imp
        name = self.output_name()
        absorbed: list[int] = []
        activation = "none"
        for _ in range(2):
            reader = imp.sole_reader(name)
            if reader is None:
                return None
            index, user = reader
            if user.op_type == "QuantizeLinear" and user.domain in _DEFAULT_DOMAINS:
                q = _quantize_params(self, user)
                if q is None:
                    return None
                return QuantOutput(q[0], q[1], activation, absorbed + [index],
                                   user.output[0])
            if not fuse_activation or absorbed:
                return None
            activation = _activation_of(self, user)
            if activation is None:
                return None
            absorbed.append(index)
            name = user.output[0]
        return None

    def finish_int(self, qout: QuantOutput, tensor: Tensor, perm=None, flat=None) -> None:
        """Give the absorbed QuantizeLinear's output the integer ``tensor``."""
        self.imp.absorbed.update(qout.nodes)
        self.imp.values[qout.output] = Value(tensor=tensor, perm=perm, flat=flat,
                                             shifted=qout.shifted)
        if id(tensor) in self.created:
            tensor.name = qout.output


def ir_quant_transposed(q: Quantization | None, lead: int, perm) -> Quantization | None:
    """A per-axis quantization's axis after adding ``lead`` axes and transposing by ``perm``."""
    if q is None or q.axis is None:
        return q
    axis = q.axis + lead
    if perm is not None:
        axis = list(perm).index(axis)
    return Quantization(q.scale, q.zero_point, axis)


def _infer(op: str, inputs: list, attrs: dict, name: str) -> TensorType:
    from aot.ir import get_op

    opdef = get_op(op)
    full = opdef.normalize_attrs(attrs, f"{op} node {name!r}")
    types = opdef.infer_types([t.type if t is not None else None for t in inputs], full,
                              f"{op} node {name!r}")
    return types[0]


def _quantize_params(ctx: _NodeContext, qnode):
    """(IR quantization, whether uint8) of a QuantizeLinear, if per-tensor and constant."""
    values = ctx.imp.values
    names = list(qnode.input) + ["", ""]
    scale = values.get(names[1])
    zp = values.get(names[2]) if names[2] else None
    if scale is None or not scale.is_const or (zp is not None and not zp.is_const):
        return None
    if scale.const.size != 1 or (zp is not None and zp.const.size != 1):
        return None
    got = attribute_values(qnode)
    if got.get("output_dtype", 0) or got.get("block_size", 0):
        return None
    zdata = zp.const if zp is not None else np.zeros((), np.uint8)
    if zdata.dtype not in (np.int8, np.uint8):
        return None
    try:
        q = ir_quant(scale.const.reshape(()), zdata.reshape(()), None)
    except ModelError:
        return None
    return q, zdata.dtype == np.uint8


def _activation_of(ctx: _NodeContext, user) -> str | None:
    """The IR fused activation a Relu/Clip node amounts to, or None."""
    if user.domain not in _DEFAULT_DOMAINS:
        return None
    if user.op_type == "Relu":
        return "relu"
    if user.op_type != "Clip":
        return None
    values = ctx.imp.values
    got = attribute_values(user)
    lo, hi = got.get("min", -np.inf), got.get("max", np.inf)
    names = list(user.input) + ["", ""]
    for k in (1, 2):
        if names[k]:
            v = values.get(names[k])
            if v is None or not v.is_const or v.dq or v.const.size != 1:
                return None
            if k == 1:
                lo = float(v.const.reshape(()))
            else:
                hi = float(v.const.reshape(()))
    return {(0.0, np.inf): "relu", (0.0, 6.0): "relu6", (-1.0, 1.0): "relu_n1_to_1"}.get(
        (float(lo), float(hi)))


__all__ = ["MAX_OPSET", "MIN_OPSET", "NHWC", "SUPPORTED_OPERATORS", "load_onnx", "parse_onnx"]
