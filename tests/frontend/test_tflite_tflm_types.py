"""The element types of ELEMENT_TYPES are the ones TFLM runs.

For every TFLM builtin with a typed operand (``test_every_tflm_builtin_is_probed``
keeps the list complete; the LSTM's fixed type combinations are tested
elsewhere), a one-operator model per element type is given to the pinned TFLM
interpreter: the types it runs must be the types ELEMENT_TYPES lists, so that
a change of either shows here.  Where aot runs fewer types than TFLM,
``AOT_NARROWER`` says so and why; where it runs more, ``AOT_WIDER``.  A type
in the table imports; one outside it is refused at import, naming the
operator and the type.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.oracle import OracleCrash, OracleError
from support.tflite_builder import ModelBuilder
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as fb

from aot.frontend import load_model
from aot.frontend.errors import ModelError
from aot.frontend.tflite import ELEMENT_TYPES

TYPES = ("float32", "int8", "int16", "int32", "int64", "bool", "uint8")
NP = {"float32": np.float32, "int8": np.int8, "int16": np.int16, "int32": np.int32,
      "int64": np.int64, "bool": np.bool_, "uint8": np.uint8}


def _q(dtype):
    return {"int8": {"scale": 0.05, "zero_point": -3}, "int16": {"scale": 0.05},
            "uint8": {"scale": 0.05, "zero_point": 128}}.get(dtype, {})


def _one(op, in_shapes, out_shapes, consts=(), *, dtype, out_dtype=None, first_const=False,
         **options) -> bytes:
    mb = ModelBuilder()
    xs = [mb.input(f"x{i}", list(s), dtype, **_q(dtype)) for i, s in enumerate(in_shapes)]
    cs = [mb.const(f"c{i}", np.asarray(c), "int32") for i, c in enumerate(consts)]
    out_dtype = out_dtype or dtype
    ys = [mb.output(f"y{i}", list(s), out_dtype, **_q(out_dtype))
          for i, s in enumerate(out_shapes)]
    mb.op(op, (cs + xs) if first_const else (xs + cs), ys, **options)
    return mb.finish()


def _padv2(dtype) -> bytes:
    mb = ModelBuilder()
    x = mb.input("x", [2, 3], dtype, **_q(dtype))
    p = mb.const("p", np.array([[1, 1], [0, 1]]), "int32")
    v = mb.const("v", np.zeros([1]), dtype, **_q(dtype))
    mb.op("PADV2", [x, p, v], [mb.output("y", [4, 4], dtype, **_q(dtype))])
    return mb.finish()


def _select(dtype) -> bytes:
    mb = ModelBuilder()
    c = mb.input("c", [2, 3], "bool")
    a, b = (mb.input(n, [2, 3], dtype, **_q(dtype)) for n in "ab")
    mb.op("SELECT_V2", [c, a, b], [mb.output("y", [2, 3], dtype, **_q(dtype))])
    return mb.finish()


_MOVE = {
    "RESHAPE": lambda d: _one("RESHAPE", [(2, 3)], [(3, 2)], [[3, 2]], dtype=d,
                              new_shape=[3, 2]),
    "SQUEEZE": lambda d: _one("SQUEEZE", [(2, 1, 3)], [(2, 3)], dtype=d),
    "EXPAND_DIMS": lambda d: _one("EXPAND_DIMS", [(2, 3)], [(2, 1, 3)], [[1]], dtype=d),
    "CONCATENATION": lambda d: _one("CONCATENATION", [(2, 3)] * 2, [(2, 6)], dtype=d, axis=1),
    "PAD": lambda d: _one("PAD", [(2, 3)], [(4, 4)], [[[1, 1], [0, 1]]], dtype=d),
    "PADV2": _padv2,
    "STRIDED_SLICE": lambda d: _one("STRIDED_SLICE", [(4, 3)], [(2, 3)],
                                    [[0, 0], [4, 3], [2, 1]], dtype=d),
    "TRANSPOSE": lambda d: _one("TRANSPOSE", [(2, 3, 4)], [(4, 2, 3)], [[2, 0, 1]], dtype=d),
    "SPLIT": lambda d: _one("SPLIT", [(4, 6)], [(4, 3)] * 2, [[1]], dtype=d, first_const=True,
                            num_splits=2),
    "SPLIT_V": lambda d: _one("SPLIT_V", [(4, 6)], [(4, 2), (4, 4)], [[2, 4], [1]], dtype=d,
                              num_splits=2),
    "SLICE": lambda d: _one("SLICE", [(4, 3)], [(2, 2)], [[1, 0], [2, 2]], dtype=d),
    "UNPACK": lambda d: _one("UNPACK", [(2, 3)], [(3,)] * 2, dtype=d, num=2, axis=0),
    "PACK": lambda d: _one("PACK", [(2, 3)] * 2, [(2, 2, 3)], dtype=d, values_count=2, axis=0),
    "REVERSE_V2": lambda d: _one("REVERSE_V2", [(2, 3)], [(2, 3)], [[1]], dtype=d),
    "SPACE_TO_DEPTH": lambda d: _one("SPACE_TO_DEPTH", [(1, 4, 6, 2)], [(1, 2, 3, 8)],
                                     dtype=d, block_size=2),
    "DEPTH_TO_SPACE": lambda d: _one("DEPTH_TO_SPACE", [(1, 2, 3, 8)], [(1, 4, 6, 2)],
                                     dtype=d, block_size=2),
    "SPACE_TO_BATCH_ND": lambda d: _one("SPACE_TO_BATCH_ND", [(1, 4, 4, 1)], [(4, 2, 2, 1)],
                                        [[2, 2], [[0, 0], [0, 0]]], dtype=d),
    "BATCH_TO_SPACE_ND": lambda d: _one("BATCH_TO_SPACE_ND", [(4, 2, 2, 1)], [(1, 4, 4, 1)],
                                        [[2, 2], [[0, 0], [0, 0]]], dtype=d),
    "MIRROR_PAD": lambda d: _one("MIRROR_PAD", [(2, 3)], [(4, 5)], [[[1, 1], [1, 1]]],
                                 dtype=d, mode=0),
    "BROADCAST_TO": lambda d: _one("BROADCAST_TO", [(1, 3)], [(2, 3)], [[2, 3]], dtype=d),
    "RESIZE_NEAREST_NEIGHBOR": lambda d: _one("RESIZE_NEAREST_NEIGHBOR", [(1, 2, 2, 1)],
                                              [(1, 4, 4, 1)], [[4, 4]], dtype=d),
    "ZEROS_LIKE": lambda d: _one("ZEROS_LIKE", [(2, 3)], [(2, 3)], dtype=d),
    "SELECT_V2": _select,
}
_ARITH = {op: (lambda d, op=op: _one(op, [(2, 3)] * 2, [(2, 3)], dtype=d))
          for op in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM")}
_COMPARE = {op: (lambda d, op=op: _one(op, [(2, 3)] * 2, [(2, 3)], dtype=d, out_dtype="bool"))
            for op in ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL")}
_ARG = {op: (lambda d, op=op: _one(op, [(2, 3)], [(2,)], [[1]], dtype=d, out_dtype="int32",
                                   output_type=2))
        for op in ("ARG_MAX", "ARG_MIN")}


def _dynamic_update_slice(d) -> bytes:
    mb = ModelBuilder()
    x, u = mb.input("x", [6, 5], d, **_q(d)), mb.input("u", [2, 3], d, **_q(d))
    mb.op("DYNAMIC_UPDATE_SLICE", [x, u, mb.const("s", np.array([1, 2]), "int32")],
          [mb.output("y", [6, 5], d, **_q(d))])
    return mb.finish()


def _fill(d) -> bytes:
    mb = ModelBuilder()
    dims, v = mb.const("dims", np.array([2, 3]), "int32"), mb.input("v", [], d, **_q(d))
    mb.op("FILL", [dims, v], [mb.output("y", [2, 3], d, **_q(d))])
    return mb.finish()


def _embedding_lookup(d) -> bytes:
    mb = ModelBuilder()
    ids = mb.input("ids", [2], "int32")
    w = mb.const("w", np.ones((4, 3)), d, **({"scale": 0.1} if _q(d) else {}))  # symmetric
    mb.op("EMBEDDING_LOOKUP", [ids, w], [mb.output("y", [2, 3], "float32")])
    return mb.finish()


def _cast(d, out=None) -> bytes:
    out = out or ("int32" if d == "float32" else "float32")
    mb = ModelBuilder()
    mb.op("CAST", [mb.input("x", [2, 3], d)], [mb.output("y", [2, 3], out)])
    return mb.finish()


def _assign_variable(d) -> bytes:
    mb = ModelBuilder()
    x, h = mb.input("x", [2, 3], d, **_q(d)), mb.tensor("h", [], "resource")
    mb.op("VAR_HANDLE", [], [h], container="", shared_name="v")
    mb.op("ASSIGN_VARIABLE", [h, x], [])
    mb.op("READ_VARIABLE", [h], [mb.output("y", [2, 3], d, **_q(d))])
    return mb.finish()


_OTHER = {
    "ASSIGN_VARIABLE": _assign_variable,
    "DYNAMIC_UPDATE_SLICE": _dynamic_update_slice,
    "GATHER": lambda d: _one("GATHER", [(4, 3)], [(2, 3)], [[2, 0]], dtype=d, axis=0),
    "GATHER_ND": lambda d: _one("GATHER_ND", [(4, 3)], [(2, 3)], [[[2], [0]]], dtype=d),
    "CUMSUM": lambda d: _one("CUMSUM", [(2, 3)], [(2, 3)], [1], dtype=d),
    "ELU": lambda d: _one("ELU", [(2, 3)], [(2, 3)], dtype=d),
    "HARD_SWISH": lambda d: _one("HARD_SWISH", [(2, 3)], [(2, 3)], dtype=d),
    "FILL": _fill,
    "EMBEDDING_LOOKUP": _embedding_lookup,
    "CAST": _cast,
}

#: Output quantizations TFLM requires of a type (the others take ``_q``).
_FIXED_OUT = {
    "LOGISTIC": {"int8": {"scale": 1 / 256, "zero_point": -128},
                 "int16": {"scale": 1 / 32768}},
    "TANH": {"int8": {"scale": 1 / 128}, "int16": {"scale": 1 / 32768}},
    "SOFTMAX": {"int8": {"scale": 1 / 256, "zero_point": -128},
                "int16": {"scale": 1 / 32768}},
    "LOG_SOFTMAX": {"int8": {"scale": 16 / 256, "zero_point": 127}},
    "L2_NORMALIZATION": {"int8": {"scale": 1 / 128}},
}


def _unary(op, out_shape=(2, 3), in_shape=(2, 3), out_dtype=None, **options):
    def build(d):
        mb = ModelBuilder()
        x = mb.input("x", list(in_shape), d, **_q(d))
        od = out_dtype(d) if out_dtype else d
        oq = _FIXED_OUT.get(op, {}).get(od, _q(od))
        mb.op(op, [x], [mb.output("y", list(out_shape), od, **oq)], **options)
        return mb.finish()
    return build


def _weights(d):
    """(weight type and quantization, bias type) TFLM pairs with data type ``d``."""
    if d == "float32":
        return "float32", {}, "float32"
    if d in ("int8", "int16"):
        return "int8", {"scale": 0.02}, "int32" if d == "int8" else "int64"
    return d, {}, "int32"


def _weighted(op, x_shape, w_shape, y_shape, *, data_slot=0, out_shape_const=None, **options):
    """CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV with data of type ``d``."""
    def build(d):
        wd, wq, bd = _weights(d)
        mb = ModelBuilder()
        x = mb.input("x", list(x_shape), d, **_q(d))
        w = mb.const("w", np.ones(w_shape), wd, **wq)
        sb = {"scale": 0.05 * 0.02} if wq else {}
        channels = w_shape[-1] if op == "DEPTHWISE_CONV_2D" else w_shape[0]
        b = mb.const("b", np.zeros([channels]), bd, **sb)
        ins = [x, w, b]
        if out_shape_const is not None:
            ins = [mb.const("shape", np.array(out_shape_const), "int32"), w, x, b]
        mb.op(op, ins, [mb.output("y", list(y_shape), d, **_q(d))], **options)
        return mb.finish()
    return build


def _svdf(d) -> bytes:
    """SVDF with data of type ``d``: int8 takes int16 time weights and state
    (the feature weights int8, the bias int32 on the state times time scale)."""
    wd, wq, bd = _weights(d)
    td = "int16" if d == "int8" else wd
    tq = {"scale": 0.0037} if d == "int8" else wq
    sq = {"scale": 0.0044} if d == "int8" else wq
    mb = ModelBuilder()
    x = mb.input("x", [1, 4], d, **_q(d))
    wf = mb.const("wf", np.ones((2, 4)), wd, **wq)
    wt = mb.const("wt", np.ones((2, 3)), td, **tq)
    bq = {"scale": float(np.float32(0.0044) * np.float32(0.0037))} if d == "int8" else wq
    b = mb.const("b", np.zeros(1), bd, **bq)
    st = mb.tensor("state", [1, 6], td, variable=True, **sq)
    mb.op("SVDF", [x, wf, wt, b, st], [mb.output("y", [1, 1], d, **_q(d))], rank=2,
          fused_activation_function="NONE")
    return mb.finish()


def _prelu(d) -> bytes:
    mb = ModelBuilder()
    x = mb.input("x", [2, 3], d, **_q(d))
    a = mb.const("a", np.ones(3), d, **_q(d))
    mb.op("PRELU", [x, a], [mb.output("y", [2, 3], d, **_q(d))])
    return mb.finish()


_POOL = {"padding": "VALID", "stride_w": 2, "stride_h": 2, "filter_width": 2,
         "filter_height": 2}
_COMPUTE = {
    **{op: _unary(op) for op in (
        "ABS", "CEIL", "COS", "EXP", "FLOOR", "LOG", "NEG", "ROUND", "RSQRT", "SIN", "SQRT",
        "SQUARE", "RELU", "RELU6", "LOGISTIC", "TANH", "LOGICAL_NOT")},
    "LEAKY_RELU": _unary("LEAKY_RELU", alpha=0.2),
    "GELU": _unary("GELU"),
    "SOFTMAX": _unary("SOFTMAX", beta=1.0),
    "LOG_SOFTMAX": _unary("LOG_SOFTMAX"),
    "L2_NORMALIZATION": _unary("L2_NORMALIZATION"),
    "QUANTIZE": _unary("QUANTIZE", out_dtype=lambda d: "int8" if d == "float32" else d),
    "DEQUANTIZE": _unary("DEQUANTIZE", out_dtype=lambda d: "float32"),
    **{op: (lambda d, op=op: _one(op, [(2, 3)] * 2, [(2, 3)], dtype=d)) for op in (
        "DIV", "FLOOR_DIV", "FLOOR_MOD", "SQUARED_DIFFERENCE", "LOGICAL_AND", "LOGICAL_OR",
        "ADD_N")},
    "PRELU": _prelu,
    **{op: (lambda d, op=op: _one(op, [(2, 3)], [(2,)], [[1]], dtype=d)) for op in (
        "MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_ALL")},
    **{op: _unary(op, out_shape=(1, 2, 2, 1), in_shape=(1, 4, 4, 1), **_POOL)
       for op in ("AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D")},
    "RESIZE_BILINEAR": lambda d: _one("RESIZE_BILINEAR", [(1, 2, 2, 1)], [(1, 4, 4, 1)],
                                      [[4, 4]], dtype=d),
    "BATCH_MATMUL": lambda d: _one("BATCH_MATMUL", [(2, 3), (3, 4)], [(2, 4)], dtype=d),
    "CONV_2D": _weighted("CONV_2D", (1, 4, 4, 2), (3, 1, 1, 2), (1, 4, 4, 3),
                         padding="VALID", stride_w=1, stride_h=1),
    "DEPTHWISE_CONV_2D": _weighted("DEPTHWISE_CONV_2D", (1, 4, 4, 2), (1, 1, 1, 2),
                                   (1, 4, 4, 2), padding="VALID", stride_w=1, stride_h=1,
                                   depth_multiplier=1),
    "FULLY_CONNECTED": _weighted("FULLY_CONNECTED", (2, 3), (4, 3), (2, 4)),
    "TRANSPOSE_CONV": _weighted("TRANSPOSE_CONV", (1, 4, 4, 2), (3, 1, 1, 2), (1, 4, 4, 3),
                                out_shape_const=[1, 4, 4, 3], padding="VALID", stride_w=1,
                                stride_h=1),
    "SVDF": _svdf,
}
BUILD = {**_MOVE, **_ARITH, **_COMPARE, **_ARG, **_OTHER, **_COMPUTE}

#: TFLM builtins with no element type to probe: they move no typed data of
#: their own (VAR_HANDLE names a variable, READ_VARIABLE's type is the
#: variable's, probed through ASSIGN_VARIABLE), or they are resolved at import
#: (SHAPE, BROADCAST_ARGS, CALL_ONCE) or made of other operators (IF, WHILE).
UNTYPED = {"VAR_HANDLE", "READ_VARIABLE", "SHAPE", "BROADCAST_ARGS", "CALL_ONCE", "IF", "WHILE"}

#: Probed by tests of their own: the LSTM's 24 operands come in fixed type
#: combinations (tests/reference/test_ops_lstm.py runs each against TFLM).
PROBED_ELSEWHERE = {"UNIDIRECTIONAL_SEQUENCE_LSTM"}

_UNCHECKED_LOGICAL = "TFLM's LOGICAL_AND/OR do not check the type and read the bytes as bool"
#: (builtin, type) that TFLM runs and aot does not (yet), and why.
AOT_NARROWER = {
    ("MAXIMUM", "int64"): "not supported yet", ("MINIMUM", "int64"): "not supported yet",
    ("DIV", "int8"): "not supported yet", ("DIV", "int32"): "not supported yet",
    **{(op, d): _UNCHECKED_LOGICAL for op in ("LOGICAL_AND", "LOGICAL_OR")
       for d in ("float32", "int8", "int16", "int32", "int64", "uint8")},
}

#: (builtin, type) that aot runs and the pinned TFLM does not, and why.
AOT_WIDER = {
    ("GELU", "float32"): "aot's extension (TFLM has no GELU)",
    ("GELU", "int8"): "aot's extension (TFLM has no GELU)",
    # aot's int16 REDUCE_MAX/MIN take the extreme of the raw values, as its int8 ones
    ("REDUCE_MAX", "int16"): "TFLM's Prepare accepts int16 but its Eval fails",
    ("REDUCE_MIN", "int16"): "TFLM's Prepare accepts int16 but its Eval fails",
}


def test_every_tflm_builtin_is_probed():
    """A builtin left out of BUILD would let a type TFLM runs go unnoticed
    (as int8 SQUARED_DIFFERENCE did)."""
    from aot.frontend.tflm_builtins import TFLM_BUILTINS
    assert set(TFLM_BUILTINS) - set(BUILD) == UNTYPED | PROBED_ELSEWHERE
    assert not UNTYPED & set(BUILD)
    assert all(ELEMENT_TYPES[b][1] == () for b in UNTYPED)


def _tflm_runs(oracle, model: bytes) -> bool:
    try:
        oracle.run(model, [load_inputs(model)])
    except (OracleError, OracleCrash):
        return False
    return True


def load_inputs(model: bytes) -> list[np.ndarray]:
    """Ones of the model's input shapes and types."""
    sub = fb.ModelT.InitFromPackedBuf(model, 0).subgraphs[0]
    names = {getattr(fb.TensorType, k.upper()): k for k in NP}
    return [np.ones(sub.tensors[i].shape, NP[names[sub.tensors[i].type]]) for i in sub.inputs]


