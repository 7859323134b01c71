"""TFLM's 16x8 quantization (int16 activations, int8 weights): CONV_2D,
DEPTHWISE_CONV_2D, FULLY_CONNECTED, AVERAGE_POOL_2D, MAX_POOL_2D, SOFTMAX,
LOGISTIC, TANH, RELU, RELU6, LEAKY_RELU and CONCATENATION imported, run by the
reference and compiled to C on the host, bit for bit as TFLM runs them; sums
that overflow int32 (int64 accumulation), int32 and int64 biases where TFLM takes both, and the
bias TFLM's depthwise kernel cannot read, and the quantizations TFLM refuses
(or its 16x8 kernels ignore), refused at import."""

from __future__ import annotations

import numpy as np
import pytest
from support.parity import assert_matches_tflm
from support.tflite_builder import ModelBuilder

from aot.frontend import load_model
from aot.frontend.errors import ModelError

I16 = np.iinfo(np.int16)


def _x(rng, shape, extreme=None):
    if extreme is not None:
        return np.full(shape, extreme, np.int16)
    return rng.integers(I16.min, I16.max + 1, shape).astype(np.int16)


def _q(scale):
    return {"scale": scale, "zero_point": 0}


def _conv(rng, op="CONV_2D", hw=(6, 6), cin=3, k=(3, 3), stride=(1, 1), dilation=(1, 1),
          padding="SAME", mult=2, bias="int64", per_channel=True, activation="NONE",
          out_scale=0.02, weights=None):
    mb = ModelBuilder()
    x = mb.input("x", [1, *hw, cin], "int16", **_q(0.01))
    if op == "CONV_2D":
        cout, wshape, axis = 4, (4, *k, cin), 0
    else:
        cout, wshape, axis = cin * mult, (1, *k, cin * mult), 3
    wv = rng.integers(-127, 128, wshape) if weights is None else np.full(wshape, weights)
    ws = rng.uniform(0.002, 0.01, cout if per_channel else 1).astype(np.float32)
    wq = {"scale": ws, "zero_point": 0, "axis": axis} if per_channel else \
        {"scale": float(ws[0]), "zero_point": 0}
    w = mb.const("w", wv.astype(np.int8), "int8", **wq)
    inputs = [x, w]
    if bias:
        bs = 0.01 * (ws if per_channel else np.full(cout, ws[0]))
        inputs.append(mb.const("b", rng.integers(-30000, 30000, cout), bias, scale=bs,
                               zero_point=0, axis=0))
    sh, sw = stride
    out = [(n - ((kk - 1) * d + 1)) // s + 1 if padding == "VALID" else (n + s - 1) // s
           for n, kk, s, d in zip(hw, k, stride, dilation)]
    y = mb.output("y", [1, *out, cout], "int16", **_q(out_scale))
    opts = {"padding": padding, "stride_w": sw, "stride_h": sh,
            "dilation_w_factor": dilation[1], "dilation_h_factor": dilation[0],
            "fused_activation_function": activation}
    if op != "CONV_2D":
        opts["depth_multiplier"] = mult
    mb.op(op, inputs, [y], **opts)
    return mb.finish()


CONV_VARIANTS = [
    {},
    {"stride": (2, 2)},
    {"stride": (2, 1), "padding": "VALID"},
    {"dilation": (2, 2), "hw": (7, 7)},
    {"k": (1, 1)},
    {"bias": "int32"},
    {"bias": None},
    {"per_channel": False},
    {"activation": "RELU"},
    {"activation": "RELU6", "out_scale": 0.001},
    {"activation": "RELU_N1_TO_1", "out_scale": 0.0001},
]


def _id(v):
    return ",".join(f"{k}={v}" for k, v in v.items()) or "default"


@pytest.mark.parametrize("variant", CONV_VARIANTS, ids=_id)
@pytest.mark.one_fast
def test_conv2d_matches_tflm(variant, tflm, tmp_path):  # noqa: F811
    rng = np.random.default_rng(1)
    model = _conv(rng, **variant)
    assert_matches_tflm(tflm, model, [_x(rng, (1, *variant.get("hw", (6, 6)), 3))], tmp_path)


