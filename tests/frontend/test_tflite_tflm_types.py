"""The element types of ELEMENT_TYPES are the ones TFLM runs.

For every builtin whose entry lists which types the data may have (the
movement builtins, SELECT_V2, ZEROS_LIKE, the element-wise arithmetic, the
comparisons, ARG_MAX and ARG_MIN, CAST (and its output type), a few more),
a one-operator model per element type is given to the pinned TFLM
interpreter: the types it runs must be the types ELEMENT_TYPES lists, so that
a change of either shows here.  Where aot runs fewer types than TFLM,
``AOT_NARROWER`` says so.  A type in the table imports; one outside it is
refused at import.
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
BUILD = {**_MOVE, **_ARITH, **_COMPARE, **_ARG, **_OTHER}

#: (builtin, type) that TFLM runs and aot does not (yet).
AOT_NARROWER = {("MAXIMUM", "int64"), ("MINIMUM", "int64")}


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
    assert _aot_runs(builtin, dtype) == (runs and (builtin, dtype) not in AOT_NARROWER), \
        f"TFLM {'runs' if runs else 'refuses'} {builtin} on {dtype}"
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    if _aot_runs(builtin, dtype):
        load_model(path)
    else:
        with pytest.raises(ModelError, match=f"operator 0 \\({builtin}\\): {dtype} "):
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
