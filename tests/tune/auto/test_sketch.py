"""Sketches of kws's workloads: the hand template is one sketch, the rules add
tiled ones, every point is recorded and read back, and sampled points of every
sketch compute what the reference computes."""

import random

import numpy as np
import pytest

from aot.kernels import lower_group
from aot.kernels.template import ConfigError
from aot.target import Target
from aot.tune.auto import AutoWorkload
from aot.tune.auto.sketch import ORDERS
from aot.tune.workload import extract_workloads
from kernels.kernel_checks import run_kernel

M4 = Target("c -keys=arm_cpu,cpu -mcpu=cortex-m4")


@pytest.fixture(scope="module")
def kws(models_dir):
    ag, workloads = extract_workloads(models_dir / "mlperf_kws_dscnn.tflite", M4)
    return ag, [AutoWorkload.of(w) for w in workloads]


def test_sketches_follow_the_loop_nest(kws):
    _, workloads = kws
    names = [sorted(w.space.sketches) for w in workloads]
    # the convolutions and the dense layer reduce over an int8 dot product (the
    # dot sketch applies), the convolutions also block pixels x channels; the
    # depthwise convolution reduces over taps only (its own blocked intrinsic)
    assert names == [["block", "dot", "template", "tiled"], ["dwblock", "template", "tiled"],
                     ["block", "dot", "template", "tiled"], ["dot", "template", "tiled"]]
    conv = workloads[0].space.sketches["tiled"].space
    knobs = {k.name: k.values for k in conv.knobs}
    # padding is a stage of the first convolution only; the row of 5x64 int32
    # accumulators fits the stack budget, the whole 25x5x64 image does not
    assert knobs["pad"] == ("attach", "inline") and knobs["attach"] == (1, 2, 3)
    assert knobs["order"] == ORDERS and knobs["tile_s"] == (1, 2, 4, 8, 16)
    dense = {k.name: k.values for k in workloads[3].space.sketches["tiled"].space.knobs}
    assert "pad" not in dense and dense["attach"] == (1,)


def test_the_block_sketch_offers_what_the_convolution_allows(kws):
    _, workloads = kws
    first = {k.name: k.values for k in workloads[0].space.sketches["block"].space.knobs}
    # rows of 5 pixels: no pixel blocks that divide the row (blocks of 2 or 4 leave
    # a tail pixel inside the calls); 10x4 taps of one channel: the 4 columns fold
    # into one reduction of 4 bytes; one channel: no pre-widened pairs per tap
    assert first["block"] == ("1x2", "1x4", "2x1", "2x2", "2x4", "3x2", "4x1", "4x2")
    # and the whole 10x4 patches of the row's pixels (5 x 40 values) as one
    # reduction, whose even length allows pre-widened weights and one call
    # per row (the fused epilogue)
    assert first["order"] == ("channels_outer", "row", "row_widened", "patch")
    assert first["fold_kw"] == (False, True)
    assert first["weights"] == ("ohwi", "wide", "wide_pairs")
    assert first["epilogue"] == ("row", "fused")
    assert "steps" not in first and "unroll_taps" not in first
    pointwise = {k.name: k.values for k in workloads[2].space.sketches["block"].space.knobs}
    assert "fold_kw" not in pointwise and pointwise["steps"] == (1, 2)
    assert pointwise["requant_row"] == (True, False)
    assert pointwise["weights"] == ("ohwi", "wide", "wide_pairs")
    assert pointwise["epilogue"] == ("row", "fused")
    values = {"sketch": "block", "block": "2x4", "order": "row_widened", "weights": "wide",
              "steps": 2, "requant_row": True, "epilogue": "row", "optimize": "O2"}
    kernel = workloads[2].lower(workloads[2].space.config(values), "k")
    assert "aot_block_row_s8(" in kernel.source and "aot_requant_row_s8(" in kernel.source
    # the layout rule: the weights are stored as int16 pairs (twice the bytes)
    plain = workloads[2].lower(workloads[2].space.config({**values, "weights": "ohwi"}), "k")
    assert sum(c.data.nbytes for c in kernel.constants) == \
        sum(c.data.nbytes for c in plain.constants) + 64 * 64


