"""TFLite flatbuffer -> :class:`aot.ir.Graph`.

The file is read with the bounds-checked reader in :mod:`aot.frontend.flatbuf`;
table slot numbers and enum values below are those of TFLite's public
``schema.fbs`` (schema version 3), the file format's specification.  No
TensorFlow and no generated schema module is needed.

The first subgraph is imported, the init subgraphs CALL_ONCE names
(resource variables' start values), IF's branches (both imported in
place, a select picks the taken one) and WHILE's condition and body (the
loop unrolled at import when its trip count is known there).  Each TFLite
operator maps to one IR node:

===========================  =====================================
TFLite                       IR
===========================  =====================================
CONV_2D                      conv2d (SAME/VALID -> explicit padding)
DEPTHWISE_CONV_2D            depthwise_conv2d
FULLY_CONNECTED              dense
AVERAGE_POOL_2D, MAX_POOL_2D avg_pool2d, max_pool2d
ADD SUB MUL MAXIMUM MINIMUM  add sub mul maximum minimum
RESHAPE SQUEEZE EXPAND_DIMS  reshape squeeze expand_dims
SOFTMAX LOGISTIC TANH        softmax logistic tanh
RELU RELU6 LEAKY_RELU        relu relu6 leaky_relu
HARD_SWISH                   hard_swish
QUANTIZE DEQUANTIZE          quantize dequantize
CONCATENATION PAD PADV2      concatenate pad pad
MEAN STRIDED_SLICE TRANSPOSE mean strided_slice transpose
SVDF                         svdf
UNIDIRECTIONAL_SEQUENCE_LSTM lstm
===========================  =====================================

Operands that TFLite passes as constant tensors (reshape shapes, pad
widths, mean axes, slice bounds, transpose permutations) become attributes.
Everything the reader cannot represent raises :class:`ModelError` naming
the operator, its index and what is supported.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from aot.frontend.errors import ModelError
from aot.frontend.flatbuf import Buffer, FlatBufferError, Table
from aot.frontend.tflite_names import BUILTIN_NAMES
from aot.ir import Graph, IRError, Node, Quantization, Tensor, TensorType, get_op
from aot.ir import ops as ir_ops

#: TensorType enum -> IR dtype (those the IR supports).
_DTYPES = {0: "float32", 2: "int32", 3: "uint8", 4: "int64", 6: "bool", 7: "int16", 9: "int8"}
_DTYPE_NAMES = {
    0: "FLOAT32", 1: "FLOAT16", 2: "INT32", 3: "UINT8", 4: "INT64", 5: "STRING", 6: "BOOL",
    7: "INT16", 8: "COMPLEX64", 9: "INT8", 10: "FLOAT64", 11: "COMPLEX128", 12: "UINT64",
    13: "RESOURCE", 14: "VARIANT", 15: "UINT32", 16: "UINT16", 17: "INT4", 18: "BFLOAT16",
}

#: BuiltinOperator enum values of the operators this frontend imports.
BUILTIN_CODES = {
    "ADD": 0, "AVERAGE_POOL_2D": 1, "CONCATENATION": 2, "CONV_2D": 3, "DEPTHWISE_CONV_2D": 4,
    "DEQUANTIZE": 6, "FULLY_CONNECTED": 9, "LOGISTIC": 14, "MAX_POOL_2D": 17, "MUL": 18,
    "RELU": 19, "RELU6": 21, "RESHAPE": 22, "SOFTMAX": 25, "SVDF": 27, "TANH": 28, "PAD": 34,
    "TRANSPOSE": 39, "MEAN": 40, "SUB": 41, "SQUEEZE": 43, "UNIDIRECTIONAL_SEQUENCE_LSTM": 44,
    "STRIDED_SLICE": 45, "MAXIMUM": 55, "MINIMUM": 57, "PADV2": 60, "EXPAND_DIMS": 70,
    "LEAKY_RELU": 98, "QUANTIZE": 114, "HARD_SWISH": 117,
    # Beyond TFLM (aot's extensions; docs/operators.md lists them apart).
    "GELU": 150,
    # Lowered at import into the data-movement operators above (see "lowered
    # into data movement" below).
    "DEPTH_TO_SPACE": 5, "SPACE_TO_DEPTH": 26, "BATCH_TO_SPACE_ND": 37,
    "SPACE_TO_BATCH_ND": 38, "SPLIT": 49, "SLICE": 65, "PACK": 83, "UNPACK": 88,
    "SPLIT_V": 102, "REVERSE_V2": 105, "MIRROR_PAD": 100, "BROADCAST_TO": 130,
    "RESIZE_NEAREST_NEIGHBOR": 97, "REDUCE_MAX": 82, "REDUCE_MIN": 89,
    "LESS": 58, "GREATER": 61, "GREATER_EQUAL": 62, "LESS_EQUAL": 63, "EQUAL": 71,
    "NOT_EQUAL": 72, "LOGICAL_OR": 84, "LOGICAL_AND": 86, "LOGICAL_NOT": 87, "SELECT_V2": 123,
    "FLOOR": 8, "EXP": 47, "NEG": 59, "SIN": 66, "LOG": 73, "SQRT": 75, "RSQRT": 76,
    "SQUARE": 92, "ABS": 101, "CEIL": 104, "COS": 108, "ROUND": 116,
    "DIV": 42, "FLOOR_DIV": 90, "FLOOR_MOD": 95, "SQUARED_DIFFERENCE": 99, "ADD_N": 106,
    "CAST": 53, "PRELU": 54, "ZEROS_LIKE": 93, "ELU": 111, "ARG_MAX": 56, "ARG_MIN": 79,
    "SUM": 74, "GATHER": 36, "GATHER_ND": 107, "EMBEDDING_LOOKUP": 7, "CUMSUM": 128,
    "BATCH_MATMUL": 126, "TRANSPOSE_CONV": 67, "RESIZE_BILINEAR": 23,
    "L2_POOL_2D": 12, "DYNAMIC_UPDATE_SLICE": 151, "REDUCE_ALL": 140,
    "LOG_SOFTMAX": 50, "L2_NORMALIZATION": 11,
    "VAR_HANDLE": 142, "READ_VARIABLE": 143, "ASSIGN_VARIABLE": 144, "CALL_ONCE": 129,
    "IF": 118, "WHILE": 119,
    # Folded into constants at import (see "folded at import" below).
    "SHAPE": 77, "BROADCAST_ARGS": 145, "FILL": 94,
}
_CODE_NAMES = {v: k for k, v in BUILTIN_CODES.items()}

#: TFLM builtins refused at import, and why (docs/operators.md prints it).
REFUSED: dict[str, str] = {}

#: What happens at import to builtins that become no operator of their own.
RESOLVED = {
    "WHILE": "unrolled at import into its body's operators (its trip count must be known "
             "there)",
}
SUPPORTED_OPERATORS = tuple(sorted(BUILTIN_CODES))

_ACTIVATIONS = {0: "none", 1: "relu", 2: "relu_n1_to_1", 3: "relu6", 4: "tanh", 5: "sign_bit"}
_CUSTOM = 32
_MAX_TENSOR_BYTES = 2**31 - 1  # TFLite sizes tensors with int32 byte counts


def load_tflite(path: str | Path) -> Graph:
    """Read a .tflite file into a :class:`Graph`; raise :class:`ModelError` if it cannot."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ModelError(f"cannot read {path}: {err.strerror or err}") from None
    return parse_tflite(data, name=path.stem)


def parse_tflite(data: bytes, name: str = "main") -> Graph:
    """Convert the bytes of a .tflite file; see :func:`load_tflite`."""
    if len(data) < 8:
        raise ModelError(f"not a TFLite model: only {len(data)} bytes")
    if data[4:8] != b"TFL3":
        raise ModelError(
            f"not a TFLite model: file identifier is {data[4:8]!r}, expected b'TFL3' "
            "(is this an ONNX or other file?)"
        )
    try:
        return _Importer(Buffer(data), name).run()
    except FlatBufferError as err:
        raise ModelError(f"corrupted or truncated TFLite file: {err}") from None
    except RecursionError:
        raise ModelError("corrupted TFLite file: structure nests too deeply") from None