@pytest.mark.parametrize("variant", [v for v in CONV_VARIANTS if v.get("bias") != "int32"]
                         + [{"mult": 1}, {"mult": 3, "stride": (2, 2)}], ids=_id)
@pytest.mark.one_fast
def test_depthwise_conv2d_matches_tflm(variant, tflm, tmp_path):  # noqa: F811
    rng = np.random.default_rng(2)
    model = _conv(rng, "DEPTHWISE_CONV_2D", **variant)
    assert_matches_tflm(tflm, model, [_x(rng, (1, *variant.get("hw", (6, 6)), 3))], tmp_path)


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
@pytest.mark.parametrize("extreme", [I16.max, I16.min])
@pytest.mark.one_fast
def test_conv_sums_beyond_int32_match_tflm(op, extreme, tflm, tmp_path):  # noqa: F811
    """CONV_2D: 64 channels x 3x3 taps of 32767 x 127 add up past 2**31 (TFLM sums
    in int64); DEPTHWISE_CONV_2D's 9 taps stay within int32, checked at the extremes."""
    rng = np.random.default_rng(3)
    cin = 64 if op == "CONV_2D" else 3
    model = _conv(rng, op, hw=(3, 3), cin=cin, k=(3, 3), padding="VALID", mult=1,
                  weights=127, out_scale=1000.0)
    assert_matches_tflm(tflm, model, [_x(rng, (1, 3, 3, cin), extreme)], tmp_path)


def _dense(rng, rows=2, depth=10, units=5, bias="int64", keep_num_dims=False,
           activation="NONE", weights=None, out_scale=0.02):
    mb = ModelBuilder()
    x = mb.input("x", [rows, depth], "int16", **_q(0.01))
    wv = rng.integers(-127, 128, (units, depth)) if weights is None else \
        np.full((units, depth), weights)
    w = mb.const("w", wv.astype(np.int8), "int8", scale=0.005, zero_point=0)
    inputs = [x, w]
    if bias:
        inputs.append(mb.const("b", rng.integers(-30000, 30000, units), bias, **_q(0.01 * 0.005)))
    y = mb.output("y", [rows, units], "int16", **_q(out_scale))
    mb.op("FULLY_CONNECTED", inputs, [y], keep_num_dims=keep_num_dims,
          fused_activation_function=activation)
    return mb.finish()


@pytest.mark.parametrize("variant", [{}, {"bias": "int32"}, {"bias": None},
                                     {"activation": "RELU"}, {"rows": 1, "depth": 1, "units": 1},
                                     {"depth": 600, "weights": 127, "out_scale": 1000.0}],
                         ids=_id)
@pytest.mark.one_fast
def test_fully_connected_matches_tflm(variant, tflm, tmp_path):  # noqa: F811
    rng = np.random.default_rng(4)
    model = _dense(rng, **variant)
    shape = (variant.get("rows", 2), variant.get("depth", 10))
    x = _x(rng, shape, I16.max if "weights" in variant else None)
    assert_matches_tflm(tflm, model, [x], tmp_path)


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("variant", [
    {"padding": "SAME", "stride": 2, "k": 3, "out": 3},
    {"padding": "VALID", "stride": 1, "k": 2, "out": 5},
    {"padding": "SAME", "stride": 2, "k": 2, "out": 3, "activation": "RELU6"},
], ids=_id)
@pytest.mark.one_fast
def test_pool_matches_tflm(op, variant, tflm, tmp_path):  # noqa: F811
    rng = np.random.default_rng(5)
    mb = ModelBuilder()
    x = mb.input("x", [1, 6, 6, 3], "int16", **_q(0.001))
    n = variant["out"]
    y = mb.output("y", [1, n, n, 3], "int16", **_q(0.001))
    s, k = variant["stride"], variant["k"]
    mb.op(op, [x], [y], padding=variant["padding"], stride_w=s, stride_h=s, filter_width=k,
          filter_height=k, fused_activation_function=variant.get("activation", "NONE"))
    assert_matches_tflm(tflm, mb.finish(), [_x(rng, (1, 6, 6, 3))], tmp_path)


