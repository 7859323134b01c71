"""Build small ``.tflite`` models in memory, without TensorFlow.

Uses the flatbuffers object API of the schema module shipped in the
tflite-micro wheel.  A :class:`ModelBuilder` collects tensors and operators of
one subgraph and :meth:`ModelBuilder.finish` returns the serialized model::

    mb = ModelBuilder()
    x = mb.input("x", [1, 8, 8, 3], "int8", scale=0.05, zero_point=-3)
    w = mb.const("w", weights, scale=w_scales, zero_point=0, axis=0)
    b = mb.const("b", bias, scale=0.05 * w_scales, zero_point=0, axis=0)
    y = mb.output("y", [1, 8, 8, 4], "int8", scale=0.1, zero_point=2)
    mb.op("CONV_2D", [x, w, b], [y], padding="SAME", stride_w=1, stride_h=1)
    model_bytes = mb.finish()

Operator options are given as keyword arguments in snake_case and mapped to
the schema's camelCase fields of the operator's options table (see
``OPTIONS``); enum-valued options take their names (``padding="SAME"``,
``fused_activation_function="RELU6"``).
"""

from __future__ import annotations

from collections.abc import Sequence

import flatbuffers
import numpy as np

from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as fb

DTYPES = {
    "float32": (fb.TensorType.FLOAT32, np.float32),
    "int8": (fb.TensorType.INT8, np.int8),
    "uint8": (fb.TensorType.UINT8, np.uint8),
    "int16": (fb.TensorType.INT16, np.int16),
    "int32": (fb.TensorType.INT32, np.int32),
    "int64": (fb.TensorType.INT64, np.int64),
    "bool": (fb.TensorType.BOOL, np.bool_),
    "resource": (fb.TensorType.RESOURCE, None),  # VAR_HANDLE's output; never has data
}

# Builtin operator -> name of its options table (None: the operator has none
# that we set).
OPTIONS = {
    "CONV_2D": "Conv2DOptions",
    "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "FULLY_CONNECTED": "FullyConnectedOptions",
    "AVERAGE_POOL_2D": "Pool2DOptions",
    "MAX_POOL_2D": "Pool2DOptions",
    "L2_POOL_2D": "Pool2DOptions",
    "ADD": "AddOptions",
    "SUB": "SubOptions",
    "DIV": "DivOptions",
    "MUL": "MulOptions",
    "MAXIMUM": "MaximumMinimumOptions",
    "MINIMUM": "MaximumMinimumOptions",
    "SOFTMAX": "SoftmaxOptions",
    "L2_NORMALIZATION": "L2NormOptions",
    "LEAKY_RELU": "LeakyReluOptions",
    "HARD_SWISH": "HardSwishOptions",
    "GELU": "GeluOptions",
    "CONCATENATION": "ConcatenationOptions",
    "PAD": "PadOptions",
    "MEAN": "ReducerOptions",
    "REDUCE_MAX": "ReducerOptions",
    "REDUCE_MIN": "ReducerOptions",
    "SUM": "ReducerOptions",
    "REDUCE_ALL": "ReducerOptions",
    "GATHER": "GatherOptions",
    "SHAPE": "ShapeOptions",
    "CUMSUM": "CumsumOptions",
    "BATCH_MATMUL": "BatchMatMulOptions",
    "TRANSPOSE_CONV": "TransposeConvOptions",
    "RESIZE_BILINEAR": "ResizeBilinearOptions",
    "STRIDED_SLICE": "StridedSliceOptions",
    "TRANSPOSE": "TransposeOptions",
    "RESHAPE": "ReshapeOptions",
    "SVDF": "SVDFOptions",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions",
    "QUANTIZE": "QuantizeOptions",
    "SPLIT": "SplitOptions",
    "SPLIT_V": "SplitVOptions",
    "PACK": "PackOptions",
    "UNPACK": "UnpackOptions",
    "SPACE_TO_DEPTH": "SpaceToDepthOptions",
    "DEPTH_TO_SPACE": "DepthToSpaceOptions",
    "MIRROR_PAD": "MirrorPadOptions",
    "ARG_MAX": "ArgMaxOptions",
    "ARG_MIN": "ArgMinOptions",
    "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
    "DEQUANTIZE": "DequantizeOptions",
    "VAR_HANDLE": "VarHandleOptions",
    "CALL_ONCE": "CallOnceOptions",
    "IF": "IfOptions",
    "WHILE": "WhileOptions",
}