class _Importer:
    def __init__(self, buf: Buffer, name: str) -> None:
        self.buf = buf
        self.name = name

    def run(self) -> Graph:
        model = self.buf.root()
        version = model.scalar(0, "I", 0)
        if version != 3:
            raise ModelError(f"unsupported TFLite schema version {version}; expected 3")
        self.buffers = model.tables(4, "buffer")
        self.opcodes = [self._opcode(t) for t in model.tables(1, "operator code")]
        subgraphs = model.tables(2, "subgraph")
        if not subgraphs:
            raise ModelError("the model has no subgraph")
        self.subgraphs = subgraphs
        self.variables: dict[tuple[str, str], Tensor] = {}  # resource variables by key
        self.called_once: set[int] = set()
        self.prefix = ""  # of node names inside an inlined subgraph
        self.names: set[str] = set()  # tensor names given so far
        self.inlining: list[int] = []
        sub = subgraphs[0]
        self._enter_subgraph(sub)
        inputs = [self._tensor(int(i), role="input") for i in _ints(sub, 1)]
        inputs = [t for t in inputs if t.kind == "input"]
        nodes = [n for i, op in enumerate(sub.tables(3, "operator")) for n in self._node(i, op)]
        outputs = [self._tensor(int(i), role="subgraph output") for i in _ints(sub, 2)]
        if not outputs:
            raise ModelError("the model has no outputs")
        for t in outputs:
            if t.kind == "input":
                raise ModelError(f"model output {t.name!r} is a model input passed through "
                                 "unchanged: not supported yet (the compiled model would not "
                                 "copy it)")
            if t.kind == "constant":
                raise ModelError(f"model output {t.name!r} is a constant (folded at import, "
                                 "e.g. the result of SHAPE): not supported yet as an output")
        try:
            return Graph(inputs, outputs, nodes, name=_identifier(self.name))
        except IRError as err:
            raise ModelError(f"inconsistent model: {err}") from None

    def _enter_subgraph(self, sub: Table) -> None:
        """Make ``sub`` the subgraph whose tensor indices operators use."""
        self.raw_tensors = sub.tables(0, "tensor")
        self.tensors: dict[int, Tensor] = {}
        self.produced: set[int] = set()
        self.resources: dict[int, tuple[str, str]] = {}  # VAR_HANDLE outputs -> variable key

    def run_init_subgraph(self, index: int, where: str) -> None:
        """CALL_ONCE's subgraph ``index``: only VAR_HANDLE and ASSIGN_VARIABLE
        of constants, which become the variables' start values (the state's
        reset writes them)."""
        if not 0 < index < len(self.subgraphs):
            raise ModelError(f"{where}: init subgraph {index} does not exist (the model has "
                             f"{len(self.subgraphs)} subgraphs; 0 is the main one)")
        if index in self.called_once:
            return
        self.called_once.add(index)
        saved = (self.raw_tensors, self.tensors, self.produced, self.resources)
        self._enter_subgraph(self.subgraphs[index])
        try:
            for i, op in enumerate(self.subgraphs[index].tables(3, "operator")):
                code, op_name = self.opcodes[op.scalar(0, "I", 0)] \
                    if op.scalar(0, "I", 0) < len(self.opcodes) else (None, "?")
                here = f"{where}: init subgraph {index} operator {i} ({op_name})"
                ins, outs = [int(v) for v in _ints(op, 1)], [int(v) for v in _ints(op, 2)]
                ctx = _OpContext(self, i, op_name, op, ins, outs)
                if op_name == "VAR_HANDLE":
                    _var_handle(ctx)
                elif op_name == "ASSIGN_VARIABLE":
                    key = self.resource_key(ctx, 0)
                    value = ctx.input(1)
                    if value.kind != "constant":
                        raise ModelError(f"{here}: assigns a computed value: not supported yet "
                                         "(init subgraphs may assign constants only)")
                    if key in self.variables:
                        raise ModelError(f"{here}: variable {key[1]!r} is used before this "
                                         "assignment of its start value: not supported yet "
                                         "(CALL_ONCE first, one assignment per variable)")
                    self.variable(ctx, key, value.type, start=value.data)
                else:
                    raise ModelError(f"{here}: not supported yet in an init subgraph (only "
                                     "VAR_HANDLE and ASSIGN_VARIABLE of constants)")
        finally:
            self.raw_tensors, self.tensors, self.produced, self.resources = saved

    def inline_subgraph(self, index: int, args: list[Tensor], where: str,
                        prefix: str) -> tuple[list[Node], list[Tensor]]:
        """Subgraph ``index`` imported in place, its inputs bound to ``args``:
        its nodes (names prefixed with ``prefix``) and its output tensors."""
        if not 0 < index < len(self.subgraphs):
            raise ModelError(f"{where}: subgraph {index} does not exist (the model has "
                             f"{len(self.subgraphs)} subgraphs; 0 is the main one)")
        if index in self.inlining:
            raise ModelError(f"{where}: subgraph {index} calls itself: not supported")
        sub = self.subgraphs[index]
        saved = (self.raw_tensors, self.tensors, self.produced, self.resources, self.prefix)
        self._enter_subgraph(sub)
        self.prefix = prefix
        self.inlining.append(index)
        try:
            ins = [int(i) for i in _ints(sub, 1)]
            if len(ins) != len(args):
                raise ModelError(f"{where}: subgraph {index} takes {len(ins)} inputs, the "
                                 f"operator passes {len(args)}")
            for k, (i, t) in enumerate(zip(ins, args)):
                declared = self._tensor(i, role=f"subgraph {index} input {k}").type
                if (declared.shape, declared.dtype) != (t.type.shape, t.type.dtype):
                    raise ModelError(f"{where}: subgraph {index} input {k} is {declared}, the "
                                     f"operator passes {t.type}")
                self.tensors[i] = t
            nodes = [n for i, op in enumerate(sub.tables(3, "operator")) for n in self._node(i, op)]
            outs = [self._tensor(int(i), role=f"subgraph {index} output")
                    for i in _ints(sub, 2)]
        finally:
            self.inlining.pop()
            self.raw_tensors, self.tensors, self.produced, self.resources, self.prefix = saved
        return nodes, outs

    def resource_key(self, ctx: _OpContext, i: int) -> tuple[str, str]:
        """The variable that input ``i`` (a VAR_HANDLE output) names."""
        if i >= len(ctx.in_idx) or ctx.in_idx[i] not in self.resources:
            raise ctx.fail(f"input {i} is not a resource made by VAR_HANDLE in this subgraph")
        return self.resources[ctx.in_idx[i]]

    def variable(self, ctx: _OpContext, key: tuple[str, str], ttype: TensorType,
                 start: np.ndarray | None = None) -> Tensor:
        """The variable tensor of resource ``key``, created with ``ttype`` (and
        the ``start`` values an init subgraph assigns) on first use."""
        var = self.variables.get(key)
        if var is None:
            var = Tensor(f"var_{_identifier(key[1] or key[0] or str(len(self.variables)))}",
                         ttype, "variable", start)
            self.variables[key] = var
        elif var.type != ttype:
            raise ctx.fail(f"variable {key[1]!r} is {var.type} elsewhere but {ttype} here: "
                           "not supported (one type per variable)")
        return var

    # ------------------------------------------------------------------ tables

    def _opcode(self, table: Table) -> tuple[int, str]:
        """The operator code and its name (custom operators: their own name)."""
        # Codes above 127 only fit the newer int32 field; older files use the byte.
        code = max(table.scalar(3, "i", 0), table.scalar(0, "b", 0))
        if code == _CUSTOM:
            return code, f"CUSTOM {table.string(1) or ''!r}"
        return code, BUILTIN_NAMES.get(code, f"builtin operator {code}")

    def _tensor(self, index: int, role: str) -> Tensor:
        """The IR tensor for TFLite tensor ``index``, created on first use."""
        if index in self.tensors:
            return self.tensors[index]
        if not 0 <= index < len(self.raw_tensors):
            raise ModelError(
                f"{role} refers to tensor {index}, but the model has {len(self.raw_tensors)}"
            )
        raw = self.raw_tensors[index]
        # Names are made unique (an inlined subgraph's get its prefix, a repeated
        # one the tensor index): the compiler matches kernels' in-place
        # consent to tensors by name, and TFLite does not require unique names.
        name = self.prefix + (raw.string(3) or f"tensor{index}")
        if name in self.names:
            name = f"{name}_{index}"
            while name in self.names:
                name += "_"
        self.names.add(name)
        where = f"tensor {index} ({name!r})"
        code = raw.scalar(1, "b", 0)
        if code not in _DTYPES:
            raise ModelError(
                f"{where} has type {_DTYPE_NAMES.get(code, code)}, which is not supported; "
                f"supported: {', '.join(_DTYPE_NAMES[c] for c in sorted(_DTYPES))}"
            )
        dtype = _DTYPES[code]
        shape_arr = raw.array(0, "i4")
        shape = tuple(int(d) for d in shape_arr) if shape_arr is not None else ()
        if any(d < 0 for d in shape):
            raise ModelError(f"{where} has a dynamic or negative shape {list(shape)}")
        if raw.has(6):
            raise ModelError(f"{where} is sparse; sparse tensors are not supported")
        quant = self._quant(raw.table(4, f"{where} quantization"), shape, dtype, where)
        try:
            ttype = TensorType(shape, dtype, quant)
        except IRError as err:
            raise ModelError(f"{where}: {err}") from None
        if ttype.nbytes > _MAX_TENSOR_BYTES:
            raise ModelError(f"{where}: {ttype} needs {ttype.nbytes:,} bytes; TFLite tensors "
                             "are limited to 2 GiB")
        data = self._buffer(raw.scalar(2, "I", 0), ttype, where)
        if raw.scalar(5, "?", False):
            kind = "variable"
        elif data is not None:
            kind = "constant"
        elif role == "input":
            kind = "input"
        else:
            kind = "activation"
        try:
            tensor = Tensor(name, ttype, kind, data)
        except IRError as err:
            raise ModelError(f"{where}: {err}") from None
        self.tensors[index] = tensor
        return tensor

    def _quant(self, table: Table | None, shape, dtype, where) -> Quantization | None:
        if table is None:
            return None
        scale = table.array(2, "f4")
        if scale is None or len(scale) == 0:
            return None
        if table.scalar(4, "B", 0) != 0:
            raise ModelError(f"{where} uses custom quantization details, not supported")
        zero = table.array(3, "i8")
        if zero is None or len(zero) == 0:
            zero = np.zeros(len(scale), np.int64)
        if len(zero) != len(scale):
            raise ModelError(f"{where} has {len(scale)} scales but {len(zero)} zero points")
        if dtype in ("float32", "bool"):
            return None  # float tensors may carry ranges from training; they mean nothing here
        if not np.all(np.isfinite(scale)) or np.any(scale <= 0):
            if dtype in ("int32", "int64") and not np.any(scale):
                return None  # shape/index tensors sometimes carry a zero scale
            raise ModelError(f"{where} has a non-positive or non-finite quantization scale")
        axis = None
        if len(scale) > 1:
            axis = table.scalar(6, "i", 0)
            if not 0 <= axis < len(shape) and len(shape) == 1 and shape[0] == len(scale):
                axis = 0  # some converters leave the weight's axis on a 1-D bias
        try:
            return Quantization(tuple(scale), tuple(zero), axis)
        except IRError as err:
            raise ModelError(f"{where}: {err}") from None

    def _buffer(self, index: int, ttype: TensorType, where: str) -> np.ndarray | None:
        if index == 0:
            return None
        if index >= len(self.buffers):
            raise ModelError(f"{where} refers to buffer {index}; the model has "
                             f"{len(self.buffers)}")
        table = self.buffers[index]
        span = table.byte_span(0)
        offset, size = table.scalar(1, "Q", 0), table.scalar(2, "Q", 0)
        if (span is None or span[1] == 0) and offset > 1:
            self.buf.check(offset, size, f"{where} external buffer")
            span = (offset, size)
        if span is None or span[1] == 0:
            return None
        start, length = span
        if length != ttype.nbytes:
            raise ModelError(
                f"{where}: its buffer holds {length} bytes but {ttype} needs {ttype.nbytes}"
            )
        le = ttype.np_dtype.newbyteorder("<")
        arr = np.frombuffer(self.buf.data, le, ttype.size, start)
        return arr.astype(ttype.np_dtype).reshape(ttype.shape)

    # ------------------------------------------------------------------ operators

    def _node(self, index: int, op: Table) -> Node:
        opcode_index = op.scalar(0, "I", 0)
        if opcode_index >= len(self.opcodes):
            raise ModelError(f"operator {index} uses opcode {opcode_index}, which does not exist")
        code, op_name = self.opcodes[opcode_index]
        where = f"operator {index} ({op_name})"
        if op_name in REFUSED:
            raise ModelError(f"{where}: {REFUSED[op_name]}")
        if code not in _CODE_NAMES:
            raise ModelError(
                f"{where} is not supported; supported operators: "
                f"{', '.join(SUPPORTED_OPERATORS)}"
            )
        in_idx = [int(i) for i in _ints(op, 1)]
        out_idx = [int(i) for i in _ints(op, 2)]
        ctx = _OpContext(self, index, op_name, op, in_idx, out_idx)
        try:
            converted = _CONVERTERS[op_name][0](ctx)
            if converted is None:  # lowered into nodes (ctx.emit) or resolved at import
                if not ctx.steps and not ctx.resolved:
                    raise ctx.fail("the converter emitted nothing")
                nodes = ctx.steps
            else:
                ir_op, inputs, attrs = converted
                nodes = [self._make_node(ctx, ir_op, inputs, attrs,
                                         [self._claim_output(ctx, i) for i in range(len(out_idx))],
                                         f"{self.prefix}{index}:{op_name.lower()}")]
            # last: the converter's and the IR's own messages on types are more specific
            _check_element_type(ctx, op_name)
            return nodes
        except IRError as err:
            text = str(err)  # attribute errors already name the operator
            raise ModelError(text if text.startswith(where) else f"{where}: {text}") from None

    def _claim_output(self, ctx: _OpContext, position: int) -> Tensor:
        """The IR tensor of the operator's output ``position``; each is produced once."""
        i = ctx.out_idx[position]
        t = self._tensor(i, role="output")
        if t.kind != "activation" or i in self.produced:
            raise ModelError(f"{ctx.where}: output tensor {i} ({t.name!r}) is a {t.kind} "
                             "or is produced twice")
        self.produced.add(i)
        return t

    def _make_node(self, ctx: _OpContext, ir_op: str, inputs, attrs, outputs,
                   node_name: str) -> Node:
        opdef = get_op(ir_op)
        attrs = opdef.normalize_attrs(attrs, f"{ctx.where}")
        node = Node(ir_op, inputs, outputs, attrs, node_name)
        ir_ops.check_node(node)
        return node


def _ints(table: Table, slot: int) -> np.ndarray:
    arr = table.array(slot, "i4")
    return arr if arr is not None else np.zeros(0, np.int32)


def _identifier(text: str) -> str:
    out = "".join(c if c.isalnum() else "_" for c in text)
    return out or "main"