@pytest.mark.parametrize("op, scale", [
    ("SOFTMAX", 0.001), ("SOFTMAX", 0.0003),
    ("LOGISTIC", 1 / 4096), ("LOGISTIC", 0.0007), ("LOGISTIC", 1 / 2048),
    ("TANH", 1 / 4096), ("TANH", 1 / 2048), ("TANH", 0.0007), ("TANH", 1 / 1024),
])
@pytest.mark.one_fast
def test_sigmoid_like_and_softmax_match_tflm(op, scale, tflm, tmp_path):  # noqa: F811
    rng = np.random.default_rng(6)
    mb = ModelBuilder()
    x = mb.input("x", [3, 40], "int16", **_q(scale))
    y = mb.output("y", [3, 40], "int16", **_q(1 / 32768))
    mb.op(op, [x], [y], **({"beta": 1.0} if op == "SOFTMAX" else {}))
    xs = _x(rng, (3, 40))
    xs[0, :3] = [I16.min, I16.max, 0]
    assert_matches_tflm(tflm, mb.finish(), [xs], tmp_path)


def test_concatenation_matches_tflm(tflm, tmp_path):  # noqa: F811
    rng = np.random.default_rng(7)
    mb = ModelBuilder()
    a = mb.input("a", [1, 4, 3], "int16", **_q(0.01))
    b = mb.input("b", [1, 4, 2], "int16", **_q(0.01))
    y = mb.output("y", [1, 4, 5], "int16", **_q(0.01))
    mb.op("CONCATENATION", [a, b], [y], axis=2)
    assert_matches_tflm(tflm, mb.finish(), [_x(rng, (1, 4, 3)), _x(rng, (1, 4, 2))], tmp_path)


@pytest.mark.parametrize("bias", ["int32", "int16"])
def test_depthwise_with_a_bias_tflm_cannot_read_is_refused_at_import(bias, tmp_path):
    """TFLM's 16x8 depthwise reads any bias as int64 (an int32 one gives garbage)."""
    path = tmp_path / "m.tflite"
    path.write_bytes(_conv(np.random.default_rng(8), "DEPTHWISE_CONV_2D", bias=bias))
    with pytest.raises(ModelError, match=r"operator 0 \(DEPTHWISE_CONV_2D\): an int16 layer "
                                         rf"needs an int64 bias .*, got {bias}"):
        load_model(path)


def _single(op, dtype, xq, yq, shape=(1, 4, 4, 1), out_shape=None, **opts):
    mb = ModelBuilder()
    x = mb.input("x", list(shape), dtype, **xq)
    y = mb.output("y", list(out_shape or shape), dtype, **yq)
    mb.op(op, [x], [y], **opts)
    return mb.finish()


_POOL = {"shape": (1, 4, 4, 1), "out_shape": (1, 2, 2, 1), "padding": "VALID", "stride_w": 2,
         "stride_h": 2, "filter_width": 2, "filter_height": 2}


@pytest.mark.parametrize("model, message", [
    (lambda: _single("MAX_POOL_2D", "int16", _q(0.01), _q(0.01), **_POOL), None),
    (lambda: _single("AVERAGE_POOL_2D", "int16", _q(0.01), _q(0.02), **_POOL),
     (r"AVERAGE_POOL_2D\): input \(scale 0.01, zero point 0\) and output \(scale 0.02, zero "
      r"point 0\) quantized differently")),
    (lambda: _single("MAX_POOL_2D", "int8", _q(0.01), {"scale": 0.01, "zero_point": 3}, **_POOL),
     r"MAX_POOL_2D\): input .* quantized differently: not supported \(TFLM pools on one"),
    (lambda: _single("LOGISTIC", "int16", _q(0.001), _q(1 / 16384), shape=(1, 4)),
     r"LOGISTIC\): an int16 output needs scale 1/32768 and zero point 0"),
    (lambda: _single("TANH", "int16", {"scale": 0.001, "zero_point": 2}, _q(1 / 32768),
                     shape=(1, 4)),
     r"TANH\): int16 input with zero point 2: not supported"),
    (lambda: _single("SOFTMAX", "int16", _q(0.001), {"scale": 1 / 32768, "zero_point": 5},
                     shape=(1, 4), beta=1.0),
     r"SOFTMAX\): int16 output with zero point 5: not supported"),
], ids=["control", "avg_pool_scales", "max_pool_int8_zero_points", "logistic_scale",
        "tanh_zero_point", "softmax_zero_point"])
