"""One-operator TFLite models through the frontend and the interpreter, against TFLM.

These check the whole path a user's model takes: the flatbuffer options and
tensor quantization are read by the frontend, become IR attributes, and are
mapped back onto the kernels' arguments by the interpreter.  Each case is
compared with TFLM bit for bit (float: 1e-5 relative).
"""

from __future__ import annotations

import numpy as np
import pytest

from aot.frontend.tflite import parse_tflite
from aot.reference import Session, supported_ops
from support.quant_cases import bias_scale, rand_int, weight_scales
from support.tflite_builder import ModelBuilder

RNG_SEED = 20261122


class Case:
    """A one-subgraph model under construction plus the inputs to feed it."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.mb = ModelBuilder()
        self.feeds: list[np.ndarray] = []

    def input(self, shape, dtype="int8", scale=None, zero_point=0):
        if dtype == "float32":
            x = self.rng.standard_normal(shape).astype(np.float32) * 2
            i = self.mb.input(f"x{len(self.feeds)}", shape, dtype)
        else:
            x = rand_int(self.rng, shape, dtype)
            if scale is None:
                scale = float(self.rng.uniform(0.01, 0.1))
            i = self.mb.input(f"x{len(self.feeds)}", shape, dtype, scale=scale,
                              zero_point=zero_point)
        self.feeds.append(x)
        return i

    def output(self, shape, dtype="int8", scale=None, zero_point=0):
        if dtype == "float32":
            return self.mb.output("y", shape, dtype)
        if scale is None:
            scale = float(self.rng.uniform(0.02, 0.2))
        return self.mb.output("y", shape, dtype, scale=scale, zero_point=zero_point)

    def bytes(self) -> bytes:
        return self.mb.finish()


def _check(case: Case, tflm) -> None:  # noqa: F811
    model = case.bytes()
    graph = parse_tflite(model)
    ours = Session(graph).invoke(case.feeds)
    (theirs,) = tflm.run(model, [case.feeds])
    for got, want in zip(ours, theirs, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        if got.dtype == np.float32:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        else:
            diff = np.flatnonzero(got != want)
            assert diff.size == 0, f"{diff.size} of {got.size} differ; first at {diff[0]}: " \
                                   f"{got.flat[diff[0]]} vs {want.flat[diff[0]]}"


def _out_hw(hw, k, stride, dilation, padding):
    eff = [(k[i] - 1) * dilation[i] + 1 for i in range(2)]
    if padding == "SAME":
        return [-(-hw[i] // stride[i]) for i in range(2)]
    return [(hw[i] - eff[i]) // stride[i] + 1 for i in range(2)]


CONV_VARIANTS = [
    dict(),
    dict(padding="VALID", stride=(2, 2)),
    dict(stride=(2, 1), k=(3, 2)),
    dict(dilation=(2, 2)),
    dict(act="RELU"),
    dict(act="RELU6", per_channel=False),
    dict(act="RELU_N1_TO_1"),
    dict(dtype="int16"),
    dict(dtype="int16", act="RELU", stride=(2, 2)),
    dict(dtype="float32", act="RELU6"),
    dict(dtype="float32", padding="VALID", dilation=(1, 2)),
]


def _conv_case(seed, depthwise=False, dtype="int8", k=(3, 3), stride=(1, 1), dilation=(1, 1),
               padding="SAME", act="NONE", per_channel=True, hw=(7, 6), c=3, mult=2, o=4):
    case = Case(seed)
    rng = case.rng
    oc = c * mult if depthwise else o
    oh, ow = _out_hw(hw, k, stride, dilation, padding)
    wshape = (1, *k, oc) if depthwise else (o, *k, c)
    zp = int(rng.integers(-20, 20)) if dtype == "int8" else 0
    x_scale = float(rng.uniform(0.01, 0.1))
    x = case.input((1, *hw, c), dtype, scale=x_scale, zero_point=zp)
    if dtype == "float32":
        w = case.mb.const("w", rng.standard_normal(wshape).astype(np.float32))
        b = case.mb.const("b", rng.standard_normal(oc).astype(np.float32))
    else:
        wv = rand_int(rng, wshape, "int8", edges=False)
        wv[wv == -128] = -127
        ws = weight_scales(rng, oc, per_channel)
        bias_dtype = "int32" if dtype == "int8" else "int64"
        bv = rng.integers(-3000, 3000, size=oc).astype(bias_dtype)
        w = case.mb.const("w", wv, scale=ws, zero_point=0, axis=3 if depthwise else 0)
        b = case.mb.const("b", bv, scale=bias_scale(x_scale, ws), zero_point=0)
    y = case.output((1, oh, ow, oc), dtype, zero_point=int(rng.integers(-10, 10))
                    if dtype == "int8" else 0)
    opts = dict(padding=padding, stride_h=stride[0], stride_w=stride[1],
                dilation_h_factor=dilation[0], dilation_w_factor=dilation[1],
                fused_activation_function=act)
    if depthwise:
        case.mb.op("DEPTHWISE_CONV_2D", [x, w, b], [y], depth_multiplier=mult, **opts)
    else:
        case.mb.op("CONV_2D", [x, w, b], [y], **opts)
    return case


@pytest.mark.parametrize("variant", CONV_VARIANTS, ids=str)
def test_conv2d(variant, tflm):  # noqa: F811
    _check(_conv_case(RNG_SEED, **variant), tflm)


@pytest.mark.parametrize("variant", CONV_VARIANTS, ids=str)
def test_depthwise_conv2d(variant, tflm):  # noqa: F811
    _check(_conv_case(RNG_SEED + 1, depthwise=True, **variant), tflm)


@pytest.mark.parametrize("dtype, keep, bias", [
    ("int8", False, True), ("int8", True, True), ("int8", False, False),
    ("int16", False, True), ("float32", True, True),
])
def test_dense(dtype, keep, bias, tflm):  # noqa: F811
    case = Case(RNG_SEED + 2)
    rng = case.rng
    x_scale = 0.05
    x = case.input((2, 3, 8), dtype, scale=x_scale, zero_point=3 if dtype == "int8" else 0)
    if dtype == "float32":
        w = case.mb.const("w", rng.standard_normal((5, 8)).astype(np.float32))
        b = case.mb.const("b", rng.standard_normal(5).astype(np.float32))
    else:
        w = case.mb.const("w", rand_int(rng, (5, 8), edges=False), scale=0.02, zero_point=0)
        bdt = "int32" if dtype == "int8" else "int64"
        b = case.mb.const("b", rng.integers(-500, 500, 5).astype(bdt), scale=x_scale * 0.02,
                          zero_point=0)
    y = case.output((2, 3, 5) if keep else (6, 5), dtype, zero_point=-4 if dtype == "int8" else 0)
    case.mb.op("FULLY_CONNECTED", [x, w, b if bias else -1], [y], keep_num_dims=keep,
               fused_activation_function="RELU")
    _check(case, tflm)


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("dtype, padding, act", [
    ("int8", "SAME", "NONE"), ("int8", "VALID", "RELU6"), ("int16", "SAME", "RELU"),
    ("float32", "SAME", "NONE"),
])
def test_pool(op, dtype, padding, act, tflm):  # noqa: F811
    case = Case(RNG_SEED + 3)
    x = case.input((1, 7, 6, 3), dtype, scale=0.05, zero_point=-2 if dtype == "int8" else 0)
    oh, ow = _out_hw((7, 6), (3, 2), (2, 2), (1, 1), padding)
    y = case.output((1, oh, ow, 3), dtype, scale=0.05, zero_point=-2 if dtype == "int8" else 0)
    case.mb.op(op, [x], [y], padding=padding, stride_h=2, stride_w=2, filter_height=3,
               filter_width=2, fused_activation_function=act)
    _check(case, tflm)


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("dtype, shapes, act", [
    ("int8", ((1, 4, 4, 3), (1, 4, 4, 3)), "NONE"),
    ("int8", ((1, 4, 4, 3), (1, 1, 1, 3)), "RELU6"),
    ("int8", ((2, 1, 3), (1, 5, 1)), "RELU"),
    ("int16", ((1, 4, 3), (1, 4, 3)), "NONE"),
    ("float32", ((1, 4, 3), (4, 1)), "RELU_N1_TO_1"),
])
def test_binary_arithmetic(op, dtype, shapes, act, tflm):  # noqa: F811
    case = Case(RNG_SEED + 4)
    zp = dtype == "int8"
    a = case.input(shapes[0], dtype, zero_point=5 if zp else 0)
    b = case.input(shapes[1], dtype, zero_point=-7 if zp else 0)
    out = np.broadcast_shapes(*shapes)
    y = case.output(out, dtype, zero_point=2 if zp else 0)
    opts = dict(fused_activation_function=act)
    if op in ("ADD", "SUB") and dtype == "int16":
        opts["pot_scale_int16"] = False
    case.mb.op(op, [a, b], [y], **opts)
    _check(case, tflm)


@pytest.mark.parametrize("op", ["MAXIMUM", "MINIMUM"])
def test_maximum_minimum(op, tflm):  # noqa: F811
    case = Case(RNG_SEED + 5)
    a = case.input((1, 3, 4), "int8", scale=0.1, zero_point=1)
    b = case.input((1, 1, 4), "int8", scale=0.1, zero_point=1)
    y = case.output((1, 3, 4), "int8", scale=0.1, zero_point=1)
    case.mb.op(op, [a, b], [y])
    _check(case, tflm)


def _movement_case(op, in_shape, out_shape, consts=(), **opts):
    case = Case(RNG_SEED + 6)
    x = case.input(in_shape, "int8", scale=0.1, zero_point=3)
    y = case.output(out_shape, "int8", scale=0.1, zero_point=3)
    inputs = [x] + [case.mb.const(f"c{i}", np.asarray(c, np.int32)) for i, c in enumerate(consts)]
    case.mb.op(op, inputs, [y], **opts)
    return case


@pytest.mark.parametrize("op, in_shape, out_shape, consts, opts", [
    ("RESHAPE", (1, 2, 3, 4), (1, 24), [[1, -1]], dict(new_shape=[1, 24])),
    ("SQUEEZE", (1, 3, 1, 4), (3, 4), [], {}),
    ("EXPAND_DIMS", (3, 4), (3, 1, 4), [[1]], {}),
    ("TRANSPOSE", (1, 2, 3, 4), (1, 4, 2, 3), [[0, 3, 1, 2]], {}),
    ("PAD", (1, 3, 3, 2), (1, 5, 4, 2), [[[0, 0], [1, 1], [0, 1], [0, 0]]], {}),
    ("STRIDED_SLICE", (2, 6, 5), (3, 3), [[1, -5, 4], [0, 6, 0], [1, 2, -2]],
     dict(shrink_axis_mask=1, end_mask=4)),
    ("STRIDED_SLICE", (1, 8, 4), (1, 3, 4), [[0, 1, 0], [1, 7, 4], [1, 2, 1]], {}),
])
def test_data_movement(op, in_shape, out_shape, consts, opts, tflm):  # noqa: F811
    _check(_movement_case(op, in_shape, out_shape, consts, **opts), tflm)


def test_concatenation(tflm):  # noqa: F811
    case = Case(RNG_SEED + 7)
    a = case.input((1, 2, 3), "int8", scale=0.1, zero_point=0)
    b = case.input((1, 2, 2), "int8", scale=0.1, zero_point=0)
    y = case.output((1, 2, 5), "int8", scale=0.1, zero_point=0)
    case.mb.op("CONCATENATION", [a, b], [y], axis=-1)
    _check(case, tflm)


@pytest.mark.parametrize("in_dtype, out_dtype, out_q", [
    ("int8", "int8", (1 / 256, -128)),
    ("int8", "int16", (1 / 65536, -32768)),
    ("float32", "float32", None),
])
def test_softmax(in_dtype, out_dtype, out_q, tflm):  # noqa: F811
    case = Case(RNG_SEED + 8)
    x = case.input((2, 10), in_dtype, scale=0.2, zero_point=-3 if in_dtype == "int8" else 0)
    q = dict(scale=out_q[0], zero_point=out_q[1]) if out_q else {}
    y = case.output((2, 10), out_dtype, **q)
    case.mb.op("SOFTMAX", [x], [y], beta=1.0)
    _check(case, tflm)


@pytest.mark.parametrize("op, dtype, out_q, opts", [
    ("RELU", "int8", (0.07, -128), {}),
    ("RELU6", "int8", None, {}),
    ("LEAKY_RELU", "int8", (0.05, 10), dict(alpha=0.2)),
    ("HARD_SWISH", "int8", (0.04, -20), {}),
    ("LOGISTIC", "int8", (1 / 256, -128), {}),
    ("TANH", "int8", (1 / 128, 0), {}),
    ("RELU", "float32", None, {}),
    ("TANH", "float32", None, {}),
])
def test_activations(op, dtype, out_q, opts, tflm):  # noqa: F811
    case = Case(RNG_SEED + 9)
    x = case.input((1, 4, 8), dtype, scale=0.05, zero_point=-5 if dtype == "int8" else 0)
    if dtype == "float32":
        y = case.output((1, 4, 8), dtype)
    elif out_q is None:
        y = case.output((1, 4, 8), dtype, scale=0.05, zero_point=-5)
    else:
        y = case.output((1, 4, 8), dtype, scale=out_q[0], zero_point=out_q[1])
    case.mb.op(op, [x], [y], **opts)
    _check(case, tflm)


@pytest.mark.parametrize("in_dtype, out_dtype", [
    ("float32", "int8"), ("float32", "int16"), ("int8", "int16"), ("int16", "int8"),
    ("int16", "int32"),
])
def test_quantize(in_dtype, out_dtype, tflm):  # noqa: F811
    case = Case(RNG_SEED + 10)
    x = case.input((1, 16), in_dtype, scale=0.03, zero_point=4 if in_dtype == "int8" else 0)
    y = case.output((1, 16), out_dtype, scale=0.02, zero_point=-3 if out_dtype == "int8" else 0)
    case.mb.op("QUANTIZE", [x], [y])
    _check(case, tflm)


def test_dequantize(tflm):  # noqa: F811
    case = Case(RNG_SEED + 11)
    x = case.input((1, 16), "int8", scale=0.03, zero_point=4)
    y = case.output((1, 16), "float32")
    case.mb.op("DEQUANTIZE", [x], [y])
    _check(case, tflm)


@pytest.mark.xfail("mean" not in supported_ops(), strict=True,
                   reason="no reference kernel for MEAN yet")
def test_mean(tflm):  # noqa: F811
    case = Case(RNG_SEED + 12)
    x = case.input((1, 4, 5, 3), "int8", scale=0.05, zero_point=2)
    y = case.output((1, 3), "int8", scale=0.05, zero_point=2)
    axes = case.mb.const("axes", np.array([1, 2], np.int32))
    case.mb.op("MEAN", [x, axes], [y], keep_dims=False)
    _check(case, tflm)


@pytest.mark.parametrize("dtype, rank", [("int8", 1), ("int8", 2), ("float32", 2)])
def test_svdf_sequence(dtype, rank, tflm):  # noqa: F811
    """Three invocations in a row: the state carries from one to the next."""
    case = Case(RNG_SEED + 13)
    rng = case.rng
    units, memory, depth = 3, 4, 6
    filters = units * rank
    if dtype == "float32":
        x = case.input((1, depth), dtype)
        wf = case.mb.const("wf", rng.standard_normal((filters, depth)).astype(np.float32))
        wt = case.mb.const("wt", rng.standard_normal((filters, memory)).astype(np.float32))
        b = case.mb.const("b", rng.standard_normal(units).astype(np.float32))
        state = case.mb.tensor("state", (1, filters * memory), dtype, variable=True)
        y = case.output((1, units), dtype)
    else:
        x = case.input((1, depth), dtype, scale=0.05, zero_point=-3)
        wf = case.mb.const("wf", rand_int(rng, (filters, depth), edges=False), scale=0.01,
                           zero_point=0)
        wt = case.mb.const("wt", rand_int(rng, (filters, memory), "int16", edges=False) // 64,
                           scale=0.002, zero_point=0)
        b = case.mb.const("b", rng.integers(-300, 300, units).astype(np.int32), scale=1e-5,
                          zero_point=0)
        state = case.mb.tensor("state", (1, filters * memory), "int16", scale=0.004,
                               zero_point=0, variable=True)
        y = case.output((1, units), dtype, scale=0.05, zero_point=-2)
    case.mb.op("SVDF", [x, wf, wt, b, state], [y], rank=rank, fused_activation_function="RELU")
    model = case.bytes()
    sequence = [case.feeds] + [
        [rng.standard_normal((1, depth)).astype(np.float32) if dtype == "float32"
         else rand_int(rng, (1, depth), dtype)] for _ in range(2)]
    session = Session(parse_tflite(model))
    for step, (inputs, want) in enumerate(zip(sequence, tflm.run(model, sequence))):
        got = session.invoke(inputs)[0]
        if dtype == "float32":
            np.testing.assert_allclose(got, want[0], rtol=1e-5, atol=1e-6)
        else:
            assert np.array_equal(got, want[0]), f"invocation {step}"


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_lstm_sequence(dtype, tflm):  # noqa: F811
    """Two invocations of a 3-step LSTM: hidden and cell state carry over."""
    case = Case(RNG_SEED + 14)
    rng = case.rng
    batch, steps, depth, units = 1, 3, 5, 4
    mb = case.mb
    if dtype == "float32":
        x = case.input((batch, steps, depth), dtype)

        def weights(name, shape):
            return mb.const(name, (rng.standard_normal(shape) * 0.5).astype(np.float32))

        def bias(name):
            return mb.const(name, rng.standard_normal(units).astype(np.float32))

        hidden = mb.tensor("h", (batch, units), dtype, variable=True)
        cell = mb.tensor("c", (batch, units), dtype, variable=True)
        y = case.output((batch, steps, units), dtype)
    else:
        x_scale = 0.02
        x = case.input((batch, steps, depth), dtype, scale=x_scale, zero_point=-10)
        h_scale = 1 / 128

        def weights(name, shape):
            return mb.const(name, rand_int(rng, shape, edges=False), scale=0.01, zero_point=0)

        def bias(name):
            return mb.const(name, rng.integers(-2000, 2000, units).astype(np.int32),
                            scale=x_scale * 0.01, zero_point=0)

        hidden = mb.tensor("h", (batch, units), dtype, scale=h_scale, zero_point=3,
                           variable=True)
        cell = mb.tensor("c", (batch, units), "int16", scale=2.0 ** -11, zero_point=0,
                         variable=True)
        y = case.output((batch, steps, units), dtype, scale=h_scale, zero_point=3)
    w_in = [weights(f"wi{g}", (units, depth)) for g in range(4)]
    w_rec = [weights(f"wr{g}", (units, units)) for g in range(4)]
    biases = [bias(f"b{g}") for g in range(4)]
    inputs = [x, *w_in, *w_rec, -1, -1, -1, *biases, -1, -1, hidden, cell, -1, -1, -1, -1]
    mb.op("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y], fused_activation_function="TANH",
          cell_clip=8.0, time_major=False)
    model = case.bytes()
    second = (rng.standard_normal((batch, steps, depth)).astype(np.float32)
              if dtype == "float32" else rand_int(rng, (batch, steps, depth), dtype))
    sequence = [case.feeds, [second]]
    session = Session(parse_tflite(model))
    for step, (feeds, want) in enumerate(zip(sequence, tflm.run(model, sequence))):
        got = session.invoke(feeds)[0]
        if dtype == "float32":
            np.testing.assert_allclose(got, want[0], rtol=1e-5, atol=1e-6)
        else:
            assert np.array_equal(got, want[0]), f"invocation {step}: {got} vs {want[0]}"