def test_the_cost_model_sees_the_blocked_calls(kws):
    from aot.tune.auto.features import _NAMES, loop_features
    _, workloads = kws
    wl = workloads[2]
    base = {"sketch": "block", "block": "2x2", "order": "row", "weights": "ohwi", "steps": 1,
            "requant_row": True, "epilogue": "row", "optimize": "O2"}

    def features(**change):
        row = loop_features(wl.lower(wl.space.config({**base, **change}), "k").func)
        return dict(zip(_NAMES, np.expm1(row)))
    plain = features()
    # 25 rows x 5 pixels x 64 channels x 64 values
    assert plain["block_macs"] == pytest.approx(25 * 5 * 64 * 64)
    assert plain["block_area"] == pytest.approx(4) and plain["block_wide_w"] == 0
    assert features(block="2x4")["block_area"] == pytest.approx(8)
    assert features(weights="wide")["block_wide_w"] == pytest.approx(1)
    assert features(order="row_widened")["block_wide_x"] == pytest.approx(1)
    assert features(steps=2)["block_steps"] == pytest.approx(2)
    # the fused row's call carries the same arguments; its epilogue call is gone
    fused = features(epilogue="fused", weights="wide")
    assert fused["block_macs"] == pytest.approx(25 * 5 * 64 * 64)
    assert fused["block_wide_w"] == pytest.approx(1)


def test_the_dwblock_sketch_offers_what_the_depthwise_layer_allows(kws):
    from aot.tune.auto.features import _NAMES, loop_features
    _, workloads = kws
    wl = workloads[1]
    knobs = {k.name: k.values for k in wl.space.sketches["dwblock"].space.knobs}
    # 25 rows: blocks of 1 or 5 within the stack budget; rows of 5 pixels at
    # stride 1: even blocks, or the whole row; the fused rows exist
    assert knobs["rows"] == (1, 5) and knobs["pixels"] == (2, 4, 5)
    assert knobs["channels"] == (2, 4, 8, 16, 32, 64) and knobs["epilogue"] == ("fused",)
    assert knobs["unroll_widen"] == (False, True)
    point = {"sketch": "dwblock", "rows": 5, "pixels": 4, "channels": 8, "unroll_widen": False,
             "epilogue": "fused", "optimize": "O2"}
    kernel = wl.lower(wl.space.config(point), "k")
    assert "aot_dwblock_requant_s8(" in kernel.source and "aot_requant_row_s8" not in kernel.source
    row = dict(zip(_NAMES, np.expm1(loop_features(kernel.func))))
    assert row["dwblock_macs"] == pytest.approx(25 * 5 * 64 * 9)
    assert (row["dwblock_rows"], row["dwblock_pixels"], row["dwblock_chunk"]) == \
        pytest.approx((5, 4, 8))
    # 64 channels of 32 do not fit the buffer for 5 rows: not a point that lowers
    with pytest.raises(ConfigError, match="do not fit the widening buffer"):
        wl.lower(wl.space.config({**point, "channels": 64}), "k")


def test_the_default_is_the_library_schedule(kws):
    ag, workloads = kws
    for wl in workloads:
        assert wl.default.sketch == "template"
        want = lower_group(wl.group, ag, M4, name="k").source
        assert wl.lower(wl.default, "k").source == want, wl.description


def test_configs_round_trip_through_their_records(kws):
    _, workloads = kws
    rng = random.Random(1)
    for wl in workloads:
        for _ in range(20):
            config = wl.space[rng.randrange(len(wl.space))]
            again = wl.space.config(config.to_json())
            assert again == config and again.to_json() == config.to_json()
    with pytest.raises(ConfigError, match="no sketch 'spiral'"):
        workloads[0].space.config({"sketch": "spiral"})
    with pytest.raises(ConfigError):
        workloads[0].space.config({"sketch": "tiled", "attach": 0})


@pytest.mark.parametrize("index", [1, 3], ids=["depthwise", "dense"])
def test_sampled_points_of_every_sketch_compute_the_reference(kws, index):
    _, workloads = kws
    wl = workloads[index]
    rng = random.Random(index)
    params = wl.lower(wl.default, "k").params
    inputs = [wl.inputs[p.tensor] for p in params if p.role == "input"]
    for name, sketch in wl.space.sketches.items():
        config = wl.space[wl.space.offsets[name] + rng.randrange(len(sketch.space))]
        kernel = wl.lower(config, "k")
        (got,) = run_kernel(kernel, inputs)
        np.testing.assert_array_equal(got, wl.expected.reshape(-1), err_msg=str(config))


def test_mutations_stay_in_their_sketch(kws):
    _, workloads = kws
    wl = workloads[2]
    config = wl.space.config({"sketch": "tiled", **{
        k.name: k.values[0] for k in wl.space.sketches["tiled"].space.knobs}})
    muts = wl.space.mutations(config)
    assert muts and all(m.sketch == "tiled" and m != config for m in muts)
    other = wl.default
    assert wl.space.crossover(config, other, random.Random(0)) is None