class _OpContext:
    """What a converter needs: the operator's inputs, outputs and options."""

    def __init__(self, imp: _Importer, index: int, op_name: str, op: Table,
                 in_idx: list[int], out_idx: list[int]) -> None:
        self.imp = imp
        self.index = index
        self.op_name = op_name
        self.op = op
        self.in_idx = in_idx
        self.out_idx = out_idx
        self.where = f"operator {index} ({op_name})"
        self.steps: list[Node] = []
        self.resolved = False  # outputs folded or aliased, or nothing to produce

    def emit(self, ir_op: str, inputs, attrs, *, output: int | None = None) -> Tensor:
        """Lower the operator into IR nodes one at a time: a node of ``ir_op``
        writing the operator's output ``output``, or a new intermediate tensor
        (its type inferred, quantization included) when ``output`` is None.
        Returns the tensor written.  A converter that emits returns None."""
        step = len(self.steps)
        name = f"{self.imp.prefix}{self.index}:{self.op_name.lower()}.{step}"
        if output is not None:
            outputs = [self.imp._claim_output(self, output)]
        else:
            opdef = get_op(ir_op)
            normalized = opdef.normalize_attrs(attrs, self.where)
            (ttype,) = opdef.infer_types([t.type if t is not None else None for t in inputs],
                                         normalized, self.where)
            outputs = [Tensor(f"{self.imp.prefix}{self.op_name.lower()}_{self.index}.{step}",
                              ttype, "activation")]
        self.steps.append(self.imp._make_node(self, ir_op, inputs, attrs, outputs, name))
        return outputs[0]

    def fold(self, output: int, value: np.ndarray) -> None:
        """Make the operator's output ``output`` a constant holding ``value``
        (computed at import: shapes are static here).  A converter that
        folds every output returns None."""
        ttype = self.output_type(output)
        i = self.out_idx[output]
        if i in self.imp.produced:
            raise self.fail(f"output tensor {i} is produced twice")
        value = np.asarray(value)
        if value.size != ttype.size:
            raise self.fail(f"computes {value.size} values but output {output} holds "
                            f"{ttype.size} ({ttype})")
        old = self.imp.tensors[i]
        self.imp.tensors[i] = Tensor(old.name, ttype, "constant",
                                     value.astype(ttype.np_dtype).reshape(ttype.shape))
        self.imp.produced.add(i)
        self.resolved = True

    def alias(self, output: int, tensor: Tensor) -> None:
        """Make the operator's output ``output`` the existing ``tensor`` (its
        type must be the declared one); a converter that aliases every
        output returns None."""
        ttype = self.output_type(output)
        i = self.out_idx[output]
        if i in self.imp.produced:
            raise self.fail(f"output tensor {i} is produced twice")
        if tensor.type != ttype:
            raise self.fail(f"output {output} is declared {ttype} but the loop gives "
                            f"{tensor.type}: not supported (one type and quantization)")
        self.imp.tensors[i] = tensor
        self.imp.produced.add(i)
        self.resolved = True

    def fail(self, message: str) -> ModelError:
        return ModelError(f"{self.where}: {message}")

    def input(self, i: int, optional: bool = False) -> Tensor | None:
        if i >= len(self.in_idx) or self.in_idx[i] < 0:
            if optional:
                return None
            raise self.fail(f"input {i} is missing")
        return self.imp._tensor(self.in_idx[i], role=f"{self.where} input {i}")

    def inputs(self, count: int, optional_from: int | None = None) -> list[Tensor | None]:
        if len(self.in_idx) > count:
            raise self.fail(f"has {len(self.in_idx)} inputs, expected at most {count}")
        first_optional = count if optional_from is None else optional_from
        return [self.input(i, optional=i >= first_optional) for i in range(count)]

    def const(self, i: int, what: str) -> np.ndarray:
        t = self.input(i)
        if t.kind != "constant":
            raise self.fail(f"{what} (input {i}) must be a constant tensor")
        return t.data

    def output_type(self, i: int = 0) -> TensorType:
        if i >= len(self.out_idx):
            raise self.fail(f"output {i} is missing")
        return self.imp._tensor(self.out_idx[i], role="output").type

    def options(self) -> Table | None:
        return self.op.table(4, f"{self.where} options")

    def opt(self, slot: int, fmt: str, default):
        table = self.options()
        return default if table is None else table.scalar(slot, fmt, default)

    def activation(self, slot: int) -> str:
        code = self.opt(slot, "b", 0)
        act = _ACTIVATIONS.get(code)
        if act not in ir_ops.ACTIVATIONS:
            raise self.fail(
                f"fused activation {act or code} is not supported; "
                f"supported: {', '.join(ir_ops.ACTIVATIONS)}"
            )
        return act


# ---------------------------------------------------------------------- converters

