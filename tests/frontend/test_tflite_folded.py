"""SHAPE, BROADCAST_ARGS and FILL with a constant value compute constants
(shapes are static here): they are folded at import and their consumers run
bit for bit as TFLM runs the model; FILL of a run-time value is a broadcast.
Dynamic shapes and the types TFLM refuses are refused at import."""

from __future__ import annotations

import numpy as np
import pytest

from aot.frontend import load_model
from aot.frontend.errors import ModelError
from support.parity import assert_matches_tflm
from support.tflite_builder import ModelBuilder


def test_shape_feeds_reshape(tflm, tmp_path):  # noqa: F811
    mb = ModelBuilder()
    x = mb.input("x", [2, 3, 4], "float32")
    z = mb.input("z", [6, 4], "float32")
    s = mb.tensor("s", [3], "int32")
    mb.op("SHAPE", [x], [s])
    r = mb.tensor("r", [2, 3, 4], "float32")
    mb.op("RESHAPE", [z, s], [r])
    y = mb.output("y", [2, 3, 4], "float32")
    mb.op("ADD", [x, r], [y])
    model = mb.finish()
    assert [n.op for n in _load(model, tmp_path).nodes] == ["reshape", "add"]
    rng = np.random.default_rng(1)
    assert_matches_tflm(tflm, model, [rng.normal(size=(2, 3, 4)).astype(np.float32),
                                      rng.normal(size=(6, 4)).astype(np.float32)], tmp_path)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_broadcast_args_feeds_reshape(dtype, tflm, tmp_path):  # noqa: F811
    mb = ModelBuilder()
    x = mb.input("x", [24], "int8", scale=0.5, zero_point=1)
    s0 = mb.const("s0", np.array([2, 1, 4]), dtype)
    s1 = mb.const("s1", np.array([3, 1]), dtype)
    s = mb.tensor("s", [3], dtype)
    mb.op("BROADCAST_ARGS", [s0, s1], [s])
    y = mb.output("y", [2, 3, 4], "int8", scale=0.5, zero_point=1)
    mb.op("RESHAPE", [x, s], [y])
    x_val = np.arange(-12, 12, dtype=np.int8) * 5
    assert_matches_tflm(tflm, mb.finish(), [x_val], tmp_path)


@pytest.mark.parametrize("dtype", ["float32", "int8", "int32"])
def test_fill_of_a_constant_is_folded(dtype, tflm, tmp_path):  # noqa: F811
    q = {"scale": 0.25, "zero_point": -3} if dtype == "int8" else {}
    mb = ModelBuilder()
    x = mb.input("x", [2, 5], dtype, **q)
    dims = mb.const("dims", np.array([2, 5]), "int32")
    v = mb.const("v", np.array(7, dtype=dtype), dtype, **q)
    f = mb.tensor("f", [2, 5], dtype, **q)
    mb.op("FILL", [dims, v], [f])
    y = mb.output("y", [2, 5], dtype, **q)
    mb.op("MAXIMUM", [x, f], [y])
    model = mb.finish()
    assert [n.op for n in _load(model, tmp_path).nodes] == ["maximum"]
    x_val = np.arange(-5, 5, dtype=dtype).reshape(2, 5) * 2
    assert_matches_tflm(tflm, model, [x_val], tmp_path)


def test_fill_of_a_runtime_value_broadcasts_it(tflm, tmp_path):  # noqa: F811
    mb = ModelBuilder()
    v = mb.input("v", [], "float32")
    dims = mb.const("dims", np.array([3, 2]), "int32")
    y = mb.output("y", [3, 2], "float32")
    mb.op("FILL", [dims, v], [y])
    assert_matches_tflm(tflm, mb.finish(), [np.array(-2.5, np.float32)], tmp_path)


def _load(model: bytes, tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    return load_model(path)


def test_broadcast_args_of_runtime_shapes_is_refused(tmp_path):
    mb = ModelBuilder()
    s0 = mb.input("s0", [2], "int32")
    s = mb.output("s", [2], "int32")
    mb.op("BROADCAST_ARGS", [s0, mb.const("s1", np.array([1, 4]), "int32")], [s])
    with pytest.raises(ModelError, match=r"operator 0 \(BROADCAST_ARGS\): shape 's0' is "
                                         r"computed at run time: not supported yet"):
        _load(mb.finish(), tmp_path)


def test_fill_of_int16_is_refused(tmp_path):
    mb = ModelBuilder()
    v = mb.input("v", [], "int16", scale=0.1)
    y = mb.output("y", [3], "int16", scale=0.1)
    mb.op("FILL", [mb.const("dims", np.array([3]), "int32"), v], [y])
    with pytest.raises(ModelError, match=r"operator 0 \(FILL\): int16 value to int16 output: "
                                         r"not supported \(TFLM fills float32, int32 and int8"):
        _load(mb.finish(), tmp_path)


def test_shape_as_int64_is_refused(tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [2, 3], "float32")
    s = mb.output("s", [2], "int64")
    mb.op("SHAPE", [x], [s], out_type=4)
    with pytest.raises(ModelError, match=r"operator 0 \(SHAPE\): int64 output: not supported "
                                         r"\(TFLM writes int32 shapes\)"):
        _load(mb.finish(), tmp_path)


def test_a_folded_model_output_is_refused(tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [2, 3], "float32")
    s = mb.output("s", [2], "int32")
    mb.op("SHAPE", [x], [s])
    y = mb.output("y", [2, 3], "float32")
    mb.op("RELU", [x], [y])
    with pytest.raises(ModelError, match=r"model output 's' is a constant \(folded at import, "
                                         r"e.g. the result of SHAPE\): not supported yet"):
        _load(mb.finish(), tmp_path)


def test_tensors_sharing_a_name_compile_and_run_as_tflm(tflm, tmp_path):  # noqa: F811
    # TFLite does not require unique tensor names; three tensors named "y"
    # in different kernels must not be taken for one another.
    mb = ModelBuilder()
    c = mb.input("c", [1], "bool")
    x = mb.input("x", [2, 3], "float32")
    w = mb.input("w", [2, 3], "float32")
    r = mb.tensor("r", [2, 3], "float32")
    mb.op("MINIMUM", [x, w], [r])
    a = mb.tensor("y", [2, 3], "float32")
    mb.op("ADD", [r, w], [a])
    b = mb.tensor("y", [2, 3], "float32")
    mb.op("MAXIMUM", [x, w], [b])
    y = mb.output("y", [2, 3], "float32")
    mb.op("SELECT_V2", [c, a, b], [y])
    rng = np.random.default_rng(3)
    inputs = [np.array([False]), rng.normal(size=(2, 3)).astype(np.float32),
              rng.normal(size=(2, 3)).astype(np.float32)]
    assert_matches_tflm(tflm, mb.finish(), inputs, tmp_path)