@pytest.mark.parametrize("index", [0, 1, 2], ids=["conv", "depthwise", "pointwise"])
@pytest.mark.one_fast
def test_tiled_points_with_the_row_epilogue_compute_the_reference(kws, index):
    _, workloads = kws
    wl = workloads[index]
    params = wl.lower(wl.default, "k").params
    inputs = [wl.inputs[p.tensor] for p in params if p.role == "input"]
    for name in ("tiled", "dot"):
        if name not in wl.space.sketches:
            continue
        knobs = {k.name: k.values for k in wl.space.sketches[name].space.knobs}
        assert knobs["requant_row"] == (False, True)
        base = {"sketch": name, **{k: v[0] for k, v in knobs.items()}}
        for attach in (1, 2):
            config = wl.space.config({**base, "attach": attach, "requant_row": True})
            kernel = wl.lower(config, "k")
            assert "aot_requant_row_s8(" in kernel.source
            (got,) = run_kernel(kernel, inputs)
            np.testing.assert_array_equal(got, wl.expected.reshape(-1), err_msg=str(config))
        # one call per row or pixel: not with the accumulation per output, nor an unrolled epilogue
        with pytest.raises(ConfigError, match="requant_row needs"):
            wl.lower(wl.space.config({**base, "attach": 3, "requant_row": True}), "k")
        with pytest.raises(ConfigError, match="requant_row needs"):
            wl.lower(wl.space.config({**base, "attach": 1, "epilogue": 2,
                                      "requant_row": True}), "k")
    # the dense layer's epilogue is not a row of pixels: no such annotation
    assert all("requant_row" not in {k.name for k in s.space.knobs}
               for n, s in workloads[3].space.sketches.items() if n in ("tiled", "dot"))


def test_block_points_with_the_fused_epilogue_compute_the_reference(kws):
    """The pointwise layer's ``epilogue`` annotation: fused points lower to one
    aot_block_requant_s8 per row (no int32 row, no bias or table constant) and
    compute the reference; the loop orders with several calls per row are
    refused."""
    _, workloads = kws
    wl = workloads[2]
    params = wl.lower(wl.default, "k").params
    inputs = [wl.inputs[p.tensor] for p in params if p.role == "input"]
    knobs = {k.name: k.values for k in wl.space.sketches["block"].space.knobs}
    rng = random.Random(22)
    for _ in range(3):
        values = {"sketch": "block", **{k: rng.choice(v) for k, v in knobs.items()},
                  "order": rng.choice(("row", "row_widened")), "requant_row": True,
                  "epilogue": "fused"}
        kernel = wl.lower(wl.space.config(values), "k")
        assert "aot_block_requant_s8(" in kernel.source
        assert "aot_block_row_s8(" not in kernel.source and "int32_t acc[" not in kernel.source
        (got,) = run_kernel(kernel, inputs)
        np.testing.assert_array_equal(got, wl.expected.reshape(-1), err_msg=str(values))
    base = {"sketch": "block", **{k: v[0] for k, v in knobs.items()}, "epilogue": "fused"}
    with pytest.raises(ConfigError, match="epilogue fused needs requant_row"):
        wl.lower(wl.space.config({**base, "order": "channels_outer"}), "k")
    with pytest.raises(ConfigError, match="epilogue fused needs requant_row"):
        wl.lower(wl.space.config({**base, "order": "row", "requant_row": False}), "k")


def test_patch_points_of_the_first_convolution_compute_the_reference(kws):
    """KWS's first convolution (one channel, 10x4 taps) as the row's whole
    patches: plain and fused epilogues, wide and plain weights, on the host."""
    _, workloads = kws
    wl = workloads[0]
    params = wl.lower(wl.default, "k").params
    inputs = [wl.inputs[p.tensor] for p in params if p.role == "input"]
    base = {"sketch": "block", "block": "3x2", "order": "patch", "fold_kw": True,
            "requant_row": True, "optimize": "O2"}
    for change in ({"weights": "wide", "epilogue": "fused"}, {"weights": "ohwi",
                                                              "epilogue": "row"}):
        config = wl.space.config({**base, **change})
        kernel = wl.lower(config, "k")
        fused = change["epilogue"] == "fused"
        assert ("aot_block_patch_requant_s8(" if fused else "aot_block_patch_row_s8(") \
            in kernel.source
        (got,) = run_kernel(kernel, inputs)
        np.testing.assert_array_equal(got, wl.expected.reshape(-1), err_msg=str(config))
