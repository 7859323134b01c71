"""BATCH_MATMUL: imported, run by the reference and compiled to C on the
host, bit for bit as TFLM runs it: float32, int8 (zero points on both
operands) and int16, transposed operands, broadcast batch axes, a constant
right-hand side; the types TFLM refuses are refused at import."""

from __future__ import annotations

import numpy as np
import pytest

from aot.frontend import load_model
from aot.frontend.errors import ModelError
from support.parity import assert_matches_tflm
from support.tflite_builder import ModelBuilder

_QUANT = {
    "int8": ({"scale": 0.05, "zero_point": 3}, {"scale": 0.02, "zero_point": -6},
             {"scale": 0.4, "zero_point": -2}),
    "int16": ({"scale": 0.002, "zero_point": 0}, {"scale": 0.001, "zero_point": 0},
              {"scale": 0.05, "zero_point": 0}),
    "float32": ({}, {}, {}),
}


def _values(rng, dtype, shape):
    if dtype == "float32":
        return rng.normal(size=shape).astype(np.float32)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


@pytest.mark.parametrize("a_shape, b_shape, adj_x, adj_y", [
    ((3, 5), (5, 4), False, False),
    ((2, 3, 5), (2, 5, 4), False, False),
    ((2, 5, 3), (5, 4), True, False),           # rhs broadcast over the batch
    ((1, 3, 5), (2, 2, 4, 5), False, True),     # both broadcast, rank 4
    ((2, 1, 6, 3), (3, 6, 2), True, False),
])
@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.parametrize("const_rhs", [False, True])
@pytest.mark.one_fast
def test_matches_tflm(a_shape, b_shape, adj_x, adj_y, dtype, const_rhs, tflm,  # noqa: F811
                      tmp_path):
    qa, qb, qy = _QUANT[dtype]
    rng = np.random.default_rng(12)
    av, bv = _values(rng, dtype, a_shape), _values(rng, dtype, b_shape)
    rows = a_shape[-1] if adj_x else a_shape[-2]
    cols = b_shape[-2] if adj_y else b_shape[-1]
    out = list(np.broadcast_shapes(a_shape[:-2], b_shape[:-2])) + [rows, cols]
    mb = ModelBuilder()
    a = mb.input("a", list(a_shape), dtype, **qa)
    b = mb.const("b", bv, dtype, **qb) if const_rhs else mb.input("b", list(b_shape), dtype, **qb)
    y = mb.output("y", out, dtype, **qy)
    mb.op("BATCH_MATMUL", [a, b], [y], adj_x=adj_x, adj_y=adj_y)
    assert_matches_tflm(tflm, mb.finish(), [av] if const_rhs else [av, bv], tmp_path)


def _load(model, tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    return load_model(path)


def test_mixed_types_are_refused_at_import(tmp_path):
    mb = ModelBuilder()
    a = mb.input("a", [2, 3], "float32")
    b = mb.const("b", np.zeros((3, 2), np.int8), "int8", scale=0.1)
    y = mb.output("y", [2, 2], "float32")
    mb.op("BATCH_MATMUL", [a, b], [y])
    with pytest.raises(ModelError, match=r"operator 0 \(BATCH_MATMUL\): float32 x int8 -> "
                                         r"float32: not supported"):
        _load(mb.finish(), tmp_path)


def test_mismatched_inner_sizes_are_refused_at_import(tmp_path):
    mb = ModelBuilder()
    a = mb.input("a", [2, 3], "float32")
    b = mb.input("b", [4, 2], "float32")
    y = mb.output("y", [2, 2], "float32")
    mb.op("BATCH_MATMUL", [a, b], [y])
    with pytest.raises(ModelError, match=r"operator 0 \(BATCH_MATMUL\).*do not multiply "
                                         r"\(inner sizes 3 and 4\)"):
        _load(mb.finish(), tmp_path)


@pytest.mark.parametrize("za, zb", [(0, 0), (0, -7), (5, 0), (-128, 127)])
@pytest.mark.one_fast
def test_int8_zero_point_folding_matches_tflm(za, zb, tflm, tmp_path):  # noqa: F811
    """The int8 row kernel folds each zero point into a row or column sum only
    where it is nonzero (attention's softmax output has -128, its values 0)."""
    rng = np.random.default_rng(abs(za) * 300 + abs(zb))
    av, bv = _values(rng, "int8", (2, 4, 12)), _values(rng, "int8", (2, 12, 8))
    mb = ModelBuilder()
    a = mb.input("a", [2, 4, 12], "int8", scale=0.05, zero_point=za)
    b = mb.input("b", [2, 12, 8], "int8", scale=0.02, zero_point=zb)
    y = mb.output("y", [2, 4, 8], "int8", scale=0.4, zero_point=-2)
    mb.op("BATCH_MATMUL", [a, b], [y])
    assert_matches_tflm(tflm, mb.finish(), [av, bv], tmp_path)
