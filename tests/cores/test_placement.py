"""The placement pass (aot.passes.placement) as a pure IR transformation.

Property checked on the shared models: executing the placed graph group by
group, and every split group part by part (each part an operator of its own
from ``part_node``, reading its slice of the input and writing its slice of
the output), is bit-exact with the reference run of the unsplit model.  The
parts of a split node cover its output exactly once, and a barrier follows
every parallel step.  Small before/expected graphs check the policy.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.models import MODELS_DIR

from aot import reference
from aot.frontend import load_model
from aot.ir import DeviceAnnotation, GraphBuilder, IRError, Quantization, TensorType
from aot.passes import (PASSES, PassContext, PassError, annotations, optimize, part_node,
                        place_cores)
from aot.passes.placement import SPLIT_PART
from aot.reference.interpreter import evaluate

MODELS = ["mlperf_kws_dscnn", "mlperf_vww_mobilenetv1_025", "mlperf_ic_resnet8",
          "mlperf_ad_fc_autoencoder"]


def placed(graph, cores: int, **config):
    with PassContext(config={"placement.cores": cores, **config}):
        return optimize(graph)


def run_parts(graph, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The placed ``graph`` run one group after another, a split group one part after
    another, every part computed on its slices alone."""
    ann = annotations(graph)
    values = {id(t): x for t, x in zip(graph.inputs, inputs, strict=True)}

    def value(t):
        return t.data if t.kind == "constant" else values[id(t)]

    for group in ann.groups:
        devices = ann.devices(group.nodes[0])
        if devices[0].part == "whole":
            for node in group.nodes:
                outs = evaluate(node, [None if t is None else value(t) for t in node.inputs])
                for t, y in zip(node.outputs, outs, strict=True):
                    values[id(t)] = np.asarray(y)
            continue
        anchor = group.anchor
        y = anchor.outputs[0]
        whole = {id(t): np.zeros(t.shape, t.type.np_dtype)
                 for node in group.nodes for t in node.outputs}
        for device in devices:
            part = part_node(anchor, device)
            lo, hi = part.out
            cut = [slice(None)] * len(y.shape)
            cut[part.axis] = slice(lo, hi)
            data = value(anchor.inputs[0])
            if part.data_rows is not None:
                data = data[:, part.data_rows[0]:part.data_rows[1]]
            mine = {id(y): evaluate(part.node, [data, *[
                None if t is None else t.data for t in part.node.inputs[1:]]])[0]}
            for node in group.nodes[1:]:
                args = []
                for t in node.inputs:
                    if t is None:
                        args.append(None)
                    elif id(t) in mine:
                        args.append(mine[id(t)])
                    else:
                        args.append(_operand_slice(value(t), y, part.axis, lo, hi))
                mine[id(node.outputs[0])] = np.asarray(evaluate(node, args)[0])
            for key, v in mine.items():
                whole[key][tuple(cut)] = v
        for key, v in whole.items():
            values[key] = v
    return [value(t) for t in graph.outputs]


def _operand_slice(x: np.ndarray, y, axis: int, lo: int, hi: int) -> np.ndarray:
    k = axis - (len(y.shape) - x.ndim)
    if k < 0 or x.shape[k] == 1:
        return x
    cut = [slice(None)] * x.ndim
    cut[k] = slice(lo, hi)
    return x[tuple(cut)]