def _same_padding(size: int, kernel: int, stride: int, dilation: int) -> tuple[int, int]:
    """TFLite SAME: output ceil(size/stride), the extra pixel goes after."""
    out = (size + stride - 1) // stride
    total = max((out - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def _window_attrs(ctx: _OpContext, data: Tensor, kh: int, kw: int,
                  dilation=(1, 1)) -> dict:
    padding = ctx.opt(0, "b", 0)
    sw, sh = ctx.opt(1, "i", 1), ctx.opt(2, "i", 1)
    if sw < 1 or sh < 1:
        raise ctx.fail(f"strides must be at least 1, got {sh}x{sw}")
    if data.type.rank != 4:
        raise ctx.fail(f"data must have rank 4, got shape {list(data.shape)}")
    if padding == 0:  # SAME
        top, bottom = _same_padding(data.shape[1], kh, sh, dilation[0])
        left, right = _same_padding(data.shape[2], kw, sw, dilation[1])
    elif padding == 1:  # VALID
        top = bottom = left = right = 0
    else:
        raise ctx.fail(f"unknown padding kind {padding}")
    return {"strides": (sh, sw), "padding": (top, left, bottom, right)}


def _weights(ctx: _OpContext, weight: Tensor) -> None:
    if weight.type.rank != 4:
        raise ctx.fail(f"weights must have rank 4, got shape {list(weight.shape)}")


def _int16_zero_points(ctx: _OpContext, data: Tensor) -> None:
    """TFLM's 16x8 kernels take int16 data as symmetric: they ignore, or refuse,
    a zero point other than 0 on the input and the output."""
    if data.dtype != "int16":
        return
    for what, t in (("input", data.type), ("output", ctx.output_type())):
        if t.quant is not None and any(t.quant.zero_point):
            raise ctx.fail(f"int16 {what} with zero point {t.quant.zero_point[0]}: not "
                           "supported (TFLM's int16 kernels need zero point 0)")


def _fixed_int16_output(ctx: _OpContext, data: Tensor) -> None:
    """int16 SOFTMAX, LOGISTIC, TANH: TFLM needs a symmetric input and a Q0.15
    output (scale 1/32768, zero point 0)."""
    if data.dtype != "int16" or ctx.output_type().dtype != "int16":
        return
    _int16_zero_points(ctx, data)
    q = ctx.output_type().quant
    if q is None or q.is_per_axis or np.float32(q.scale[0]) != np.float32(1 / 32768):
        raise ctx.fail(f"an int16 output needs scale 1/32768 and zero point 0 (as TFLM), got "
                       f"scale {None if q is None else q.scale[0]}")


def _conv2d(ctx: _OpContext):
    data, weight, bias = ctx.inputs(3, optional_from=2)
    _weights(ctx, weight)
    _int16_zero_points(ctx, data)
    dilation = (ctx.opt(5, "i", 1), ctx.opt(4, "i", 1))
    if min(dilation) < 1:
        raise ctx.fail(f"dilation must be at least 1, got {dilation}")
    if data.type.rank == 4 and weight.shape[3] != data.shape[3]:
        raise ctx.fail(
            f"grouped convolution ({data.shape[3]} input channels, weights for "
            f"{weight.shape[3]}) is not supported"
        )
    attrs = _window_attrs(ctx, data, weight.shape[1], weight.shape[2], dilation)
    attrs.update(dilation=dilation, activation=ctx.activation(3))
    return "conv2d", [data, weight, bias], attrs


def _depthwise_conv2d(ctx: _OpContext):
    data, weight, bias = ctx.inputs(3, optional_from=2)
    _weights(ctx, weight)
    _int16_zero_points(ctx, data)
    dilation = (ctx.opt(6, "i", 1), ctx.opt(5, "i", 1))
    if min(dilation) < 1:
        raise ctx.fail(f"dilation must be at least 1, got {dilation}")
    attrs = _window_attrs(ctx, data, weight.shape[1], weight.shape[2], dilation)
    # TFLM derives the multiplier from the shapes; the option is not always set.
    channels = data.shape[3]
    if channels == 0 or weight.shape[3] % channels:
        raise ctx.fail(f"weights have {weight.shape[3]} channels, not a multiple of the "
                       f"input's {channels}")
    if data.dtype == "int16" and bias is not None and bias.dtype != "int64":
        # TFLM's 16x8 depthwise reads its bias as int64 whatever its type
        raise ctx.fail(f"an int16 layer needs an int64 bias (TFLM reads it as int64), got "
                       f"{bias.dtype}")
    attrs.update(dilation=dilation, activation=ctx.activation(4),
                 depth_multiplier=weight.shape[3] // channels)
    return "depthwise_conv2d", [data, weight, bias], attrs


def _dense(ctx: _OpContext):
    data, weight, bias = ctx.inputs(3, optional_from=2)
    if ctx.opt(1, "b", 0) != 0:
        raise ctx.fail("shuffled weights format is not supported")
    keep = bool(ctx.opt(2, "?", False))
    return "dense", [data, weight, bias], {"activation": ctx.activation(0), "keep_num_dims": keep}


def _transpose_conv(ctx: _OpContext):
    """TRANSPOSE_CONV(output_shape, weights, data, bias?): the output tensor's
    shape is authoritative (TFLM ignores input 0 too); padding is TFLM's,
    computed from the output's size as if it were a convolution's input."""
    weight, data = ctx.input(1), ctx.input(2)
    bias = ctx.input(3, optional=True)
    out = ctx.output_type()
    _weights(ctx, weight)
    if data.type.rank != 4 or out.rank != 4:
        raise ctx.fail(f"data and output must be 4-D NHWC, got {list(data.shape)} and "
                       f"{list(out.shape)}")
    if ctx.activation(3) != "none":
        raise ctx.fail(f"fused activation {ctx.activation(3)}: not supported yet")
    if data.dtype == "int16" and bias is not None and bias.dtype == "int16" \
            and bias.kind == "constant":
        # TFLM widens an int16 bias of a 16x8 layer to int64 before use
        bias = Tensor(bias.name, TensorType(bias.shape, "int64", bias.quant), "constant",
                      bias.data.astype(np.int64))
    if data.dtype == "int16" and bias is not None and bias.dtype != "int64":
        raise ctx.fail(f"an int16 layer needs an int64 (or constant int16) bias, got "
                       f"{bias.dtype}")
    if weight.quant is not None and any(weight.quant.zero_point):
        raise ctx.fail("weights must have zero point 0 (symmetric), as TFLM requires")
    padding = ctx.opt(0, "b", 0)
    sw, sh = ctx.opt(1, "i", 1), ctx.opt(2, "i", 1)
    if sw < 1 or sh < 1:
        raise ctx.fail(f"strides must be at least 1, got {sh}x{sw}")
    pads = []
    for size, k, s in ((out.shape[1], weight.shape[1], sh), (out.shape[2], weight.shape[2], sw)):
        if padding == 0:  # SAME
            conv_out = (size + s - 1) // s
        elif padding == 1:  # VALID
            conv_out = (size - k + s) // s
        else:
            raise ctx.fail(f"unknown padding kind {padding}")
        pads.append(max((conv_out - 1) * s + k - size, 0) // 2)
    return "transpose_conv2d", [data, weight, bias], {
        "strides": (sh, sw), "padding": tuple(pads), "output_size": tuple(out.shape[1:3])}


def _batch_matmul(ctx: _OpContext):
    """BATCH_MATMUL(lhs, rhs): float32, int8 or int16 (zero points 0) as TFLM."""
    lhs, rhs = ctx.inputs(2)
    out = ctx.output_type()
    if lhs.dtype not in ("float32", "int8", "int16") or rhs.dtype != lhs.dtype \
            or out.dtype != lhs.dtype:
        raise ctx.fail(f"{lhs.dtype} x {rhs.dtype} -> {out.dtype}: not supported (TFLM "
                       "multiplies float32, int8 or int16 operands into their own type)")
    if lhs.dtype == "int16" and any(t.quant is not None and any(t.quant.zero_point)
                                    for t in (lhs, rhs, out)):
        raise ctx.fail("int16 operands need zero points 0 (as TFLM)")
    if ctx.opt(2, "?", False):
        raise ctx.fail("asymmetric_quantize_inputs (hybrid) is not supported")
    return "batch_matmul", [lhs, rhs], {"adj_x": bool(ctx.opt(0, "?", False)),
                                        "adj_y": bool(ctx.opt(1, "?", False))}


def _pool(ir_op: str):
    def convert(ctx: _OpContext):
        (data,) = ctx.inputs(1)
        kw, kh = ctx.opt(3, "i", 0), ctx.opt(4, "i", 0)
        if kw < 1 or kh < 1:
            raise ctx.fail(f"pool size must be at least 1, got {kh}x{kw}")
        attrs = _window_attrs(ctx, data, kh, kw)
        attrs.update(pool_size=(kh, kw), activation=ctx.activation(5))
        qi, qo = data.quant, ctx.output_type().quant
        if qi is not None and qo is not None and (
                np.float32(qi.scale[0]) != np.float32(qo.scale[0])
                or qi.zero_point[0] != qo.zero_point[0]):
            raise ctx.fail(f"input (scale {qi.scale[0]:g}, zero point {qi.zero_point[0]}) and "
                           f"output (scale {qo.scale[0]:g}, zero point {qo.zero_point[0]}) "
                           "quantized differently: not supported (TFLM pools on one "
                           "quantization)")
        return ir_op, [data], attrs
    return convert


def _l2_pool(ctx: _OpContext):
    data = ctx.input(0)
    if data.dtype != "float32":
        raise ctx.fail(f"{data.dtype} input: not supported (TFLM pools float32 only)")
    return _pool("l2_pool2d")(ctx)


def _binary(ir_op: str, has_activation: bool):
    def convert(ctx: _OpContext):
        inputs = ctx.inputs(2)
        attrs = {"activation": ctx.activation(0)} if has_activation else {}
        return ir_op, inputs, attrs
    return convert


def _plain(ir_op: str, count: int):
    """An operator whose inputs pass through and that has no options."""
    def convert(ctx: _OpContext):
        return ir_op, ctx.inputs(count), {}
    return convert


def _plain_n(ir_op: str):
    """An operator of any number of inputs that pass through, with no options."""
    def convert(ctx: _OpContext):
        return ir_op, [ctx.input(i) for i in range(len(ctx.in_idx))], {}
    return convert


def _arg_extreme(ir_op: str):
    """ARG_MAX, ARG_MIN: one constant axis, int32 indices."""
    def convert(ctx: _OpContext):
        axis = ctx.const(1, "axis").reshape(-1)
        if axis.size != 1:
            raise ctx.fail("axis must hold one value")
        if ctx.output_type().dtype != "int32":
            raise ctx.fail(f"{ctx.output_type().dtype} output: not supported yet (int32 only)")
        return ir_op, [ctx.input(0)], {"axis": int(axis[0])}
    return convert


def _cumsum(ctx: _OpContext):
    """CUMSUM(data, axis): float32 or int8, a constant axis, CumsumOptions."""
    data = ctx.input(0)
    if data.dtype not in ("float32", "int8"):
        raise ctx.fail(f"{data.dtype} data: not supported (TFLM sums float32 and int8)")
    axis = ctx.const(1, "axis").reshape(-1)
    if axis.size != 1:
        raise ctx.fail("axis must hold one value")
    return "cumsum", [data], {"axis": int(axis[0]), "exclusive": bool(ctx.opt(0, "?", False)),
                              "reverse": bool(ctx.opt(1, "?", False))}


_CAST_TYPES = ("float32", "int8", "int16", "int32", "bool")  # TFLM's, to and from


def _cast(ctx: _OpContext):
    out = ctx.output_type().dtype
    if out not in _CAST_TYPES:
        raise ctx.fail(f"{out} output: not supported (TFLM casts to {', '.join(_CAST_TYPES)})")
    return "cast", [ctx.input(0)], {"dtype": out}


def _unquantized(ir_op: str, activation_slot: int | None = None):
    """Arithmetic done here on float32 only: other operands are refused."""
    def convert(ctx: _OpContext):
        inputs = [ctx.input(i) for i in range(len(ctx.in_idx))]
        for t in inputs:
            if t.dtype != "float32":
                raise ctx.fail(f"{t.dtype} operands: not supported yet (float32 only)")
        attrs = {} if activation_slot is None else {"activation": ctx.activation(activation_slot)}
        return ir_op, inputs, attrs
    return convert


def _squared_difference(ctx: _OpContext):
    """SQUARED_DIFFERENCE(a, b): float32, int32, int8, int16 (zero points 0), as TFLM."""
    a, b = ctx.inputs(2)
    if a.dtype == "int16":
        for what, t in (("input 1", b.type), ("output", ctx.output_type())):
            if t.quant is not None and any(t.quant.zero_point):
                raise ctx.fail(f"int16 {what} with zero point {t.quant.zero_point[0]}: not "
                               "supported (TFLM's int16 SQUARED_DIFFERENCE needs zero "
                               "points 0)")
        _int16_zero_points(ctx, a)
    return "squared_difference", [a, b], {}


def _abs(ctx: _OpContext):
    """ABS: float32, int8 (quantized) or int16 (zero points 0, or not quantized), as TFLM."""
    data = ctx.input(0)
    out = ctx.output_type()
    if data.dtype == "int8" and (data.quant is None or out.quant is None):
        raise ctx.fail("int8 input and output must be quantized")
    if data.dtype == "int16" and (data.quant is None) != (out.quant is None):
        raise ctx.fail("int16 input and output must both be quantized or both not")
    _int16_zero_points(ctx, data)
    return "abs", [data], {}


def _rsqrt(ctx: _OpContext):
    """RSQRT: float32, or int8 or int16 (zero points 0) with its input and
    output quantized (TFLM's types)."""
    data = ctx.input(0)
    if data.dtype in ("int8", "int16") and (data.quant is None
                                             or ctx.output_type().quant is None):
        raise ctx.fail(f"{data.dtype} input and output must be quantized")
    _int16_zero_points(ctx, data)
    return "rsqrt", [data], {}


def _float_unary(ir_op: str):
    """Elementwise float32 functions; their quantized variants are refused."""
    def convert(ctx: _OpContext):
        data = ctx.input(0)
        if data.dtype != "float32":
            raise ctx.fail(f"{data.dtype} input: not supported yet (float32 only)")
        return ir_op, [data], {}
    return convert


def _unary(ir_op: str):
    def convert(ctx: _OpContext):
        return ir_op, [ctx.input(0)], {}
    return convert


def _float_int8(ir_op: str, count: int = 1):
    """HARD_SWISH, ELU, PRELU: float32 and int8 only, as TFLM (no int16 kernel there)."""
    def convert(ctx: _OpContext):
        inputs = ctx.inputs(count)
        if inputs[0].dtype not in ("float32", "int8"):
            raise ctx.fail(f"{inputs[0].dtype} input: not supported (TFLM runs float32 and "
                           "int8)")
        return ir_op, inputs, {}
    return convert


def _gelu(ctx: _OpContext):
    """GELU (GeluOptions.approximate): float32 or int8 with quantized input and
    output; TFLM has no kernel for it (aot's extension)."""
    data = ctx.input(0)
    if data.dtype not in ("float32", "int8"):
        raise ctx.fail(f"{data.dtype} input: not supported (aot runs GELU on float32 and int8)")
    if data.dtype == "int8" and (data.quant is None or ctx.output_type().quant is None):
        raise ctx.fail("int8 input and output must be quantized")
    return "gelu", [data], {"approximate": bool(ctx.opt(0, "?", False))}


def _sigmoid_like(ir_op: str):
    """LOGISTIC, TANH: int16 in Q0.15 out, as TFLM (other types as the IR checks)."""
    def convert(ctx: _OpContext):
        data = ctx.input(0)
        _fixed_int16_output(ctx, data)
        return ir_op, [data], {}
    return convert


def _relu(ir_op: str):
    """RELU, RELU6: float32, int8 and int16 (as TFLM)."""
    def convert(ctx: _OpContext):
        data = ctx.input(0)
        if data.dtype not in ("float32", "int8", "int16"):
            raise ctx.fail(f"{data.dtype} input: not supported (float32, int8 and int16)")
        if ir_op == "relu":  # TFLM's int16 RELU refuses other zero points
            _int16_zero_points(ctx, data)
        return ir_op, [data], {}
    return convert


def _reshape(ctx: _OpContext):
    # The output tensor's shape is authoritative (the shape input may hold -1).
    return "reshape", [ctx.input(0)], {"newshape": ctx.output_type().shape}


def _squeeze(ctx: _OpContext):
    data = ctx.input(0)
    table = ctx.options()
    dims = table.array(0, "i4") if table is not None else None
    if dims is None or len(dims) == 0:
        dims = [i for i, d in enumerate(data.shape) if d == 1]
    return "squeeze", [data], {"axes": tuple(int(d) for d in dims)}


def _expand_dims(ctx: _OpContext):
    axis = ctx.const(1, "axis").reshape(-1)
    if axis.size != 1:
        raise ctx.fail("axis must hold one value")
    return "expand_dims", [ctx.input(0)], {"axis": int(axis[0])}


def _softmax(ctx: _OpContext):
    data, out = ctx.input(0), ctx.output_type().dtype
    _fixed_int16_output(ctx, data)
    return "softmax", [data], {"beta": ctx.opt(0, "f", 0.0),
                               "out_dtype": "same" if out == data.dtype else out}


def _row_normalization(ir_op: str, activation_slot: int | None):
    """LOG_SOFTMAX, L2_NORMALIZATION in float32 (other types not yet)."""
    def convert(ctx: _OpContext):
        data = ctx.input(0)
        if data.dtype != "float32":
            raise ctx.fail(f"{data.dtype} input: not supported yet (float32 only)")
        if activation_slot is not None and ctx.activation(activation_slot) != "none":
            raise ctx.fail(f"fused activation {ctx.activation(activation_slot)}: not supported "
                           "(TFLite requires none)")
        return ir_op, [data], {}
    return convert


def _log_softmax(ctx: _OpContext):
    """LOG_SOFTMAX: float32, or int8 into scale 16/256 and zero point 127 (TFLM's rule)."""
    data = ctx.input(0)
    if data.dtype == "int8":
        q = ctx.output_type().quant
        if q is None or q.is_per_axis or np.float32(q.scale[0]) != np.float32(16 / 256) \
                or q.zero_point[0] != 127:
            raise ctx.fail("an int8 output needs scale 16/256 and zero point 127 (as TFLM)")
        return "log_softmax", [data], {}
    return _row_normalization("log_softmax", None)(ctx)


def _l2_normalization(ctx: _OpContext):
    """L2_NORMALIZATION: float32, or int8 into scale 1/128 and zero point 0 (TFLM's rule)."""
    data = ctx.input(0)
    if data.dtype == "int8":
        q = ctx.output_type().quant
        if q is None or q.is_per_axis or np.float32(q.scale[0]) != np.float32(1 / 128) \
                or q.zero_point[0] != 0:
            raise ctx.fail("an int8 output needs scale 1/128 and zero point 0 (as TFLM)")
        if ctx.activation(0) != "none":
            raise ctx.fail(f"fused activation {ctx.activation(0)}: not supported (TFLite "
                           "requires none)")
        return "l2_normalization", [data], {}
    return _row_normalization("l2_normalization", 0)(ctx)


def _leaky_relu(ctx: _OpContext):
    data = ctx.input(0)
    if data.dtype not in ("float32", "int8", "int16"):
        raise ctx.fail(f"{data.dtype} input: not supported (float32, int8 and int16)")
    return "leaky_relu", [data], {"alpha": ctx.opt(0, "f", 0.0)}


def _quantize(ctx: _OpContext):
    return "quantize", [ctx.input(0)], {"out_dtype": ctx.output_type().dtype}


def _quant_text(q: Quantization | None) -> str:
    return "not quantized" if q is None else \
        f"scale {float(q.scale[0]):.9g}, zero point {int(q.zero_point[0])}"


def _concatenate(ctx: _OpContext):
    """TFLM copies the integers raw: int8 operands must share one quantization
    (its kernel refuses others), int16 ones may differ in scale (zero point 0)."""
    inputs = [ctx.input(i) for i in range(len(ctx.in_idx))]
    activation = ctx.activation(1)
    if activation != "none":
        raise ctx.fail(f"fused activation {activation.upper()}: not supported (TFLM "
                       "concatenates without one)")
    out = ctx.output_type()
    for k, t in enumerate(inputs):
        if t.dtype == "int16" and t.quant is not None and any(t.quant.zero_point):
            raise ctx.fail(f"int16 input {t.name!r} with zero point {t.quant.zero_point[0]}: "
                           "not supported (TFLM concatenates int16 with zero point 0)")
        if t.dtype == "int8" and t.quant != out.quant:
            raise ctx.fail(f"int8 input {k} ({_quant_text(t.quant)}) quantized differently "
                           f"from the output ({_quant_text(out.quant)}): not supported (TFLM "
                           "concatenates int8 operands of one quantization; int16 ones may "
                           "differ in scale)")
    return "concatenate", inputs, {"axis": ctx.opt(0, "i", 0), "activation": activation}


def _pad(ctx: _OpContext):
    data = ctx.input(0)
    pads = ctx.const(1, "paddings")
    if pads.shape != (data.type.rank, 2):
        raise ctx.fail(f"paddings must have shape [{data.type.rank}, 2], got {list(pads.shape)}")
    attrs = {"pad_width": tuple((int(a), int(b)) for a, b in pads)}
    if len(ctx.in_idx) > 2 and ctx.in_idx[2] >= 0:  # PADV2's constant value
        value = ctx.const(2, "constant value").reshape(-1)
        if value.size != 1:
            raise ctx.fail("the constant value must hold one element")
        out = ctx.output_type()
        if data.quant is not None:
            const = ctx.input(2)
            if const.quant != out.quant:
                # TFLM writes the constant's integer raw, so it must be in the output's terms
                raise ctx.fail(f"constant value ({_quant_text(const.quant)}) quantized "
                               f"differently from the output ({_quant_text(out.quant)}): "
                               "not supported (TFLM pads with a constant of the output's "
                               "quantization)")
        q = out.quant
        real = float(value[0]) if q is None else q.scale[0] * (int(value[0]) - q.zero_point[0])
        attrs["value"] = real
    return "pad", [data], attrs


def _reduce(ir_op: str):
    """MEAN, SUM, REDUCE_ALL, REDUCE_MAX, REDUCE_MIN: constant axes, ReducerOptions.keep_dims."""
    def convert(ctx: _OpContext):
        data = ctx.input(0)
        out = ctx.output_type()
        if ir_op in ("reduce_max", "reduce_min") and data.quant != out.quant:
            raise ctx.fail(f"input ({_quant_text(data.quant)}) and output "
                           f"({_quant_text(out.quant)}) "
                           "quantized differently: not supported (TFLM fails the invocation)")
        axes = ctx.const(1, "axes").reshape(-1)
        return ir_op, [data], {"axes": tuple(int(a) for a in axes),
                               "keepdims": bool(ctx.opt(0, "?", False))}
    return convert


def _strided_slice(ctx: _OpContext):
    data = ctx.input(0)
    rank = data.type.rank
    begin, end, strides = (ctx.const(i, n).reshape(-1) for i, n in
                           ((1, "begin"), (2, "end"), (3, "strides")))
    if not len(begin) == len(end) == len(strides) == rank:
        raise ctx.fail(f"begin, end and strides need {rank} entries each")
    masks = [ctx.opt(i, "i", 0) for i in range(5)]
    begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask = masks
    if ellipsis_mask or new_axis_mask:
        raise ctx.fail("ellipsis and new-axis masks are not supported")
    if ctx.opt(5, "?", False):
        raise ctx.fail("the offset option is not supported")
    b_out, e_out, s_out, squeeze = [], [], [], []
    for axis in range(rank):
        dim = data.shape[axis]
        b, e, s = int(begin[axis]), int(end[axis]), int(strides[axis])
        if s == 0:
            raise ctx.fail(f"stride 0 on axis {axis}")
        if shrink_mask >> axis & 1:
            b = b + dim if b < 0 else b
            if not 0 <= b < dim:
                raise ctx.fail(f"index {int(begin[axis])} is out of range on axis {axis}")
            b_out.append(b)
            e_out.append(b + 1)
            s_out.append(1)
            squeeze.append(axis)
            continue
        lo, hi = (0, dim) if s > 0 else (-1, dim - 1)
        b = (lo if s > 0 else hi) if begin_mask >> axis & 1 else b
        e = (hi if s > 0 else lo) if end_mask >> axis & 1 else e
        b = min(max(b + dim if b < 0 and not (begin_mask >> axis & 1) else b, lo), hi)
        e = min(max(e + dim if e < 0 and not (end_mask >> axis & 1) else e, lo), hi)
        # Python slicing reads -1 as "last"; "before the first" is -(dim + 1).
        b_out.append(b if b >= 0 else -(dim + 1))
        e_out.append(e if e >= 0 else -(dim + 1))
        s_out.append(s)
    return "strided_slice", [data], {"begin": tuple(b_out), "end": tuple(e_out),
                                     "strides": tuple(s_out), "squeeze_axes": tuple(squeeze)}


def _transpose(ctx: _OpContext):
    perm = ctx.const(1, "permutation").reshape(-1)
    return "transpose", [ctx.input(0)], {"perm": tuple(int(p) for p in perm)}


# ------------------------------------------------- lowered into data movement
# These operators copy elements without arithmetic, so TFLM requires (and
# the IR keeps) one quantization for input and outputs.  Each becomes a few
# injective IR operators (strided_slice, reshape, transpose, pad,
# concatenate) that the fusion pass merges into one loop nest.

def _slice_one(ctx: _OpContext, data: Tensor, begin, end, *, squeeze=(),
               output: int = 0) -> Tensor:
    """``data[begin:end]`` (unit strides) written to the operator's output ``output``."""
    return ctx.emit("strided_slice", [data],
                    {"begin": tuple(begin), "end": tuple(end),
                     "strides": (1,) * len(begin), "squeeze_axes": tuple(squeeze)},
                    output=output)


def _axis_value(ctx: _OpContext, i: int, rank: int) -> int:
    axis = ctx.const(i, "axis").reshape(-1)
    if axis.size != 1:
        raise ctx.fail("axis must hold one value")
    a = int(axis[0])
    if not -rank <= a < rank:
        raise ctx.fail(f"axis {a} is out of range for rank {rank}")
    return a % rank


def _split_pieces(ctx: _OpContext, data: Tensor, axis: int, sizes: list[int]) -> None:
    if len(sizes) != len(ctx.out_idx):
        raise ctx.fail(f"splits into {len(sizes)} pieces but has {len(ctx.out_idx)} outputs")
    start = 0
    for k, size in enumerate(sizes):
        begin = [0] * data.type.rank
        end = list(data.shape)
        begin[axis], end[axis] = start, start + size
        _slice_one(ctx, data, begin, end, output=k)
        start += size


def _split(ctx: _OpContext):
    """SPLIT(axis, data): equal pieces along ``axis``."""
    data = ctx.input(1)
    axis = _axis_value(ctx, 0, data.type.rank)
    n = ctx.opt(0, "i", len(ctx.out_idx))
    if n <= 0 or data.shape[axis] % n:
        raise ctx.fail(f"cannot split axis {axis} of size {data.shape[axis]} into {n} pieces")
    _split_pieces(ctx, data, axis, [data.shape[axis] // n] * n)


def _split_v(ctx: _OpContext):
    """SPLIT_V(data, size_splits, axis): pieces of the given sizes (one may be -1)."""
    data = ctx.input(0)
    axis = _axis_value(ctx, 2, data.type.rank)
    sizes = [int(v) for v in ctx.const(1, "size_splits").reshape(-1)]
    dim = data.shape[axis]
    if sizes.count(-1) > 1 or any(v < -1 for v in sizes):
        raise ctx.fail(f"size_splits {sizes} may hold one -1 and no other negative size")
    if -1 in sizes:
        sizes[sizes.index(-1)] = dim - (sum(sizes) + 1)
    if sum(sizes) != dim or any(v < 0 for v in sizes):
        raise ctx.fail(f"size_splits {sizes} do not add up to axis {axis}'s size {dim}")
    _split_pieces(ctx, data, axis, sizes)


def _slice(ctx: _OpContext):
    """SLICE(data, begin, size): ``size`` -1 runs to the end of the axis."""
    data = ctx.input(0)
    begin = [int(v) for v in ctx.const(1, "begin").reshape(-1)]
    size = [int(v) for v in ctx.const(2, "size").reshape(-1)]
    rank = data.type.rank
    if len(begin) != rank or len(size) != rank:
        raise ctx.fail(f"begin and size need {rank} entries each")
    end = []
    for axis, (b, n, d) in enumerate(zip(begin, size, data.shape)):
        e = d if n == -1 else b + n
        if not 0 <= b <= e <= d or n < -1:
            raise ctx.fail(f"begin {b} and size {n} do not fit axis {axis} of size {d}")
        end.append(e)
    _slice_one(ctx, data, begin, end)


def _unpack(ctx: _OpContext):
    """UNPACK: the slices along ``axis``, each with the axis removed."""
    data = ctx.input(0)
    rank = data.type.rank
    axis = ctx.opt(1, "i", 0)
    if not -rank <= axis < rank:
        raise ctx.fail(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    if data.shape[axis] != len(ctx.out_idx):
        raise ctx.fail(f"axis {axis} has {data.shape[axis]} slices but the operator has "
                       f"{len(ctx.out_idx)} outputs")
    for k in range(data.shape[axis]):
        begin, end = [0] * rank, list(data.shape)
        begin[axis], end[axis] = k, k + 1
        _slice_one(ctx, data, begin, end, squeeze=(axis,), output=k)


def _pack(ctx: _OpContext):
    """PACK: the inputs stacked along a new ``axis``."""
    values = [ctx.input(i) for i in range(len(ctx.in_idx))]
    rank = values[0].type.rank + 1
    axis = ctx.opt(1, "i", 0)
    if not -rank <= axis < rank:
        raise ctx.fail(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    expanded = [ctx.emit("expand_dims", [v], {"axis": axis}) for v in values]
    ctx.emit("concatenate", expanded, {"axis": axis}, output=0)


def _reverse_v2(ctx: _OpContext):
    """REVERSE_V2(data, axes): a slice with step -1 on each listed axis."""
    data = ctx.input(0)
    rank = data.type.rank
    axes = set()
    for a in ctx.const(1, "axes").reshape(-1):
        if not -rank <= int(a) < rank:
            raise ctx.fail(f"axis {int(a)} is out of range for rank {rank}")
        axes.add(int(a) % rank)
    begin = [d - 1 if a in axes else 0 for a, d in enumerate(data.shape)]
    end = [-(d + 1) if a in axes else d for a, d in enumerate(data.shape)]
    strides = [-1 if a in axes else 1 for a in range(rank)]
    ctx.emit("strided_slice", [data], {"begin": tuple(begin), "end": tuple(end),
                                       "strides": tuple(strides)}, output=0)


def _nhwc(ctx: _OpContext, t: Tensor) -> tuple[int, int, int, int]:
    if t.type.rank != 4:
        raise ctx.fail(f"expects a 4-D NHWC tensor, got {list(t.shape)}")
    return tuple(t.shape)


def _block(ctx: _OpContext) -> int:
    b = ctx.opt(0, "i", 0)
    if b < 1:
        raise ctx.fail(f"block_size must be at least 1, got {b}")
    return b


def _space_to_depth(ctx: _OpContext):
    """[n, h, w, c] -> [n, h/b, w/b, b*b*c]; depth index (i*b + j)*c + k."""
    data = ctx.input(0)
    n, h, w, c = _nhwc(ctx, data)
    b = _block(ctx)
    if h % b or w % b:
        raise ctx.fail(f"height {h} and width {w} must be multiples of block_size {b}")
    t = ctx.emit("reshape", [data], {"newshape": (n, h // b, b, w // b, b, c)})
    t = ctx.emit("transpose", [t], {"perm": (0, 1, 3, 2, 4, 5)})
    ctx.emit("reshape", [t], {"newshape": (n, h // b, w // b, b * b * c)}, output=0)


def _depth_to_space(ctx: _OpContext):
    """[n, h, w, b*b*c] -> [n, h*b, w*b, c], the inverse of SPACE_TO_DEPTH."""
    data = ctx.input(0)
    n, h, w, c = _nhwc(ctx, data)
    b = _block(ctx)
    if c % (b * b):
        raise ctx.fail(f"depth {c} must be a multiple of block_size {b} squared")
    t = ctx.emit("reshape", [data], {"newshape": (n, h, w, b, b, c // (b * b))})
    t = ctx.emit("transpose", [t], {"perm": (0, 1, 3, 2, 4, 5)})
    ctx.emit("reshape", [t], {"newshape": (n, h * b, w * b, c // (b * b))}, output=0)


def _block_shape(ctx: _OpContext, data: Tensor) -> tuple[int, int]:
    block = [int(v) for v in ctx.const(1, "block_shape").reshape(-1)]
    if data.type.rank != 4 or len(block) != 2 or min(block) < 1:
        raise ctx.fail(f"supported: 4-D NHWC data with a 2-D block_shape of positive sizes; "
                       f"got data {list(data.shape)} and block_shape {block}")
    return block[0], block[1]


def _pairs(ctx: _OpContext, i: int, what: str) -> list[tuple[int, int]]:
    v = ctx.const(i, what)
    if v.shape != (2, 2) or v.min() < 0:
        raise ctx.fail(f"{what} must be a [2, 2] tensor of non-negative sizes, got "
                       f"{v.tolist()}")
    return [(int(a), int(b)) for a, b in v]


def _space_to_batch_nd(ctx: _OpContext):
    """Pad H and W (with the zero point), then move each block offset to the batch:
    output batch (i*bw + j)*n + b holds input pixel (y*bh + i, x*bw + j)."""
    data = ctx.input(0)
    bh, bw = _block_shape(ctx, data)
    (pt, pb), (pl, pr) = _pairs(ctx, 2, "paddings")
    n, h, w, c = data.shape
    h2, w2 = h + pt + pb, w + pl + pr
    if h2 % bh or w2 % bw:
        raise ctx.fail(f"padded height {h2} and width {w2} must be multiples of the block "
                       f"{bh}x{bw}")
    t = data
    if pt or pb or pl or pr:
        # Real 0.0, i.e. the zero point, as TFLite's kernel pads.  TFLM's
        # kernel never sets its pad value (SpaceToBatchParams.output_offset
        # is left as the arena held it), so its padded elements are undefined.
        t = ctx.emit("pad", [t], {"pad_width": ((0, 0), (pt, pb), (pl, pr), (0, 0))})
    t = ctx.emit("reshape", [t], {"newshape": (n, h2 // bh, bh, w2 // bw, bw, c)})
    t = ctx.emit("transpose", [t], {"perm": (2, 4, 0, 1, 3, 5)})
    ctx.emit("reshape", [t], {"newshape": (bh * bw * n, h2 // bh, w2 // bw, c)}, output=0)


def _batch_to_space_nd(ctx: _OpContext):
    """The inverse of SPACE_TO_BATCH_ND, then ``crops`` cut from H and W."""
    data = ctx.input(0)
    bh, bw = _block_shape(ctx, data)
    (ct, cb), (cl, cr) = _pairs(ctx, 2, "crops")
    nb, h, w, c = data.shape
    if nb % (bh * bw):
        raise ctx.fail(f"batch {nb} must be a multiple of the block {bh}x{bw}")
    n = nb // (bh * bw)
    if ct + cb >= h * bh or cl + cr >= w * bw:
        raise ctx.fail(f"crops {[[ct, cb], [cl, cr]]} leave nothing of {h * bh}x{w * bw}")
    t = ctx.emit("reshape", [data], {"newshape": (bh, bw, n, h, w, c)})
    t = ctx.emit("transpose", [t], {"perm": (2, 3, 0, 4, 1, 5)})
    full = (n, h * bh, w * bw, c)
    if not (ct or cb or cl or cr):
        ctx.emit("reshape", [t], {"newshape": full}, output=0)
        return
    t = ctx.emit("reshape", [t], {"newshape": full})
    _slice_one(ctx, t, (0, ct, cl, 0), (n, full[1] - cb, full[2] - cr, c))


def _mirror_pad(ctx: _OpContext):
    data = ctx.input(0)
    pads = ctx.const(1, "paddings")
    if pads.shape != (data.type.rank, 2):
        raise ctx.fail(f"paddings must have shape [{data.type.rank}, 2], got {list(pads.shape)}")
    mode = {0: "reflect", 1: "symmetric"}.get(ctx.opt(0, "b", 0))
    if mode is None:
        raise ctx.fail(f"mode {ctx.opt(0, 'b', 0)} is not REFLECT (0) or SYMMETRIC (1)")
    return "mirror_pad", [data], {"pad_width": tuple((int(a), int(b)) for a, b in pads),
                                  "mode": mode}


def _broadcast_to(ctx: _OpContext):
    shape = tuple(int(d) for d in ctx.const(1, "shape").reshape(-1))
    return "broadcast_to", [ctx.input(0)], {"shape": shape}


def _resize_nearest(ctx: _OpContext):
    size = [int(d) for d in ctx.const(1, "size").reshape(-1)]
    if len(size) != 2:
        raise ctx.fail(f"size must hold (height, width), got {size}")
    return "resize_nearest", [ctx.input(0)], {
        "size": tuple(size), "align_corners": bool(ctx.opt(0, "?", False)),
        "half_pixel_centers": bool(ctx.opt(1, "?", False))}


def _gather(ctx: _OpContext):
    """GATHER(data, indices): float32 or int8 data, int32 indices (TFLM's types)."""
    data, indices = ctx.inputs(2)
    if data.dtype not in ("float32", "int8"):
        raise ctx.fail(f"{data.dtype} data: not supported (TFLM gathers float32 and int8)")
    if indices.dtype != "int32":
        raise ctx.fail(f"{indices.dtype} indices: not supported (TFLM takes int32)")
    axis = ctx.opt(0, "i", 0)
    rank = data.type.rank
    if indices.kind == "constant" and indices.data.size and -rank <= axis < rank:
        size = data.shape[axis]
        bad = indices.data[(indices.data < 0) | (indices.data >= size)].reshape(-1)
        if bad.size:
            raise ctx.fail(f"index {int(bad[0])} is out of range for an axis of size {size}")
    return "gather", [data, indices], {"axis": axis, "batch_dims": ctx.opt(1, "i", 0)}


def _gather_nd(ctx: _OpContext):
    """GATHER_ND(data, indices): float32 or int8 data, int32 indices (TFLM's types)."""
    data, indices = ctx.inputs(2)
    if data.dtype not in ("float32", "int8"):
        raise ctx.fail(f"{data.dtype} data: not supported (TFLM gathers float32 and int8)")
    if indices.dtype != "int32":
        raise ctx.fail(f"{indices.dtype} indices: not supported (TFLM takes int32)")
    if indices.kind == "constant" and indices.data.size and indices.type.rank >= 1:
        for k in range(min(indices.shape[-1], data.type.rank)):
            col = indices.data[..., k]
            if col.min() < 0 or col.max() >= data.shape[k]:
                bad = col[(col < 0) | (col >= data.shape[k])].reshape(-1)[0]
                raise ctx.fail(f"index {int(bad)} is out of range for axis {k} of size "
                               f"{data.shape[k]}")
    return "gather_nd", [data, indices], {}


def _embedding_lookup(ctx: _OpContext):
    """EMBEDDING_LOOKUP(ids, table): rows of the table (a GATHER on axis 0);
    an int8 table read into a float32 output is dequantized (zero point 0)."""
    ids, table = ctx.inputs(2)
    out = ctx.output_type()
    if ids.dtype != "int32" or ids.type.rank != 1:
        raise ctx.fail(f"the ids must be a 1-D int32 tensor, got {ids.type}")
    if table.type.rank < 2:
        raise ctx.fail(f"the table must have at least 2 axes, got {list(table.shape)}")
    pairs = {("float32", "float32"), ("int8", "int8"), ("int8", "float32")}
    if (table.dtype, out.dtype) not in pairs:
        raise ctx.fail(f"{table.dtype} table to {out.dtype} output: not supported (TFLM "
                       "reads float32 and int8 tables, into their own type or float32)")
    if table.dtype == "int8" and out.dtype == "float32":
        q = table.quant
        if q is None or q.is_per_axis or q.zero_point[0] != 0:
            raise ctx.fail("an int8 table read as float32 needs one scale and zero point 0 "
                           "(as TFLM)")
        rows = ctx.emit("gather", [table, ids], {"axis": 0})
        ctx.emit("dequantize", [rows], {}, output=0)
        return None
    if table.quant != out.quant:
        raise ctx.fail("table and output quantized differently: not supported (the rows are "
                       "copied raw)")
    ctx.emit("gather", [table, ids], {"axis": 0}, output=0)
    return None


# ------------------------------------------------- resource variables
# A VAR_HANDLE names a variable by (container, shared_name); it becomes a
# variable tensor (state kept between invocations, starting at its zero
# point or at the value CALL_ONCE's init subgraph assigns).  READ_VARIABLE
# copies the state out, ASSIGN_VARIABLE copies a value in; both are opaque
# nodes, so they run where the model puts them.  CALL_ONCE's init subgraph is
# read at import: its constant assignments become start values.

def _var_handle(ctx: _OpContext):
    if len(ctx.out_idx) != 1:
        raise ctx.fail(f"has {len(ctx.out_idx)} outputs, expected 1")
    table = ctx.options()
    container = (table.string(0) if table is not None else None) or ""
    shared = (table.string(1) if table is not None else None) or ""
    ctx.imp.resources[ctx.out_idx[0]] = (container, shared)
    ctx.resolved = True


def _read_variable(ctx: _OpContext):
    var = ctx.imp.variable(ctx, ctx.imp.resource_key(ctx, 0), ctx.output_type())
    return "read_variable", [var], {}


def _assign_variable(ctx: _OpContext):
    value = ctx.input(1)
    var = ctx.imp.variable(ctx, ctx.imp.resource_key(ctx, 0), value.type)
    ctx.emit("assign_variable", [var, value], {})
    return None


def _if(ctx: _OpContext):
    """IF(cond, args...): both branch subgraphs are imported in place and each
    output selects the taken branch's value (``select``), so both branches
    run; they must not assign variables (their effects would both happen)."""
    cond = ctx.input(0)
    if cond.dtype != "bool" or cond.type.size != 1:
        raise ctx.fail(f"the condition must be one bool, got {cond.type}")
    args = [ctx.input(i) for i in range(1, len(ctx.in_idx))]
    branches = []
    for slot, name in ((0, "then"), (1, "else")):
        nodes, outs = ctx.imp.inline_subgraph(ctx.opt(slot, "i", 0), args, ctx.where,
                                              f"{ctx.imp.prefix}{ctx.index}.{name}/")
        if any(n.op == "assign_variable" for n in nodes):
            raise ctx.fail(f"the {name} branch assigns a variable: not supported (both "
                           "branches run here)")
        if len(outs) != len(ctx.out_idx):
            raise ctx.fail(f"the {name} branch gives {len(outs)} outputs, the operator has "
                           f"{len(ctx.out_idx)}")
        ctx.steps.extend(nodes)
        branches.append(outs)
    for k, (a, b) in enumerate(zip(*branches)):
        out = ctx.output_type(k)
        if not a.type == b.type == out:
            raise ctx.fail(f"output {k}: the branches give {a.type} and {b.type}, the operator "
                           f"declares {out}: not supported (one type and quantization)")
        ctx.emit("select", [cond, a, b], {}, output=k)
    return None


#: Iterations a WHILE loop may be unrolled to at import.
MAX_UNROLL = 256

#: IR operators the import-time evaluator folds when all their inputs are
#: unquantized constants (the arithmetic of a loop's counter and condition).
_FOLDABLE = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "less": np.less, "less_equal": np.less_equal, "greater": np.greater,
    "greater_equal": np.greater_equal, "equal": np.equal, "not_equal": np.not_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or,
    "logical_not": np.logical_not, "minimum": np.minimum, "maximum": np.maximum,
}


def _fold_nodes(nodes: list[Node], outs: list[Tensor]) -> tuple[list[Node], list[Tensor]]:
    """``nodes`` with those of :data:`_FOLDABLE` whose inputs are all
    unquantized int32, bool or float32 constants replaced by constants (int32
    wrapping as in C); ``outs`` mapped the same way."""
    mapping: dict[int, Tensor] = {}
    kept = []
    for node in nodes:
        ins = [mapping.get(id(t), t) if t is not None else None for t in node.inputs]
        fn = _FOLDABLE.get(node.op)
        if (fn is not None and node.attrs.get("activation", "none") == "none"
                and all(t is not None and t.kind == "constant" and t.quant is None
                        and t.dtype in ("int32", "bool", "float32") for t in ins)):
            y = node.outputs[0]
            with np.errstate(over="ignore"):
                value = fn(*[t.data.astype(np.int64) if t.dtype == "int32" else t.data
                             for t in ins])
            value = np.asarray(value)
            if y.dtype == "int32":
                value = (value + (1 << 31)) % (1 << 32) - (1 << 31)
            mapping[id(y)] = Tensor(y.name, y.type, "constant",
                                    value.astype(y.type.np_dtype).reshape(y.shape))
            continue
        kept.append(Node(node.op, ins, node.outputs, node.attrs, node.name)
                    if any(a is not b for a, b in zip(ins, node.inputs)) else node)
    return kept, [mapping.get(id(t), t) for t in outs]


def _while(ctx: _OpContext):
    """WHILE(vars...): unrolled at import when its trip count is known there:
    the condition subgraph, imported in place with the loop's current
    values, must fold to a constant (its counter arithmetic on constants,
    :data:`_FOLDABLE`); the body subgraph is imported once per iteration
    (at most :data:`MAX_UNROLL`), its outputs becoming the next values."""
    cond_i, body_i = ctx.opt(0, "i", 0), ctx.opt(1, "i", 0)
    values = [ctx.input(i) for i in range(len(ctx.in_idx))]
    prefix = f"{ctx.imp.prefix}{ctx.index}"
    for it in range(MAX_UNROLL + 1):
        nodes, outs = ctx.imp.inline_subgraph(cond_i, values, ctx.where, f"{prefix}.cond{it}/")
        if any(n.op == "assign_variable" for n in nodes):
            raise ctx.fail("the loop condition assigns a variable: not supported")
        _, outs = _fold_nodes(nodes, outs)
        if len(outs) != 1 or outs[0].kind != "constant" or outs[0].dtype != "bool" \
                or outs[0].type.size != 1:
            raise ctx.fail("the loop's condition depends on run-time values: not supported "
                           "yet (a loop is unrolled at import, so its trip count must be "
                           "known there)")
        if not bool(outs[0].data.reshape(-1)[0]):
            break
        if it == MAX_UNROLL:
            raise ctx.fail(f"the loop runs more than {MAX_UNROLL} times: not supported (it "
                           "is unrolled at import)")
        nodes, values = ctx.imp.inline_subgraph(body_i, values, ctx.where,
                                                f"{prefix}.body{it}/")
        if any(n.op == "assign_variable" for n in nodes):
            raise ctx.fail("the loop body assigns a variable: not supported yet")
        nodes, values = _fold_nodes(nodes, values)
        ctx.steps.extend(nodes)
    if len(values) != len(ctx.out_idx):
        raise ctx.fail(f"the loop gives {len(values)} values, the operator has "
                       f"{len(ctx.out_idx)} outputs")
    for k, v in enumerate(values):
        ctx.alias(k, v)
    return None


def _call_once(ctx: _OpContext):
    ctx.imp.run_init_subgraph(ctx.opt(0, "i", 0), ctx.where)
    ctx.resolved = True


# ------------------------------------------------------- folded at import
# Shapes are static here, so operators that compute shapes (and FILL with a
# constant value) give constants: the converter folds its output and emits
# no node.  Their consumers (RESHAPE, BROADCAST_TO) read the constants.

def _shape(ctx: _OpContext):
    """SHAPE: the input's dimensions, int32 (the one output type TFLM writes)."""
    data = ctx.input(0)
    out = ctx.output_type().dtype
    if out != "int32":
        raise ctx.fail(f"{out} output: not supported (TFLM writes int32 shapes)")
    ctx.fold(0, np.array(data.shape, np.int32))


def _broadcast_args(ctx: _OpContext):
    """BROADCAST_ARGS(s0, s1): the broadcast of two constant shapes."""
    a, b = ctx.inputs(2)
    for t in (a, b):
        if t.dtype not in ("int32", "int64") or t.type.rank != 1:
            raise ctx.fail(f"shapes must be 1-D int32 or int64 tensors, got {t.type}")
        if t.kind != "constant":
            raise ctx.fail(f"shape {t.name!r} is computed at run time: not supported yet "
                           "(dynamic shapes; only constant shapes are folded)")
    sa, sb = (tuple(int(v) for v in t.data) for t in (a, b))
    try:
        out = np.broadcast_shapes(sa, sb)
    except ValueError:
        raise ctx.fail(f"shapes {list(sa)} and {list(sb)} do not broadcast") from None
    ctx.fold(0, np.array(out))


def _fill(ctx: _OpContext):
    """FILL(dims, value): the output's shape filled with the scalar ``value``
    (a constant: folded; computed at run time: a broadcast of it)."""
    dims, value = ctx.inputs(2)
    out = ctx.output_type()
    if value.dtype not in ("float32", "int32", "int8") or value.dtype != out.dtype:
        raise ctx.fail(f"{value.dtype} value to {out.dtype} output: not supported (TFLM "
                       "fills float32, int32 and int8, of the value's type)")
    if value.type.rank != 0:
        raise ctx.fail(f"the value must be a scalar, got shape {list(value.shape)}")
    if dims.kind == "constant" and [int(d) for d in dims.data.reshape(-1)] != list(out.shape):
        raise ctx.fail(f"dims {dims.data.reshape(-1).tolist()} differ from the output's "
                       f"shape {list(out.shape)}")
    if value.quant != out.quant:
        raise ctx.fail("value and output quantized differently: not supported (FILL copies "
                       "the raw value)")
    if value.kind == "constant":
        ctx.fold(0, np.full(out.shape, value.data))
        return None
    ctx.emit("broadcast_to", [value], {"shape": out.shape}, output=0)
    return None


def _resize_bilinear(ctx: _OpContext):
    data = ctx.input(0)
    size = [int(d) for d in ctx.const(1, "size").reshape(-1)]
    if len(size) != 2:
        raise ctx.fail(f"size must hold (height, width), got {size}")
    if data.dtype not in ("float32", "int8"):
        raise ctx.fail(f"{data.dtype} data: not supported (TFLM resizes float32 and int8)")
    # a differently quantized output reads the interpolated integers raw, as TFLM's
    # slots 0 and 1 hold the deprecated new_height and new_width
    return "resize_bilinear", [data], {
        "size": tuple(size), "align_corners": bool(ctx.opt(2, "?", False)),
        "half_pixel_centers": bool(ctx.opt(3, "?", False))}


def _dynamic_update_slice(ctx: _OpContext):
    """DYNAMIC_UPDATE_SLICE(data, update, start): float32, int8, int16, int32 (TFLM's types);
    operands quantized differently are copied raw, as TFLM copies them."""
    data, update, start = ctx.inputs(3)
    if data.dtype not in ("float32", "int8", "int16", "int32"):
        raise ctx.fail(f"{data.dtype} data: not supported (TFLM updates float32, int8, int16 "
                       "and int32)")
    # data, update and output quantized differently: TFLM copies the integers raw
    return "dynamic_update_slice", [data, update, start], {}


# SVDF element types TFLM's kernels run: (input, feature weights, time weights,
# state, output).  TFLM picks its integer kernel by the time weights' type and
# reads the state as that type, so the two must agree.
_SVDF_TYPES = {("float32",) * 5: "float32",
               ("int8", "int8", "int16", "int16", "int8"): "int8 with int16 state",
               ("int8", "int8", "int8", "int8", "int8"): "int8 with int8 state"}


def _svdf(ctx: _OpContext):
    inputs = ctx.inputs(5)
    inputs[3] = ctx.input(3, optional=True)
    x, wf, wt, bias, state = inputs
    types = (x.dtype, wf.dtype, wt.dtype, state.dtype, ctx.output_type().dtype)
    if types not in _SVDF_TYPES:
        raise ctx.fail(f"{x.dtype} input, {wf.dtype} feature weights, {wt.dtype} time weights, "
                       f"{state.dtype} state and {types[4]} output: not supported (TFLM runs "
                       "float32 throughout, or int8 input, feature weights and output with "
                       "time weights and state both int16 or both int8; no hybrid SVDF)")
    want_bias = "float32" if x.dtype == "float32" else "int32"
    if bias is not None and bias.dtype != want_bias:
        raise ctx.fail(f"{bias.dtype} bias with {x.dtype} input: not supported (TFLM takes "
                       f"{want_bias} bias here)")
    rank = ctx.opt(0, "i", 0)
    return "svdf", inputs, {"rank": rank, "activation": ctx.activation(1)}


def _lstm(ctx: _OpContext):
    slots = ir_ops.LSTM_INPUTS
    if len(ctx.in_idx) not in (20, 24):
        raise ctx.fail(f"has {len(ctx.in_idx)} inputs, expected 20 or 24")
    inputs = [ctx.input(i, optional=slot.endswith("?"))
              for i, slot in enumerate(slots[:len(ctx.in_idx)])]
    inputs += [None] * (len(slots) - len(inputs))
    code = ctx.opt(0, "b", 4)
    act = {4: "tanh"}.get(code) or _ACTIVATIONS.get(code)
    if act not in ("none", "relu", "relu6", "tanh", "relu_n1_to_1"):
        raise ctx.fail(f"activation {act or code} is not supported")
    return "lstm", inputs, {
        "activation": act,
        "cell_clip": ctx.opt(1, "f", 0.0),
        "proj_clip": ctx.opt(2, "f", 0.0),
        "time_major": bool(ctx.opt(3, "?", False)),
    }


#: Each supported builtin: its converter, and the IR operators it becomes
#: (several when it is lowered; docs/operators.md and `aot operators` print
#: them, tests/frontend/test_tflite_lowered.py checks them against imports).
_CONVERTERS: dict[str, tuple[Callable[[_OpContext], tuple | None], tuple[str, ...]]] = {
    "CONV_2D": (_conv2d, ("conv2d",)),
    "DEPTHWISE_CONV_2D": (_depthwise_conv2d, ("depthwise_conv2d",)),
    "FULLY_CONNECTED": (_dense, ("dense",)),
    "BATCH_MATMUL": (_batch_matmul, ("batch_matmul",)),
    "TRANSPOSE_CONV": (_transpose_conv, ("transpose_conv2d",)),
    "AVERAGE_POOL_2D": (_pool("avg_pool2d"), ("avg_pool2d",)),
    "MAX_POOL_2D": (_pool("max_pool2d"), ("max_pool2d",)),
    "L2_POOL_2D": (_l2_pool, ("l2_pool2d",)),
    "ADD": (_binary("add", True), ("add",)),
    "SUB": (_binary("sub", True), ("sub",)),
    "MUL": (_binary("mul", True), ("mul",)),
    "MAXIMUM": (_binary("maximum", False), ("maximum",)),
    "MINIMUM": (_binary("minimum", False), ("minimum",)),
    "RESHAPE": (_reshape, ("reshape",)),
    "SQUEEZE": (_squeeze, ("squeeze",)),
    "EXPAND_DIMS": (_expand_dims, ("expand_dims",)),
    "SOFTMAX": (_softmax, ("softmax",)),
    "LOG_SOFTMAX": (_log_softmax, ("log_softmax",)),
    "L2_NORMALIZATION": (_l2_normalization, ("l2_normalization",)),
    "LOGISTIC": (_sigmoid_like("logistic"), ("logistic",)),
    "TANH": (_sigmoid_like("tanh"), ("tanh",)),
    "RELU": (_relu("relu"), ("relu",)),
    "RELU6": (_relu("relu6"), ("relu6",)),
    "LEAKY_RELU": (_leaky_relu, ("leaky_relu",)),
    "HARD_SWISH": (_float_int8("hard_swish"), ("hard_swish",)),
    "QUANTIZE": (_quantize, ("quantize",)),
    "DEQUANTIZE": (_unary("dequantize"), ("dequantize",)),
    "CONCATENATION": (_concatenate, ("concatenate",)),
    "PAD": (_pad, ("pad",)),
    "PADV2": (_pad, ("pad",)),
    "MEAN": (_reduce("mean"), ("mean",)),
    "EQUAL": (_plain("equal", 2), ("equal",)),
    "NOT_EQUAL": (_plain("not_equal", 2), ("not_equal",)),
    "GREATER": (_plain("greater", 2), ("greater",)),
    "GREATER_EQUAL": (_plain("greater_equal", 2), ("greater_equal",)),
    "LESS": (_plain("less", 2), ("less",)),
    "LESS_EQUAL": (_plain("less_equal", 2), ("less_equal",)),
    "LOGICAL_AND": (_plain("logical_and", 2), ("logical_and",)),
    "LOGICAL_OR": (_plain("logical_or", 2), ("logical_or",)),
    "LOGICAL_NOT": (_plain("logical_not", 1), ("logical_not",)),
    "SELECT_V2": (_plain("select", 3), ("select",)),
    "ABS": (_abs, ("abs",)),
    "NEG": (_float_unary("neg"), ("neg",)),
    "FLOOR": (_float_unary("floor"), ("floor",)),
    "CEIL": (_float_unary("ceil"), ("ceil",)),
    "ROUND": (_float_unary("round"), ("round",)),
    "SQRT": (_float_unary("sqrt"), ("sqrt",)),
    "RSQRT": (_rsqrt, ("rsqrt",)),
    "EXP": (_float_unary("exp"), ("exp",)),
    "LOG": (_float_unary("log"), ("log",)),
    "SIN": (_float_unary("sin"), ("sin",)),
    "COS": (_float_unary("cos"), ("cos",)),
    "SQUARE": (_float_unary("square"), ("square",)),
    "CAST": (_cast, ("cast",)),
    "ARG_MAX": (_arg_extreme("arg_max"), ("arg_max",)),
    "ARG_MIN": (_arg_extreme("arg_min"), ("arg_min",)),
    "PRELU": (_float_int8("prelu", 2), ("prelu",)),
    "ZEROS_LIKE": (_plain("zeros_like", 1), ("zeros_like",)),
    "ELU": (_float_int8("elu"), ("elu",)),
    "GELU": (_gelu, ("gelu",)),
    "DIV": (_unquantized("div", 0), ("div",)),
    "SQUARED_DIFFERENCE": (_squared_difference, ("squared_difference",)),
    "FLOOR_DIV": (_unquantized("floor_div"), ("floor_div",)),
    "FLOOR_MOD": (_unquantized("floor_mod"), ("floor_mod",)),
    "ADD_N": (_plain_n("add_n"), ("add_n",)),
    "SUM": (_reduce("sum"), ("sum",)),
    "REDUCE_ALL": (_reduce("reduce_all"), ("reduce_all",)),
    "CUMSUM": (_cumsum, ("cumsum",)),
    "REDUCE_MAX": (_reduce("reduce_max"), ("reduce_max",)),
    "REDUCE_MIN": (_reduce("reduce_min"), ("reduce_min",)),
    "SPLIT": (_split, ("strided_slice",)),
    "SPLIT_V": (_split_v, ("strided_slice",)),
    "SLICE": (_slice, ("strided_slice",)),
    "UNPACK": (_unpack, ("strided_slice",)),
    "PACK": (_pack, ("expand_dims", "concatenate")),
    "REVERSE_V2": (_reverse_v2, ("strided_slice",)),
    "SPACE_TO_DEPTH": (_space_to_depth, ("reshape", "transpose")),
    "DEPTH_TO_SPACE": (_depth_to_space, ("reshape", "transpose")),
    "SPACE_TO_BATCH_ND": (_space_to_batch_nd, ("pad", "reshape", "transpose")),
    "BATCH_TO_SPACE_ND": (_batch_to_space_nd, ("reshape", "transpose", "strided_slice")),
    "STRIDED_SLICE": (_strided_slice, ("strided_slice",)),
    "MIRROR_PAD": (_mirror_pad, ("mirror_pad",)),
    "BROADCAST_TO": (_broadcast_to, ("broadcast_to",)),
    "RESIZE_NEAREST_NEIGHBOR": (_resize_nearest, ("resize_nearest",)),
    "RESIZE_BILINEAR": (_resize_bilinear, ("resize_bilinear",)),
    "TRANSPOSE": (_transpose, ("transpose",)),
    "GATHER": (_gather, ("gather",)),
    "GATHER_ND": (_gather_nd, ("gather_nd",)),
    "DYNAMIC_UPDATE_SLICE": (_dynamic_update_slice, ("dynamic_update_slice",)),
    "EMBEDDING_LOOKUP": (_embedding_lookup, ("gather", "dequantize")),
    "SHAPE": (_shape, ()),
    "VAR_HANDLE": (_var_handle, ()),
    "CALL_ONCE": (_call_once, ()),
    "IF": (_if, ("select",)),
    "WHILE": (_while, ()),
    "READ_VARIABLE": (_read_variable, ("read_variable",)),
    "ASSIGN_VARIABLE": (_assign_variable, ("assign_variable",)),
    "BROADCAST_ARGS": (_broadcast_args, ()),
    "FILL": (_fill, ("broadcast_to",)),
    "SVDF": (_svdf, ("svdf",)),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": (_lstm, ("lstm",)),
}
assert set(_CONVERTERS) == set(BUILTIN_CODES)

_F, _I8, _I16, _I32, _I64, _B = "float32", "int8", "int16", "int32", "int64", "bool"
_ANY = None  # every element type the reader takes: the values are moved, never computed on
#: Each supported builtin's element types: the input slot whose type selects
#: TFLM's kernel, and the types aot runs there (``_ANY``: every type the reader
#: takes; an empty tuple: nothing typed runs, the builtin is resolved at import).
#: tests/frontend/test_tflite_tflm_types.py probes every TFLM builtin with a
#: typed operand: they are the types the pinned TFLM interpreter runs, less
#: and plus the few that test lists with reasons (AOT_NARROWER, AOT_WIDER).
#: The importer refuses any other type the converter lets through (converters
#: check finer things first: combinations of operand types, zero points);
#: docs/operators.md's types column is printed from this table.
ELEMENT_TYPES: dict[str, tuple[int, tuple[str, ...] | None]] = {
    **{b: (0, (_F, _I8, _I16)) for b in (
        "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "BATCH_MATMUL", "AVERAGE_POOL_2D",
        "MAX_POOL_2D", "SOFTMAX", "LOGISTIC", "TANH", "RELU", "RELU6", "LEAKY_RELU", "MEAN",
        "SUM", "REDUCE_MAX", "REDUCE_MIN", "QUANTIZE")},
    "TRANSPOSE_CONV": (2, (_F, _I8, _I16)),
    **{b: (0, (_F,)) for b in (
        "L2_POOL_2D", "NEG", "FLOOR", "CEIL", "ROUND", "SQRT", "EXP", "LOG",
        "SIN", "COS", "SQUARE", "DIV", "FLOOR_DIV", "FLOOR_MOD")},
    "ADD_N": (0, (_F, _I8)),
    "RSQRT": (0, (_F, _I8, _I16)),
    "ABS": (0, (_F, _I8, _I16)),
    "SQUARED_DIFFERENCE": (0, (_F, _I8, _I16, _I32)),
    **{b: (0, (_F, _I8, _I16, _I32)) for b in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM")},
    **{b: (0, (_F, _I8)) for b in (
        "LOG_SOFTMAX", "L2_NORMALIZATION", "HARD_SWISH", "PRELU", "ELU", "GELU", "CUMSUM",
        "GATHER", "GATHER_ND", "RESIZE_BILINEAR", "SVDF")},
    "UNIDIRECTIONAL_SEQUENCE_LSTM": (0, (_F, _I8, _I16)),
    "DEQUANTIZE": (0, (_I8, _I16, "uint8")),
    "GREATER": (0, (_F, _I8, _I16, _I32, _I64)),
    **{b: (0, (_F, _I8, _I32, _I64)) for b in ("GREATER_EQUAL", "LESS", "LESS_EQUAL")},
    **{b: (0, (_B, _F, _I8, _I32, _I64)) for b in ("EQUAL", "NOT_EQUAL")},
    **{b: (0, (_B,)) for b in ("LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT", "REDUCE_ALL")},
    "SELECT_V2": (1, (_F, _I8, _I16)),
    "ARG_MAX": (0, (_F, _I8)),
    "ARG_MIN": (0, (_F, _I8)),
    "ZEROS_LIKE": (0, (_F, _I8, _I32, _I64)),
    "CAST": (0, (_F, _I8, _I16, _I32, _B)),
    "DYNAMIC_UPDATE_SLICE": (0, (_F, _I8, _I16, _I32)),
    "EMBEDDING_LOOKUP": (1, (_F, _I8)),
    "FILL": (1, (_F, _I8, _I32)),
    "SPLIT": (1, (_F, _I8, _I16, _I32)),
    "ASSIGN_VARIABLE": (1, _ANY),
    "READ_VARIABLE": (0, ()),
    **{b: (0, _ANY) for b in ("RESHAPE", "SQUEEZE", "REVERSE_V2", "BROADCAST_TO")},
    **{b: (0, (_F, _I8, _I16)) for b in ("EXPAND_DIMS", "TRANSPOSE",
                                         "RESIZE_NEAREST_NEIGHBOR")},
    "CONCATENATION": (0, (_F, _I8, _I16, _I32, _I64, _B)),
    **{b: (0, (_F, _I8, _I16, _I32)) for b in ("PAD", "PADV2", "SPLIT_V", "UNPACK")},
    **{b: (0, (_F, _I8, _I16, _I32, _B)) for b in ("STRIDED_SLICE", "SLICE")},
    "PACK": (0, (_F, _I8, _I16, _I32, _I64)),
    **{b: (0, (_F, _I8)) for b in ("SPACE_TO_DEPTH", "DEPTH_TO_SPACE", "SPACE_TO_BATCH_ND",
                                   "BATCH_TO_SPACE_ND", "MIRROR_PAD")},
    **{b: (0, ()) for b in ("SHAPE", "VAR_HANDLE", "CALL_ONCE", "IF", "WHILE",
                            "BROADCAST_ARGS")},
}
assert set(ELEMENT_TYPES) == set(_CONVERTERS), set(_CONVERTERS) ^ set(ELEMENT_TYPES)


def element_types(builtin: str) -> str:
    """The element types aot runs ``builtin`` in, as docs/operators.md prints them."""
    slot, types = ELEMENT_TYPES[builtin]
    if builtin == "SVDF":
        return "; ".join(_SVDF_TYPES.values())
    if types is None:
        return "any"
    return ", ".join(types)


def _check_element_type(ctx: _OpContext, builtin: str) -> None:
    """Refuse a typed slot's element type that :data:`ELEMENT_TYPES` does not list."""
    slot, types = ELEMENT_TYPES[builtin]
    if not types or slot >= len(ctx.in_idx) or ctx.in_idx[slot] < 0:
        return
    t = ctx.input(slot)
    if t.dtype not in types:
        raise ctx.fail(f"{t.dtype} input {slot} ({t.name!r}): not supported (aot runs "
                       f"{builtin} on {', '.join(types)})")


def lowering(builtin: str) -> tuple[str, ...]:
    """The IR operators the TFLite builtin ``builtin`` is imported as (none:
    resolved at import, :data:`RESOLVED` says how when it is not a constant;
    a KeyError for builtins that are refused at import)."""
    return _CONVERTERS[builtin][1]
