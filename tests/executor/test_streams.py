"""Stream stages (aot.executor.streams): windows and phases by hand, band-by-band runs bit-exact
with the whole layers (strides, residual blocks, borders, one and several rows per band), the
refusals, and ResNet-8's stage."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_patches import _int8_chain, _model, _random_chain, _stage_graph

from aot.executor import patches as P
from aot.executor import streams as S
from aot.ir import GraphBuilder, Quantization
from aot.ir.types import TensorType
from aot.reference import interpreter


def _exact(stage: S.StreamStage, seed=0) -> bool:
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, stage.input.shape).astype(stage.input.type.np_dtype)
    return np.array_equal(S.run_stream(stage, x), interpreter.run(_stage_graph(stage), [x])[0])


def test_windows_by_hand():
    """10x9 input; conv 3x3 pad 1; depthwise 3x3 stride 2, pad top 0 / bottom 1 -> 5x5;
    max pool 3x3 pad 1; conv 1x1.  One output row per band."""
    stage = S.analyze_stream(_int8_chain(), 4, 1)
    conv0, dw, pool, conv1 = (stage.tensors[id(n.outputs[0])] for n in stage.nodes)
    x = stage.tensors[id(stage.input)]
    # (scale, new rows, phase, window, fill)
    assert (conv1.scale, conv1.new, conv1.phase, conv1.window) == (1, 1, 0, 1)
    assert (pool.new, pool.phase, pool.window, pool.fill) == (1, 0, 1, 5)  # 1x1: no halo
    # the pool reads rows [j - 1, j + 2): phase 1 (newest row j + 1), three rows held
    assert (dw.new, dw.phase, dw.window, dw.fill) == (1, 1, 3, -128)
    # the depthwise computes row j + 1, reading rows [2j + 2, 2j + 5) (top padding 0)
    assert (conv0.scale, conv0.new, conv0.phase, conv0.window, conv0.fill) == (2, 2, 3, 3, -7)
    assert (x.scale, x.new, x.phase, x.window, x.fill) == (2, 2, 4, 4, 3)
    # the input's kept rows lie above the image from band -2 on (2 * -2 + 4 <= 0)
    assert stage.first_band == -2 and stage.bands == 5
    assert stage.window_bytes == 4 * 9 * 2 + 3 * 9 * 4 + 3 * 5 * 4 + 1 * 5 * 4
    assert stage.peak_bytes == stage.window_bytes + 10 * 9 * 2 + 5 * 5 * 3
    assert S.read_rows(stage, stage.nodes[2], dw.tensor) == (0, 3)
    assert S.read_rows(stage, stage.nodes[1], conv0.tensor) == (0, 3)


@pytest.mark.parametrize("band", [1, 5])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_toy_chain_band_by_band_is_bit_exact(n, band):
    stage = S.analyze_stream(_int8_chain(), n, band)  # outputs of 10 or 5 rows
    assert _exact(stage, seed=n)
    assert stage.extra_macs >= 0


def test_the_fill_matters():
    """With any other fill the border rows differ: the test above can fail."""
    stage = S.analyze_stream(_int8_chain(), 2, 1)
    x = stage.tensors[id(stage.input)]
    wrong = dict(stage.tensors)
    wrong[id(stage.input)] = dataclasses.replace(x, fill=x.fill + 1)
    assert not _exact(dataclasses.replace(stage, tensors=wrong))


def _residual(h=8, w=7, stride=1):
    """x -> conv 3x3 -> conv 3x3 (stride s) -> add(conv 1x1 stride s of x), float."""
    rng = np.random.default_rng(3)
    b = GraphBuilder("res")
    x = b.input("x", (1, h, w, 2), "float32")

    def conv(t, k=3, s=1):
        wt = b.constant("", rng.standard_normal((2, k, k, 2)).astype(np.float32))
        oh, ow = -(-t.shape[1] // s), -(-t.shape[2] // s)
        ph = max((oh - 1) * s + k - t.shape[1], 0)
        pw = max((ow - 1) * s + k - t.shape[2], 0)
        return b.op("conv2d", [t, wt, None], strides=(s, s),
                    padding=(ph // 2, pw // 2, ph - ph // 2, pw - pw // 2), activation="relu")

    short = conv(x, 1, stride) if stride > 1 else x
    s = b.op("add", [conv(conv(x), 3, stride), short])
    flat = b.op("reshape", [s], newshape=(1, s.shape[1] * s.shape[2] * 2))
    return b.build([b.op("softmax", [flat])])


@pytest.mark.parametrize("stride,band", [(1, 1), (1, 2), (1, 4), (2, 1), (2, 2)])
def test_residual_blocks_are_bit_exact(stride, band):
    g = _residual(stride=stride)
    n = len(g.nodes) - 2
    stage = S.analyze_stream(g, n, band)
    x = stage.tensors[id(stage.input)]
    assert x.scale == stride and x.fill == 0.0
    xin = np.random.default_rng(band).standard_normal(stage.input.shape).astype(np.float32)
    np.testing.assert_array_equal(S.run_stream(stage, xin),
                                  interpreter.run(_stage_graph(stage), [xin])[0])


def test_starting_a_band_late_breaks_the_top_border():
    g = _residual(stride=2)
    stage = S.analyze_stream(g, len(g.nodes) - 2, 1)
    assert stage.first_band == -1  # x's kept rows: [-2, 0) at band -1, [0, 2) at band 0
    assert _exact(stage)
    assert not _exact(dataclasses.replace(stage, first_band=stage.first_band + 1))


def test_refusals():
    g = _int8_chain()
    with pytest.raises(P.PatchError, match="bands of 2 rows do not divide the stage output's 5"):
        S.analyze_stream(g, 4, 2)
    with pytest.raises(P.PatchError, match="avg_pool2d is not supported yet"):
        S.analyze_stream(g, 5, 1)
    with pytest.raises(P.PatchError, match="the graph has 5"):
        S.analyze_stream(g, 6, 1)
    with pytest.raises(P.PatchError, match="must have shape"):
        S.run_stream(S.analyze_stream(g, 1, 1), np.zeros((1, 3, 3, 2), np.int8))
    assert S.stream_bands(g, 4) == [1, 5]


def test_two_fills_for_one_tensor_are_refused():
    b = GraphBuilder("two")
    x = b.input("x", (1, 6, 6, 1), "float32")
    wt = b.constant("", np.ones((1, 3, 3, 1), np.float32))
    a = b.op("conv2d", [x, wt, None], padding=(1, 1, 1, 1))
    m = b.op("max_pool2d", [x], pool_size=(3, 3), padding=(1, 1, 1, 1))
    g = b.build([b.op("add", [a, m])])
    with pytest.raises(P.PatchError, match="pad it differently"):
        S.analyze_stream(g, 3, 1)


def test_resnet8_stem_and_two_blocks_stream_bit_exact_without_recomputation():
    g = _model("mlperf_ic_resnet8")
    stage = S.analyze_stream(g, 8, 1)  # the stem and two residual blocks, 16 bands
    assert _exact(stage)
    # input 3,072 + output 8,192 whole, and windows of a few rows: 10,624 bytes
    assert stage.window_bytes == 10624 and stage.peak_bytes == 21888
    # only out-of-image rows of bands partly inside the image are extra: 2 % of the stage
    assert 0 < stage.extra_macs < 0.02 * stage.macs
    for n, band in [(4, 1), (4, 4), (8, 2), (12, 1)]:
        assert _exact(S.analyze_stream(g, n, band), seed=band)


@given(_random_chain(), st.integers(0, 1000))
@settings(max_examples=40, deadline=None)
def test_random_int8_chains_are_bit_exact_for_every_band(case, seed):
    g, _ = case
    bands = S.stream_bands(g, len(g.nodes))
    band = bands[seed % len(bands)]
    assert _exact(S.analyze_stream(g, len(g.nodes), band), seed=seed)


@st.composite
def _random_residual(draw):
    """int8 x -> max pool or conv (k, SAME) -> conv (k', stride s, TF SAME) -> add(shortcut:
    x itself, or a 1x1 stride-s conv of it), random sizes and zero points; then a band that
    divides the output."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    h, w, c = draw(st.integers(3, 11)), draw(st.integers(3, 9)), draw(st.integers(1, 3))
    s = draw(st.integers(1, 2))
    b = GraphBuilder("rres")

    def q():
        return Quantization.per_tensor(draw(st.sampled_from([0.02, 0.05])),
                                       draw(st.integers(-20, 20)))

    def conv(t, k, stride):
        oh, ow = -(-t.shape[1] // stride), -(-t.shape[2] // stride)
        ph = max((oh - 1) * stride + k - t.shape[1], 0)
        pw = max((ow - 1) * stride + k - t.shape[2], 0)
        wt = b.constant("", rng.integers(-127, 128, (c, k, k, c)).astype(np.int8),
                        quant=Quantization.per_tensor(0.03, 0))
        bias = b.constant("", rng.integers(-500, 500, c).astype(np.int32),
                          quant=Quantization.per_tensor(0.0015, 0))
        return b.op("conv2d", [t, wt, bias], TensorType((1, oh, ow, c), "int8", q()),
                    strides=(stride, stride),
                    padding=(ph // 2, pw // 2, ph - ph // 2, pw - pw // 2),
                    activation=draw(st.sampled_from(["none", "relu"])))

    x = b.input("x", (1, h, w, c), "int8", q())
    k = draw(st.sampled_from([1, 3]))
    # (a max pool and a convolution reading x would fill it differently: refused)
    first = b.op("max_pool2d", [x], pool_size=(3, 3), padding=(1, 1, 1, 1)) \
        if s == 1 and draw(st.booleans()) else conv(x, k, 1)
    short = conv(x, 1, s) if s > 1 else x
    y = b.op("add", [conv(first, draw(st.sampled_from([1, 3])), s), short],
             TensorType(short.shape, "int8", q()))
    g = b.build([b.op("avg_pool2d", [y], pool_size=tuple(y.shape[1:3]))])
    bands = S.stream_bands(g, len(g.nodes) - 1)
    return g, bands[draw(st.integers(0, len(bands) - 1))]


@given(_random_residual(), st.integers(0, 1000))
@settings(max_examples=40, deadline=None)
def test_random_int8_residual_blocks_are_bit_exact_for_every_band(case, seed):
    g, band = case
    assert _exact(S.analyze_stream(g, len(g.nodes) - 1, band), seed=seed)


def _deep(layers: int):
    """A wide first layer (24x24x16, worth streaming), a stride-2 depthwise down to
    12x12x16, then ``layers`` depthwise 3x3 and pointwise 1x1 int8 convolutions
    alternating on 12x12x8: a model whose stage search has many stage lengths."""
    rng = np.random.default_rng(layers)
    b = GraphBuilder(f"deep{layers}")
    q = Quantization.per_tensor(0.05, 3)

    def conv(y, op, cout, k=1, stride=1):
        cin = y.shape[3]
        shape = (1, k, k, cin) if op == "depthwise_conv2d" else (cout, k, k, cin)
        w = b.constant("", rng.integers(-127, 128, shape).astype(np.int8),
                       quant=Quantization.per_tensor(0.02, 0))
        bias = b.constant("", rng.integers(-300, 300, cout).astype(np.int32),
                          quant=Quantization.per_tensor(0.001, 0))
        h = -(-y.shape[1] // stride)
        pad = max((h - 1) * stride + k - y.shape[1], 0)
        extra = {"depth_multiplier": 1} if op == "depthwise_conv2d" else {}
        return b.op(op, [y, w, bias], TensorType((1, h, h, cout), "int8", q),
                    strides=(stride, stride),
                    padding=(pad // 2, pad // 2, pad - pad // 2, pad - pad // 2),
                    activation="relu", **extra)

    y = b.input("x", (1, 24, 24, 3), "int8", q)
    y = conv(y, "conv2d", 16, 3)
    y = conv(y, "depthwise_conv2d", 16, 3, 2)
    y = conv(y, "conv2d", 8)
    for i in range(layers):
        y = conv(y, "depthwise_conv2d", 8, 3) if i % 2 == 0 else conv(y, "conv2d", 8)
    return b.build([y])


def _exhaustive(graph, allowance=None, band=None):
    """choose_stream's choice by the unbounded search: every stage length and band
    analysed (what the bound must not change)."""
    alive = P.alive_by_node(graph, True)
    best = P.estimate_peak(graph, None, alive=alive) if allowance is not None else None
    for stage in S.stream_candidates(graph):
        if band is not None and stage.band != band:
            continue
        est = P.estimate_peak(graph, stage, alive=alive)
        if allowance is not None and est.extra_work > allowance:
            continue
        if best is None or (est.bytes_after, est.extra_work) < (best.bytes_after,
                                                                best.extra_work):
            best = est
    return best


def _key(est):
    stage = est.stage
    return (stage and (len(stage.nodes), stage.band), est.bytes_after, est.extra_work)


@pytest.mark.parametrize("graph", [_deep(12), _int8_chain(), _residual(stride=2),
                                   _model("mlperf_ic_resnet8")],
                         ids=["deep", "chain", "residual", "resnet8"])
def test_bounded_search_chooses_what_the_exhaustive_search_chooses(graph):
    for allowance in (None, 0.0, 0.05, 10.0):
        assert _key(S.choose_stream(graph, allowance=allowance)) == \
            _key(_exhaustive(graph, allowance))
    for band in S.stream_bands(graph, P.stage_lengths(graph)[0]):
        assert _key(S.choose_stream(graph, band=band)) == _key(_exhaustive(graph, band=band))


@pytest.mark.slow
def test_stream_search_analyses_a_bounded_number_of_candidates(monkeypatch):
    """Planning grows linearly with the layers: past the first few layers one row of each
    layer's output already outweighs the best peak, so 120 and 240 layers analyse the same
    candidates (the exhaustive search analysed every stage length and band: 6 per layer)."""
    calls = []
    analyze = S.analyze_stream

    def counted(graph, n, band, **kw):
        calls.append((n, band))
        return analyze(graph, n, band, **kw)

    monkeypatch.setattr(S, "analyze_stream", counted)
    counts = {}
    for layers in (120, 240):
        calls.clear()
        est = S.choose_stream(_deep(layers), allowance=0.05)
        assert est.stage is not None and len(est.stage.nodes) <= 3
        counts[layers] = len(calls)
    assert counts[120] == counts[240] <= 100