def test_quantization_tflm_refuses_is_refused_at_import(model, message, tmp_path):
    """What TFLM refuses in Prepare (or its 16x8 kernels would ignore) is refused
    at import, naming the operator; the control case imports."""
    path = tmp_path / "m.tflite"
    path.write_bytes(model())
    if message is None:
        load_model(path)
        return
    with pytest.raises(ModelError, match=r"operator 0 \(" + message):
        load_model(path)


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D", "CONCATENATION"])
def test_int16_zero_points_are_refused_at_import(op, tmp_path):
    """TFLM's int16 conv and depthwise ignore zero points (its concatenation refuses them)."""
    mb = ModelBuilder()
    zq = {"scale": 0.01, "zero_point": 7}
    x = mb.input("x", [1, 3, 3, 1], "int16", **zq)
    if op == "CONCATENATION":
        y = mb.output("y", [1, 3, 3, 2], "int16", **zq)
        mb.op(op, [x, x], [y], axis=3)
    else:
        w = mb.const("w", np.ones((1, 1, 1, 1), np.int8), "int8", scale=0.01, zero_point=0)
        y = mb.output("y", [1, 3, 3, 1], "int16", **_q(0.01))
        mb.op(op, [x, w], [y], padding="SAME", stride_w=1, stride_h=1)
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=rf"operator 0 \({op}\): int16 input .*with zero point "
                                         r"7: not supported"):
        load_model(path)


@pytest.mark.parametrize("op", ["HARD_SWISH", "ELU", "PRELU"])
def test_activations_tflm_runs_in_int8_only_refuse_int16_at_import(op, tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [1, 4], "int16", **_q(0.01))
    y = mb.output("y", [1, 4], "int16", **_q(0.01))
    alpha = [mb.const("a", np.ones((1, 4)), "int16", **_q(0.01))] if op == "PRELU" else []
    mb.op(op, [x, *alpha], [y])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError, match=rf"operator 0 \({op}\): int16 input: not supported "
                                         r"\(TFLM runs float32 and int8\)"):
        load_model(path)


@pytest.mark.parametrize("op, xq, yq", [
    ("RELU", _q(0.01), _q(0.01)), ("RELU", _q(0.01), _q(0.003)), ("RELU", _q(0.001), _q(0.002)),
    ("RELU6", _q(0.001), _q(0.001)), ("RELU6", {"scale": 0.0001, "zero_point": 5},
                                      {"scale": 0.0001, "zero_point": 5}),
    ("RELU6", _q(0.01), _q(0.01)),
])
@pytest.mark.one_fast
def test_relu_matches_tflm(op, xq, yq, tflm, tmp_path):  # noqa: F811
    rng = np.random.default_rng(10)
    model = _single(op, "int16", xq, yq, shape=(2, 50))
    assert_matches_tflm(tflm, model, [_x(rng, (2, 50))], tmp_path)


@pytest.mark.parametrize("alpha, xq, yq", [
    (0.2, _q(0.01), _q(0.01)), (0.1, _q(0.001), _q(0.003)),
    (1.7, {"scale": 0.001, "zero_point": 6}, {"scale": 0.002, "zero_point": -9}),
])
@pytest.mark.one_fast
def test_leaky_relu_matches_tflm(alpha, xq, yq, tflm, tmp_path):  # noqa: F811
    rng = np.random.default_rng(11)
    model = _single("LEAKY_RELU", "int16", xq, yq, shape=(2, 50), alpha=alpha)
    assert_matches_tflm(tflm, model, [_x(rng, (2, 50))], tmp_path)


def test_relu_with_a_zero_point_is_refused_at_import(tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(_single("RELU", "int16", {"scale": 0.01, "zero_point": 4}, _q(0.01),
                             shape=(1, 4)))
    with pytest.raises(ModelError, match=r"operator 0 \(RELU\): int16 input with zero point 4"):
        load_model(path)