def random_inputs(graph, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for t in graph.inputs:
        info = np.iinfo(t.type.np_dtype)
        out.append(rng.integers(info.min, info.max + 1, t.shape, dtype=t.type.np_dtype))
    return out


@pytest.mark.parametrize("cores", [2, 3])
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.one_fast
def test_parts_one_after_another_are_bit_exact(model, cores):
    graph = load_model(MODELS_DIR / f"{model}.tflite")
    split = placed(graph, cores)
    ann = annotations(split)
    splits = [g for g in ann.groups if ann.devices(g.nodes[0])[0].part != "whole"]
    assert len(splits) >= 2, [str(ann.devices(g.nodes[0])) for g in ann.groups]
    for g in splits:
        devices = ann.devices(g.nodes[0])
        assert [d.core for d in devices] == list(range(cores))
        n = g.anchor.outputs[0].shape[1 if devices[0].part == "rows" else -1]
        assert devices[0].start == 0 and devices[-1].stop == n
        assert all(a.stop == b.start for a, b in zip(devices, devices[1:]))
        assert devices[0].part == SPLIT_PART[g.anchor.op]
    # Every split group is followed by a barrier naming its output, before the next group.
    held = {b.before: b.waits_for for b in ann.barriers}
    for g, after in zip(ann.groups, [*ann.groups[1:], None]):
        if g in splits:
            first = after.nodes[0] if after is not None else None
            assert [t.name for t in g.outputs(split)] == list(held[first])
    for seed in range(2):
        inputs = random_inputs(graph, seed)
        expected = reference.run(graph, inputs)
        for got, want in zip(run_parts(split, inputs), expected, strict=True):
            np.testing.assert_array_equal(got, want)


def test_the_pass_is_named_and_last():
    assert PASSES["place_cores"] is place_cores
    assert list(PASSES)[-2:] == ["fuse_ops", "place_cores"]


def test_one_core_changes_nothing():
    graph = load_model(MODELS_DIR / "mlperf_kws_dscnn.tflite")
    one = optimize(graph)
    assert annotations(one).placement == {}
    assert annotations(one).barriers == ()
    assert str(one) == str(placed(graph, 1))


def _conv_graph(height: int, pad=(1, 1, 1, 1), stride=1):
    b = GraphBuilder("conv")
    q = Quantization((0.05,), (0,))
    x = b.input("x", (1, height, 4, 3), "int8", q)
    w = b.constant("w", np.arange(2 * 3 * 3 * 3).reshape(2, 3, 3, 3) % 7 - 3, "int8",
                   Quantization((0.02, 0.03), (0, 0), 0))
    bias = b.constant("bias", [5, -5], "int32", Quantization((0.001, 0.0015), (0, 0), 0))
    y = b.op("conv2d", [x, w, bias], padding=pad, strides=(stride, stride), name="conv",
             out_type=TensorType((1, (height + pad[0] + pad[2] - 3) // stride + 1,
                                  (4 + pad[1] + pad[3] - 3) // stride + 1, 2),
                                 "int8", Quantization((0.1,), (3,))))
    return b.build([y])


def test_a_small_layer_stays_whole():
    """Before: one conv of 7 x 4 x 2 x 27 = 1,512 MACs; expected: whole on core 0, no
    barrier (below placement.min_macs)."""
    graph = placed(_conv_graph(7), 2)
    ann = annotations(graph)
    assert [str(d) for n in graph.nodes for d in ann.devices(n)] == ["cpu:0 shared"]
    assert ann.barriers == ()


def test_row_parts_and_their_halo():
    """Before: a 3x3 conv, padding 1, stride 2, over 9 rows (5 output rows); expected:
    core 0 rows [0, 2) read input rows [0, 4) padded 1 on top; core 1 rows [2, 5) read
    [3, 9) padded 1 below; one barrier at the end."""
    graph = placed(_conv_graph(9, stride=2), 2, **{"placement.min_macs": 0})
    ann = annotations(graph)
    conv = graph.nodes[0]
    assert [str(d) for d in ann.devices(conv)] == ["cpu:0 rows[0:2] shared",
                                                   "cpu:1 rows[2:5] shared"]
    parts = [part_node(conv, d) for d in ann.devices(conv)]
    assert [p.data_rows for p in parts] == [(0, 4), (3, 9)]
    assert [p.node.attrs["padding"] for p in parts] == [(1, 1, 0, 1), (0, 1, 1, 1)]
    assert [(b.before, b.waits_for) for b in ann.barriers] == [(None, ("conv",))]
    x = random_inputs(graph, 0)
    np.testing.assert_array_equal(run_parts(graph, x)[0], reference.run(graph, x)[0])


def _two_branches():
    b = GraphBuilder("branches")
    q = Quantization((0.05,), (0,))
    x = b.input("x", (1, 8, 8, 4), "int8", q)
    p = b.op("max_pool2d", [x], pool_size=(2, 2), strides=(2, 2), name="left")
    r = b.op("avg_pool2d", [x], pool_size=(2, 2), strides=(2, 2), name="right")
    y = b.op("concatenate", [p, r], name="join", axis=3)
    return b.build([y])


def test_independent_branches_side_by_side():
    """Before: two pools of one input, then their concatenation; expected: the pools
    on cores 0 and 1 at once, a barrier before the concatenation naming both, which runs
    on core 0."""
    graph = placed(_two_branches(), 2)
    ann = annotations(graph)
    where = {n.name: [str(d) for d in ann.devices(n)] for n in graph.nodes}
    assert where == {"left": ["cpu:0 shared"], "right": ["cpu:1 shared"],
                     "join": ["cpu:0 shared"]}
    [barrier] = ann.barriers
    assert barrier.before.name == "join" and barrier.waits_for == ("left", "right")
    assert "barrier (waits for left, right)" in str(graph)


def test_dense_splits_by_channels():
    b = GraphBuilder("fc")
    x = b.input("x", (1, 64), "int8", Quantization((0.05,), (1,)))
    w = b.constant("w", (np.arange(40 * 64).reshape(40, 64) % 11) - 5, "int8",
                   Quantization(tuple(0.01 + 0.001 * i for i in range(40)), (0,) * 40, 0))
    y = b.op("dense", [x, w], name="fc",
             out_type=TensorType((1, 40), "int8", Quantization((0.2,), (-2,))))
    graph = placed(b.build([y]), 2, **{"placement.min_macs": 0})
    ann = annotations(graph)
    assert [str(d) for d in ann.devices(graph.nodes[0])] == [
        "cpu:0 channels[0:20] shared", "cpu:1 channels[20:40] shared"]
    part = part_node(graph.nodes[0], ann.devices(graph.nodes[0])[1])
    assert part.node.inputs[1].quant.scale[0] == pytest.approx(0.03)
    xs = random_inputs(graph, 3)
    np.testing.assert_array_equal(run_parts(graph, xs)[0], reference.run(graph, xs)[0])


def test_refusals():
    with pytest.raises(PassError, match="placement.cores = 0: give at least 1"):
        placed(_conv_graph(7), 0)
    with pytest.raises(PassError, match="runs after fuse_ops"):
        _without_fusion()
    with pytest.raises(IRError, match="memory scope 'tcm'"):
        DeviceAnnotation(scope="tcm")


def _without_fusion():
    with PassContext(config={"placement.cores": 2}, disabled_pass=["fuse_ops"]):
        return optimize(_conv_graph(7))