def _aot_runs(builtin: str, dtype: str) -> bool:
    slot, types = ELEMENT_TYPES[builtin]
    return types is None or dtype in types


@pytest.mark.parametrize("builtin, dtype", [(b, d) for b in BUILD for d in TYPES])
def test_element_types_are_the_ones_tflm_runs(builtin, dtype, tflm, tmp_path):  # noqa: F811
    model = BUILD[builtin](dtype)
    runs = _tflm_runs(tflm, model)
    expected = (runs and (builtin, dtype) not in AOT_NARROWER) or (builtin, dtype) in AOT_WIDER
    assert _aot_runs(builtin, dtype) == expected, \
        f"TFLM {'runs' if runs else 'refuses'} {builtin} on {dtype}"
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    if _aot_runs(builtin, dtype):
        load_model(path)
    else:
        # the importer's or the IR's refusal, naming the operator and the type
        with pytest.raises(ModelError, match=f"operator 0 \\({builtin}\\): .*\\b{dtype}\\b"):
            load_model(path)


@pytest.mark.parametrize("out", TYPES)
def test_cast_outputs_are_the_ones_tflm_runs(out, tflm, tmp_path):  # noqa: F811
    model = _cast("float32", out)
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    if _tflm_runs(tflm, model):
        load_model(path)
    else:
        with pytest.raises(ModelError, match=f"operator 0 \\(CAST\\): {out} output: not "
                                             "supported"):
            load_model(path)