ENUMS = {
    "padding": fb.Padding,
    "fused_activation_function": fb.ActivationFunctionType,
    "weights_format": fb.FullyConnectedOptionsWeightsFormat,
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


class ModelBuilder:
    """Collects the tensors and operators of a one-subgraph TFLite model."""

    def __init__(self, description: str = "aot test model") -> None:
        self.description = description
        self.buffers: list[fb.BufferT] = [fb.BufferT()]  # [0] is the empty sentinel
        self.tensors: list[fb.TensorT] = []
        self.operators: list[fb.OperatorT] = []
        self.opcodes: list[str] = []
        self.inputs: list[int] = []
        self.outputs: list[int] = []
        self.done: list[fb.SubGraphT] = []  # subgraphs finished by next_subgraph()

    def next_subgraph(self) -> int:
        """Close the current subgraph and start the next one (tensors, operators,
        inputs and outputs are per subgraph; buffers and operator codes are
        shared); returns the new subgraph's index."""
        self.done.append(self._subgraph("main" if not self.done else
                                        f"subgraph{len(self.done)}"))
        self.tensors, self.operators, self.inputs, self.outputs = [], [], [], []
        return len(self.done)

    def _subgraph(self, name: str) -> fb.SubGraphT:
        sg = fb.SubGraphT()
        sg.tensors = self.tensors
        sg.operators = self.operators
        sg.inputs = self.inputs
        sg.outputs = self.outputs
        sg.name = name
        return sg

    def tensor(self, name: str, shape: Sequence[int], dtype: str, *,
               scale=None, zero_point=0, axis: int = 0,
               data: np.ndarray | None = None, variable: bool = False) -> int:
        """Add a tensor and return its index.

        ``scale`` is a float (per-tensor) or a sequence (per-axis along
        ``axis``); ``zero_point`` likewise.  ``data`` makes it a constant.
        """
        t = fb.TensorT()
        t.name = name
        t.shape = [int(d) for d in shape]
        t.type = DTYPES[dtype][0]
        t.isVariable = variable
        if scale is not None:
            q = fb.QuantizationParametersT()
            scales = np.atleast_1d(np.asarray(scale, dtype=np.float32))
            zps = np.atleast_1d(np.asarray(zero_point, dtype=np.int64))
            if zps.size == 1 and scales.size > 1:
                zps = np.repeat(zps, scales.size)
            q.scale = [float(s) for s in scales]
            q.zeroPoint = [int(z) for z in zps]
            q.quantizedDimension = axis
            t.quantization = q
        if data is not None:
            arr = np.asarray(data, dtype=DTYPES[dtype][1])  # tobytes() is C order; 0-d stays 0-d
            if tuple(arr.shape) != tuple(t.shape):
                raise ValueError(f"{name}: data shape {arr.shape} != {t.shape}")
            b = fb.BufferT()
            b.data = np.frombuffer(arr.tobytes(), dtype=np.uint8)
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        elif variable:
            # TFLM wants a buffer for variable tensors; it zeroes them itself.
            self.buffers.append(fb.BufferT())
            t.buffer = len(self.buffers) - 1
        else:
            t.buffer = 0
        self.tensors.append(t)
        return len(self.tensors) - 1

    def input(self, name, shape, dtype, **quant) -> int:
        """Add a tensor that is a model input."""
        i = self.tensor(name, shape, dtype, **quant)
        self.inputs.append(i)
        return i

    def output(self, name, shape, dtype, **quant) -> int:
        """Add a tensor that is a model output."""
        i = self.tensor(name, shape, dtype, **quant)
        self.outputs.append(i)
        return i

    def const(self, name: str, data, dtype: str | None = None, **quant) -> int:
        """Add a constant tensor holding ``data`` (dtype taken from it if not given)."""
        arr = np.asarray(data)
        if dtype is None:
            dtype = str(arr.dtype)
        return self.tensor(name, arr.shape, dtype, data=arr, **quant)

    def op(self, name: str, inputs: Sequence[int], outputs: Sequence[int],
           **options) -> None:
        """Add builtin operator ``name`` (e.g. ``"CONV_2D"``); -1 marks an omitted input."""
        if name not in self.opcodes:
            self.opcodes.append(name)
        o = fb.OperatorT()
        o.opcodeIndex = self.opcodes.index(name)
        o.inputs = list(inputs)
        o.outputs = list(outputs)
        table = OPTIONS.get(name)
        if table is not None:
            opts = getattr(fb, table + "T")()
            for key, value in options.items():
                field = _camel(key)
                if not hasattr(opts, field):
                    raise TypeError(f"{table} has no field {field!r}")
                if key in ENUMS and isinstance(value, str):
                    value = getattr(ENUMS[key], value)
                setattr(opts, field, value)
            o.builtinOptionsType = getattr(fb.BuiltinOptions, table)
            o.builtinOptions = opts
        elif options:
            raise TypeError(f"{name} takes no options here, got {sorted(options)}")
        self.operators.append(o)

    def finish(self) -> bytes:
        """Serialize the model (file identifier ``TFL3``)."""
        subgraphs = self.done + [self._subgraph("main" if not self.done else
                                                f"subgraph{len(self.done)}")]
        m = fb.ModelT()
        m.version = 3
        m.description = self.description
        m.buffers = self.buffers
        m.subgraphs = subgraphs
        m.operatorCodes = []
        for name in self.opcodes:
            c = fb.OperatorCodeT()
            code = getattr(fb.BuiltinOperator, name)
            c.builtinCode = code
            c.deprecatedBuiltinCode = min(code, 127)
            c.version = 1
            m.operatorCodes.append(c)
        b = flatbuffers.Builder(1024)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())
