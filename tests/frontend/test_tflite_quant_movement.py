"""Data movement between operands quantized differently, as TFLM runs it.

TFLM's data-movement kernels copy the integers raw: an output quantized
differently from its input reads the same integers with its own scale and
zero point (PAD fills with the output's zero point).  Each case here runs
with its output (and a second input) quantized differently from the first
input, on the reference interpreter and on the host build, bit for bit as
TFLM; where TFLM's kernel refuses such operands (int8 CONCATENATION,
CONCATENATION with a fused activation, PADV2 with a constant quantized unlike
the output, MAX_POOL_2D, REDUCE_MAX/MIN) the importer refuses them, naming the
operator, its index and the quantizations.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.oracle import OracleCrash, OracleError
from support.tflite_builder import ModelBuilder
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as fb

from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.frontend import load_model
from aot.frontend.errors import ModelError
from aot.reference import run as reference_run


def _q(scale, zp, dtype):
    return {"scale": scale, "zero_point": zp if dtype == "int8" else 0}


def _model(op, in_shape, out_shapes, consts=(), *, dtype, n_in=1, first_const=False,
           **options) -> bytes:
    """``op`` on inputs x0 (scale 0.05), x1 (scale 0.085), outputs at scale 0.1."""
    mb = ModelBuilder()
    xs = [mb.input(f"x{i}", list(in_shape), dtype, **_q(0.05 * (1 + 0.7 * i), -3, dtype))
          for i in range(n_in)]
    cs = [mb.const(f"c{i}", np.asarray(c), "int32") for i, c in enumerate(consts)]
    ys = [mb.output(f"y{i}", list(s), dtype, **_q(0.1, 4, dtype))
          for i, s in enumerate(out_shapes)]
    mb.op(op, (cs + xs) if first_const else (xs + cs), ys, **options)
    return mb.finish()


def _select(dtype) -> bytes:
    mb = ModelBuilder()
    c = mb.input("c", [2, 3], "bool")
    a = mb.input("a", [2, 3], dtype, **_q(0.05, -3, dtype))
    b = mb.input("b", [2, 3], dtype, **_q(0.085, 6, dtype))
    y = mb.output("y", [2, 3], dtype, **_q(0.1, 4, dtype))
    mb.op("SELECT_V2", [c, a, b], [y])
    return mb.finish()


CASES = {
    "concatenation": (("int16",), lambda d: _model(
        "CONCATENATION", (2, 3), [(2, 6)], dtype=d, n_in=2, axis=1)),
    "pad": (("int8", "int16"), lambda d: _model(
        "PAD", (2, 3), [(4, 4)], [[[1, 1], [0, 1]]], dtype=d)),
    "reshape": (("int8", "int16"), lambda d: _model(
        "RESHAPE", (2, 3), [(3, 2)], [[3, 2]], dtype=d, new_shape=[3, 2])),
    "squeeze": (("int8", "int16"), lambda d: _model("SQUEEZE", (2, 1, 3), [(2, 3)], dtype=d)),
    "expand_dims": (("int8", "int16"), lambda d: _model(
        "EXPAND_DIMS", (2, 3), [(2, 1, 3)], [[1]], dtype=d)),
    "transpose": (("int8", "int16"), lambda d: _model(
        "TRANSPOSE", (2, 3, 4), [(4, 2, 3)], [[2, 0, 1]], dtype=d)),
    "gather": (("int8",), lambda d: _model(
        "GATHER", (4, 3), [(2, 3)], [[2, 0]], dtype=d, axis=0)),
    "gather_nd": (("int8",), lambda d: _model("GATHER_ND", (4, 3), [(2, 3)], [[[2], [0]]],
                                              dtype=d)),
    "slice": (("int8", "int16"), lambda d: _model(
        "SLICE", (4, 3), [(2, 2)], [[1, 0], [2, 2]], dtype=d)),
    "strided_slice": (("int8", "int16"), lambda d: _model(
        "STRIDED_SLICE", (4, 3), [(2, 3)], [[0, 0], [4, 3], [2, 1]], dtype=d)),
    "split": (("int8", "int16"), lambda d: _model(
        "SPLIT", (4, 6), [(4, 3)] * 2, [[1]], dtype=d, first_const=True, num_splits=2)),
    "split_v": (("int8", "int16"), lambda d: _model(
        "SPLIT_V", (4, 6), [(4, 2), (4, 4)], [[2, 4], [1]], dtype=d, num_splits=2)),
    "pack": (("int8", "int16"), lambda d: _model(
        "PACK", (2, 3), [(2, 2, 3)], dtype=d, n_in=2, values_count=2, axis=0)),
    "unpack": (("int8", "int16"), lambda d: _model(
        "UNPACK", (2, 3), [(3,)] * 2, dtype=d, num=2, axis=0)),
    "depth_to_space": (("int8",), lambda d: _model(
        "DEPTH_TO_SPACE", (1, 2, 3, 8), [(1, 4, 6, 2)], dtype=d, block_size=2)),
    "space_to_depth": (("int8",), lambda d: _model(
        "SPACE_TO_DEPTH", (1, 4, 6, 2), [(1, 2, 3, 8)], dtype=d, block_size=2)),
    "batch_to_space_nd": (("int8",), lambda d: _model(
        "BATCH_TO_SPACE_ND", (4, 2, 2, 1), [(1, 4, 4, 1)], [[2, 2], [[0, 0], [0, 0]]],
        dtype=d)),
    "reverse_v2": (("int8", "int16"), lambda d: _model(
        "REVERSE_V2", (2, 3), [(2, 3)], [[1]], dtype=d)),
    "mirror_pad": (("int8",), lambda d: _model(
        "MIRROR_PAD", (2, 3), [(4, 5)], [[[1, 1], [1, 1]]], dtype=d, mode=0)),
    "broadcast_to": (("int8", "int16"), lambda d: _model(
        "BROADCAST_TO", (1, 3), [(2, 3)], [[2, 3]], dtype=d)),
    "resize_nearest_neighbor": (("int8", "int16"), lambda d: _model(
        "RESIZE_NEAREST_NEIGHBOR", (1, 2, 2, 1), [(1, 4, 4, 1)], [[4, 4]], dtype=d)),
    "select_v2": (("int8", "int16"), lambda d: _select(d)),
    "resize_bilinear": (("int8",), lambda d: _model(
        "RESIZE_BILINEAR", (1, 2, 3, 1), [(1, 3, 5, 1)], [[3, 5]], dtype=d,
        half_pixel_centers=True)),
    "maximum": (("int8", "int16"), lambda d: _model(
        "MAXIMUM", (2, 3), [(2, 3)], dtype=d, n_in=2)),
    "minimum": (("int8", "int16"), lambda d: _model(
        "MINIMUM", (2, 3), [(2, 3)], dtype=d, n_in=2)),
}
PARAMS = [pytest.param(name, d, id=f"{name}-{d}") for name, (dtypes, _) in CASES.items()
          for d in dtypes]


@pytest.mark.parametrize("name, dtype", PARAMS)
@pytest.mark.one_fast
def test_raw_copy_between_quantizations_equals_tflm(name, dtype, tflm, tmp_path):  # noqa: F811
    model = CASES[name][1](dtype)
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    graph = load_model(path)
    rng = np.random.default_rng(7)
    xs = [rng.random(t.shape) < 0.5 if t.dtype == "bool" else
          rng.integers(np.iinfo(t.dtype).min, np.iinfo(t.dtype).max + 1, t.shape).astype(t.dtype)
          for t in graph.inputs]
    want = tflm.run(model, [xs])[0]
    for got, w in zip(reference_run(graph, xs), want, strict=True):
        np.testing.assert_array_equal(got, w)
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    host = run_on_host(compiled, [x[None] for x in xs], workdir=tmp_path)
    for k, w in enumerate(want):
        np.testing.assert_array_equal(host[k][0], w)


def _padv2(const_q) -> bytes:
    mb = ModelBuilder()
    x = mb.input("x", [2, 3], "int8", scale=0.05, zero_point=-3)
    p = mb.const("p", np.array([[1, 0], [0, 1]]), "int32")
    c = mb.const("c", np.array([50]), "int8", **const_q)
    y = mb.output("y", [3, 4], "int8", scale=0.1, zero_point=4)
    mb.op("PADV2", [x, p, c], [y])
    return mb.finish()


def test_padv2_writes_its_constant_in_the_output_quantization(tflm, tmp_path):  # noqa: F811
    model = _padv2({"scale": 0.1, "zero_point": 4})
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    x = np.random.default_rng(1).integers(-128, 128, (2, 3)).astype(np.int8)
    want = tflm.run(model, [[x]])[0][0]
    assert want[0, 0] == 50
    np.testing.assert_array_equal(reference_run(load_model(path), [x])[0], want)


def _reduce_max() -> bytes:
    mb = ModelBuilder()
    x = mb.input("x", [2, 3], "int8", scale=0.05, zero_point=-3)
    y = mb.output("y", [2], "int8", scale=0.1, zero_point=4)
    mb.op("REDUCE_MAX", [x, mb.const("axes", np.array([1]), "int32")], [y])
    return mb.finish()


REFUSED = {
    "int8 concatenation": (
        lambda: _model("CONCATENATION", (2, 3), [(2, 6)], dtype="int8", n_in=2, axis=1),
        "operator 0 (CONCATENATION): int8 input 0 (scale 0.0500000007, zero point -3) "
        "quantized differently from the output (scale 0.100000001, zero point 4): not "
        "supported (TFLM concatenates int8 operands of one quantization"),
    "concatenation with RELU": (
        lambda: _model("CONCATENATION", (2, 3), [(2, 6)], dtype="int16", n_in=2, axis=1,
                       fused_activation_function="RELU"),
        "operator 0 (CONCATENATION): fused activation RELU: not supported (TFLM concatenates "
        "without one)"),
    "padv2 constant in the input's quantization": (
        lambda: _padv2({"scale": 0.05, "zero_point": -3}),
        "operator 0 (PADV2): constant value (scale 0.0500000007, zero point -3) quantized "
        "differently from the output (scale 0.100000001, zero point 4): not supported"),
    "max_pool_2d": (
        lambda: _model("MAX_POOL_2D", (1, 4, 4, 2), [(1, 2, 2, 2)], dtype="int8",
                       padding="VALID", stride_w=2, stride_h=2, filter_width=2,
                       filter_height=2),
        "operator 0 (MAX_POOL_2D): input (scale 0.05, zero point -3) and output (scale 0.1, "
        "zero point 4) quantized differently: not supported"),
    "reduce_max": (
        _reduce_max,
        "operator 0 (REDUCE_MAX): input (scale 0.0500000007, zero point -3) and output "
        "(scale 0.100000001, zero point 4) quantized differently: not supported (TFLM fails "
        "the invocation)"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_tflm_refuses_is_refused_at_import(case, tflm, tmp_path):  # noqa: F811
    build, message = REFUSED[case]
    model = build()
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    with pytest.raises(ModelError) as err:
        load_model(path)
    assert message in str(err.value)
    with pytest.raises((OracleError, OracleCrash)):  # TFLM refuses it too
        tflm.run(model, [_inputs(model)])


def _inputs(model: bytes) -> list[np.ndarray]:
    """Zeros of the model's input shapes and types."""
    m = fb.ModelT.InitFromPackedBuf(model, 0)
    sub = m.subgraphs[0]
    types = {fb.TensorType.INT8: np.int8, fb.TensorType.INT16: np.int16}
    return [np.zeros(sub.tensors[i].shape, types[sub.tensors[i].type]) for i in sub.inputs]
