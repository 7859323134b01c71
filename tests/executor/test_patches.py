"""Patch stages (aot.executor.patches): halo regions by hand, bit-exact patch-by-patch runs of
toy chains, a residual block and the shared models, the refusals, and the peak estimate."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aot.executor import patches as P
from aot.frontend import load_model
from aot.ir import Graph, GraphBuilder, Quantization
from aot.ir.types import TensorType
from aot.passes import optimize
from aot.reference import interpreter
from support.models import MODELS_DIR

QX = Quantization.per_tensor(0.05, 3)
QY = Quantization.per_tensor(0.04, -7)


def _int8_chain(h=10, w=9, pool=True):
    """conv 3x3 SAME -> depthwise 3x3 stride 2 (TF SAME: pad bottom/right) -> max pool 3x3
    SAME -> conv 1x1; nonzero zero points, so a wrong fill shows."""
    rng = np.random.default_rng(5)
    b = GraphBuilder("chain")
    x = b.input("x", (1, h, w, 2), "int8", QX)

    def wq(shape):
        data = rng.integers(-127, 128, shape).astype(np.int8)
        return b.constant("", data, quant=Quantization.per_tensor(0.02, 0))

    def bias(n):
        return b.constant("", rng.integers(-300, 300, n).astype(np.int32),
                          quant=Quantization.per_tensor(0.001, 0))

    def out(shape, q=QY):
        return TensorType(shape, "int8", q)

    y = b.op("conv2d", [x, wq((4, 3, 3, 2)), bias(4)], out((1, h, w, 4)),
             padding=(1, 1, 1, 1))
    oh, ow = (h + 1) // 2, (w + 1) // 2
    ph = (oh - 1) * 2 + 3 - h
    pw = (ow - 1) * 2 + 3 - w
    y = b.op("depthwise_conv2d", [y, wq((1, 3, 3, 4)), bias(4)],
             out((1, oh, ow, 4), Quantization.per_tensor(0.03, 5)),
             strides=(2, 2), padding=(ph // 2, pw // 2, ph - ph // 2, pw - pw // 2),
             depth_multiplier=1, activation="relu")
    if pool:
        y = b.op("max_pool2d", [y], pool_size=(3, 3), padding=(1, 1, 1, 1))
    y = b.op("conv2d", [y, wq((3, 1, 1, 4)), bias(3)], out((1, oh, ow, 3)))
    return b.build([b.op("avg_pool2d", [y], pool_size=(oh, ow))])


def _stage_graph(stage: P.PatchStage) -> Graph:
    return Graph([stage.input], [stage.output], list(stage.nodes))


def _exact(stage: P.PatchStage, seed=0) -> bool:
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, stage.input.shape).astype(stage.input.type.np_dtype)
    return np.array_equal(P.run_stage(stage, x), interpreter.run(_stage_graph(stage), [x])[0])


def test_needs_by_hand():
    """10x9 input; conv 3x3 pad 1; depthwise 3x3 stride 2, pad top 0 / bottom 1 -> 5x5;
    max pool 3x3 pad 1; conv 1x1.  A 2x2 grid: 3x3 tiles at rows 0, 2 and columns 0, 2
    (the second tile moves back inside the image)."""
    stage = P.analyze_stage(_int8_chain(), 4, (2, 2))
    assert stage.tile == (3, 3) and stage.row_starts == (0, 2) and stage.col_starts == (0, 2)
    conv0, dw, pool, conv1 = (stage.tensors[id(n.outputs[0])] for n in stage.nodes)
    assert (conv1.rows, conv1.cols, conv1.fill) == (P.Need(1, 0, 3), P.Need(1, 0, 3), None)
    assert (pool.rows, pool.fill) == (P.Need(1, 0, 3), 5)  # 1x1 conv: no halo; its zero point
    assert (dw.rows, dw.fill) == (P.Need(1, -1, 5), -128)  # the pool's fill: the int8 minimum
    # stride 2, top padding 0 (left 1): rows [2a - 2, 2a + 9), columns [2b - 3, 2b + 8)
    assert (conv0.rows, conv0.cols, conv0.fill) == (P.Need(2, -2, 11), P.Need(2, -3, 11), -7)
    x = stage.tensors[id(stage.input)]
    assert (x.rows, x.cols, x.fill) == (P.Need(2, -3, 13), P.Need(2, -4, 13), 3)
    assert x.patch_shape == (1, 13, 13, 2) and x.patch_bytes == 338
    assert stage.patches() == [(0, 0), (0, 2), (2, 0), (2, 2)]


@pytest.mark.parametrize("grid", [(1, 1), (2, 1), (1, 2), (2, 2), (3, 2), (3, 3), (5, 5)])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_toy_chain_patch_by_patch_is_bit_exact(n, grid):
    stage = P.analyze_stage(_int8_chain(), n, grid)
    assert _exact(stage, seed=n)


def test_the_fill_matters():
    """With any other fill the border patches differ: the test above can fail."""
    stage = P.analyze_stage(_int8_chain(), 2, (2, 2))
    x = stage.tensors[id(stage.input)]
    wrong = dict(stage.tensors)
    wrong[id(stage.input)] = dataclasses.replace(x, fill=x.fill + 1)
    assert not _exact(dataclasses.replace(stage, tensors=wrong))


def test_residual_block_is_bit_exact_and_the_add_reads_a_sub_window():
    """x -> conv 3x3 -> conv 3x3 -> add(x): x's patch has the halo of both convolutions,
    the add reads its middle."""
    rng = np.random.default_rng(3)
    b = GraphBuilder("res")
    x = b.input("x", (1, 8, 8, 2), "float32")

    def conv(t):
        w = b.constant("", rng.standard_normal((2, 3, 3, 2)).astype(np.float32))
        return b.op("conv2d", [t, w, None], padding=(1, 1, 1, 1), activation="relu")

    s = b.op("add", [conv(conv(x)), x])
    g = b.build([b.op("softmax", [b.op("reshape", [s], newshape=(1, 128))])])
    assert P.stage_lengths(g) == [1, 2, 3]
    for grid in [(2, 2), (3, 3), (4, 1)]:
        stage = P.analyze_stage(g, 3, grid)
        assert stage.tensors[id(x)].rows.size == stage.tile[0] + 4
        assert stage.tensors[id(x)].fill == 0.0
        xin = rng.standard_normal((1, 8, 8, 2)).astype(np.float32)
        np.testing.assert_array_equal(P.run_stage(stage, xin),
                                      interpreter.run(_stage_graph(stage), [xin])[0])


def test_refusals():
    g = _int8_chain()
    assert P.stage_lengths(g) == [1, 2, 3, 4]  # the average pool ends the stage
    with pytest.raises(P.PatchError, match="avg_pool2d is not supported yet"):
        P.analyze_stage(g, 5, (2, 2))
    with pytest.raises(P.PatchError, match="7x7 grid does not fit the stage output's 5x5"):
        P.analyze_stage(g, 4, (7, 7))
    with pytest.raises(P.PatchError, match="the graph has 5"):
        P.analyze_stage(g, 6, (2, 2))
    with pytest.raises(P.PatchError, match="must have shape"):
        P.run_stage(P.analyze_stage(g, 1, (2, 2)), np.zeros((1, 3, 3, 2), np.int8))
    with pytest.raises(P.PatchError, match="must not be negative"):
        P.choose_stage(g, allowance=-0.1)


def test_two_fills_for_one_tensor_are_refused():
    b = GraphBuilder("two")
    x = b.input("x", (1, 6, 6, 1), "float32")
    w = b.constant("", np.ones((1, 3, 3, 1), np.float32))
    a = b.op("conv2d", [x, w, None], padding=(1, 1, 1, 1))
    m = b.op("max_pool2d", [x], pool_size=(3, 3), padding=(1, 1, 1, 1))
    g = b.build([b.op("add", [a, m])])
    with pytest.raises(P.PatchError, match="pad it differently"):
        P.analyze_stage(g, 3, (2, 2))


def test_an_add_of_a_constant_is_refused():
    b = GraphBuilder("const")
    x = b.input("x", (1, 4, 4, 1), "float32")
    w = b.constant("", np.ones((1, 3, 3, 1), np.float32))
    a = b.op("conv2d", [x, w, None], padding=(1, 1, 1, 1))
    g = b.build([b.op("add", [a, b.constant("", np.ones((1, 4, 4, 1), np.float32))])])
    assert P.stage_lengths(g) == [1]
    with pytest.raises(P.PatchError, match="add of a constant or a variable"):
        P.analyze_stage(g, 2, (2, 2))


def test_a_stage_leaves_one_tensor():
    b = GraphBuilder("fork")
    x = b.input("x", (1, 6, 6, 1), "float32")
    w = b.constant("", np.ones((1, 3, 3, 1), np.float32))
    a = b.op("conv2d", [x, w, None], padding=(1, 1, 1, 1))
    c = b.op("conv2d", [a, w, None], padding=(1, 1, 1, 1))
    g = b.build([a, c])
    assert P.stage_lengths(g) == [1]
    with pytest.raises(P.PatchError, match="leave 2 tensors"):
        P.analyze_stage(g, 2, (2, 2))


def _model(name):
    return optimize(load_model(MODELS_DIR / f"{name}.tflite"))


def test_vww_first_layers_by_patches_are_bit_exact_and_lower_the_peak():
    g = _model("mlperf_vww_mobilenetv1_025")
    stage = P.analyze_stage(g, 4, (3, 3))
    assert _exact(stage)
    # Caller i/o: whole-step plan 55,296 bytes (the 36,864-byte pointwise output beside its
    # input); the first four layers in patches hold 20,776, the rest of the graph 36,864.
    est = P.choose_stage(g, io_in_workspace=False)
    assert est.bytes_before == 55296 and est.bytes_after == 36864
    assert est.stage is not None and est.extra_work <= 0.05


def test_resnet8_residual_blocks_by_patches_are_bit_exact():
    g = _model("mlperf_ic_resnet8")
    assert P.stage_lengths(g) == [1, 4, 8, 12]  # a stage never cuts a residual block
    stage = P.analyze_stage(g, 8, (4, 4))  # the stem and two residual blocks
    assert _exact(stage)
    est = P.estimate_peak(g, stage)
    assert (est.bytes_before, est.bytes_after) == (32768, 24000)
    # ... but the halos of six 3x3 layers on a 32x32 image double the MACs: within 5 % of
    # extra work nothing lowers ResNet-8's peak.
    assert est.extra_work > 1.0
    assert P.choose_stage(g).stage is None


@st.composite
def _random_chain(draw):
    """1-4 int8 window layers of random kernel, stride, dilation and padding (each side
    below the window), random zero points; then a grid that fits."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    h, w, c = draw(st.integers(4, 12)), draw(st.integers(4, 12)), draw(st.integers(1, 3))
    b = GraphBuilder("rand")

    def q():
        return Quantization.per_tensor(draw(st.sampled_from([0.02, 0.05])),
                                       draw(st.integers(-20, 20)))

    y = x = b.input("x", (1, h, w, c), "int8", q())
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["conv2d", "depthwise_conv2d", "max_pool2d"]))
        kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        s = draw(st.integers(1, 2))
        d = draw(st.integers(1, 2)) if op != "max_pool2d" else 1
        pads = [draw(st.integers(0, (k - 1) * d)) for k in (kh, kw, kh, kw)]
        ih, iw = y.shape[1], y.shape[2]
        if ih + pads[0] + pads[2] < (kh - 1) * d + 1 or iw + pads[1] + pads[3] < (kw - 1) * d + 1:
            break
        oh = (ih + pads[0] + pads[2] - (kh - 1) * d - 1) // s + 1
        ow = (iw + pads[1] + pads[3] - (kw - 1) * d - 1) // s + 1
        if op == "max_pool2d":
            y = b.op(op, [y], pool_size=(kh, kw), strides=(s, s), padding=tuple(pads))
            continue
        cin = y.shape[3]
        cout = cin if op == "depthwise_conv2d" else draw(st.integers(1, 3))
        shape = (1, kh, kw, cout) if op == "depthwise_conv2d" else (cout, kh, kw, cin)
        wt = b.constant("", rng.integers(-127, 128, shape).astype(np.int8),
                        quant=Quantization.per_tensor(0.03, 0))
        bias = b.constant("", rng.integers(-500, 500, cout).astype(np.int32),
                          quant=Quantization.per_tensor(0.0015, 0))
        extra = {"depth_multiplier": 1} if op == "depthwise_conv2d" else {}
        y = b.op(op, [y, wt, bias], TensorType((1, oh, ow, cout), "int8", q()),
                 strides=(s, s), dilation=(d, d), padding=tuple(pads),
                 activation=draw(st.sampled_from(["none", "relu"])), **extra)
    if y is x:
        y = b.op("max_pool2d", [y], pool_size=(1, 1))
    g = b.build([y])
    grid = (draw(st.integers(1, y.shape[1])), draw(st.integers(1, y.shape[2])))
    return g, grid


@given(_random_chain(), st.integers(0, 1000))
@settings(max_examples=60, deadline=None)
@pytest.mark.slow
def test_random_int8_chains_are_bit_exact_for_every_stage(case, seed):
    g, grid = case
    assert P.stage_lengths(g) == list(range(1, len(g.nodes) + 1))
    assert _exact(P.analyze_stage(g, len(g.nodes), grid), seed=seed)
