"""GATHER: imported, run by the reference and compiled to C on the host, bit
for bit as TFLM runs it, with indices given at run time or as constants, on
any axis and with batch_dims; the types TFLM refuses are refused at import."""

from __future__ import annotations

import numpy as np
import pytest

from aot.frontend import load_model
from aot.frontend.errors import ModelError
from support.parity import assert_matches_tflm
from support.tflite_builder import ModelBuilder

Q = {"scale": 0.1, "zero_point": -5}


def _model(dtype, shape, ind_shape, axis, batch_dims, indices=None) -> bytes:
    q = Q if dtype == "int8" else {}
    mb = ModelBuilder()
    x = mb.input("x", list(shape), dtype, **q)
    if indices is None:
        i = mb.input("i", list(ind_shape), "int32")
    else:
        i = mb.const("i", indices, "int32")
    a = axis % len(shape)
    out = list(shape[:a]) + list(ind_shape[batch_dims:]) + list(shape[a + 1:])
    y = mb.output("y", out, dtype, **q)
    mb.op("GATHER", [x, i], [y], axis=axis, batch_dims=batch_dims)
    return mb.finish()


@pytest.mark.parametrize("shape, ind_shape, axis, batch_dims", [
    ((10, 4), (3,), 0, 0),           # embedding rows
    ((2, 7, 3), (2, 5), 1, 0),
    ((2, 3, 6), (4,), -1, 0),
    ((3, 6, 2), (3, 4), 1, 1),       # one index list per batch
    ((5, 4), (), 0, 0),              # scalar index drops the axis
])
@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("const", [False, True])
@pytest.mark.one_fast
def test_matches_tflm(shape, ind_shape, axis, batch_dims, dtype, const, tflm,  # noqa: F811
                      tmp_path):
    rng = np.random.default_rng(7)
    indices = rng.integers(0, shape[axis], ind_shape).astype(np.int32)
    if dtype == "int8":
        x = rng.integers(-128, 128, shape).astype(np.int8)
    else:
        x = rng.normal(size=shape).astype(np.float32)
    model = _model(dtype, shape, ind_shape, axis, batch_dims, indices if const else None)
    assert_matches_tflm(tflm, model, [x] if const else [x, indices], tmp_path)


def test_int16_data_is_refused_at_import(tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [4, 3], "int16", scale=0.01)
    y = mb.output("y", [2, 3], "int16", scale=0.01)
    mb.op("GATHER", [x, mb.const("i", np.array([0, 1]), "int32")], [y])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=r"operator 0 \(GATHER\): int16 data: not supported "
                                         r"\(TFLM gathers float32 and int8\)"):
        load_model(path)


def test_constant_index_out_of_range_is_refused_at_import(tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [4, 3], "float32")
    y = mb.output("y", [2, 3], "float32")
    mb.op("GATHER", [x, mb.const("i", np.array([0, 4]), "int32")], [y])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=r"operator 0 \(GATHER\): index 4 is out of range for "
                                         r"an axis of size 4"):
        load_model(path)


def _nd_model(dtype, shape, ind_shape, indices=None) -> bytes:
    q = Q if dtype == "int8" else {}
    mb = ModelBuilder()
    x = mb.input("x", list(shape), dtype, **q)
    i = mb.input("i", list(ind_shape), "int32") if indices is None else \
        mb.const("i", indices, "int32")
    out = list(ind_shape[:-1]) + list(shape[ind_shape[-1]:])
    y = mb.output("y", out, dtype, **q)
    mb.op("GATHER_ND", [x, i], [y])
    return mb.finish()


@pytest.mark.parametrize("shape, ind_shape", [
    ((5, 4), (3, 2)),                # single elements
    ((5, 4, 3), (2, 1)),             # rows
    ((3, 4, 2), (2, 3, 2)),          # a grid of index pairs, slices of 2
    ((2, 3, 2, 2), (4,)),            # one full index
])
@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("const", [False, True])
@pytest.mark.one_fast
def test_gather_nd_matches_tflm(shape, ind_shape, dtype, const, tflm, tmp_path):  # noqa: F811
    rng = np.random.default_rng(8)
    nd = ind_shape[-1]
    indices = np.stack([rng.integers(0, shape[k], ind_shape[:-1]) for k in range(nd)],
                       axis=-1).astype(np.int32)
    if dtype == "int8":
        x = rng.integers(-128, 128, shape).astype(np.int8)
    else:
        x = rng.normal(size=shape).astype(np.float32)
    model = _nd_model(dtype, shape, ind_shape, indices if const else None)
    assert_matches_tflm(tflm, model, [x] if const else [x, indices], tmp_path)


def test_gather_nd_index_longer_than_rank_is_refused(tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [4, 3], "float32")
    y = mb.output("y", [1], "float32")
    mb.op("GATHER_ND", [x, mb.input("i", [1, 3], "int32")], [y])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=r"operator 0 \(GATHER_ND\).*last axis \(3\) must lie "
                                         r"in \[1, 2\]"):
        load_model(path)


@pytest.mark.parametrize("table, out", [("float32", "float32"), ("int8", "int8"),
                                        ("int8", "float32")])
@pytest.mark.parametrize("const", [False, True])
@pytest.mark.one_fast
def test_embedding_lookup_matches_tflm(table, out, const, tflm, tmp_path):  # noqa: F811
    rng = np.random.default_rng(9)
    qt = {"scale": 0.03, "zero_point": 0} if table == "int8" else {}
    qy = qt if out == "int8" else {}
    if table == "int8":
        values = rng.integers(-128, 128, (6, 3, 2)).astype(np.int8)
    else:
        values = rng.normal(size=(6, 3, 2)).astype(np.float32)
    ids = np.array([5, 0, 0, 3], np.int32)
    mb = ModelBuilder()
    i = mb.const("ids", ids, "int32") if const else mb.input("ids", [4], "int32")
    t = mb.input("t", [6, 3, 2], table, **qt) if const else \
        mb.const("t", values, table, **qt)
    y = mb.output("y", [4, 3, 2], out, **qy)
    mb.op("EMBEDDING_LOOKUP", [i, t], [y])
    assert_matches_tflm(tflm, mb.finish(), [values] if const else [ids], tmp_path)


def test_embedding_lookup_dequantizing_a_zero_point_is_refused(tmp_path):
    mb = ModelBuilder()
    i = mb.input("ids", [2], "int32")
    t = mb.const("t", np.zeros((4, 3), np.int8), "int8", scale=0.1, zero_point=3)
    y = mb.output("y", [2, 3], "float32")
    mb.op("EMBEDDING_LOOKUP", [i, t], [y])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=r"operator 0 \(EMBEDDING_LOOKUP\): an int8 table read "
                                         r"as float32 needs one scale and zero point 0"):
        load_model(path)
