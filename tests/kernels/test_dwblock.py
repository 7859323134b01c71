"""The blocked depthwise intrinsic (depthwise_conv2d/include/aot_dwblock.h,
aot.kernels.depthwise_conv2d.blocked): kernel columns paired for SMLAD, weights
packed at compile time, the input widened once per call.  Depthwise layers
scheduled by the auto tuner's ``dwblock`` sketch against the reference
interpreter on random shapes (padding, stride 2, odd widths, channel counts
that are no multiple of the chunk, several rows per call, kernels other than
3x3): the portable path on the host, the SMLAD path and its assembly on an
emulated Cortex-M4 (slow)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from graphs import conv_graph
from kernel_checks import all_values, run_kernel, seeded_inputs

from aot.kernels import lower_group
from aot.kernels.depthwise_conv2d import blocked as dwb
from aot.kernels.depthwise_conv2d.schedules import apply_dwblock, dwblock_knobs
from aot.kernels.template import ConfigError
from aot.passes import annotations, optimize
from aot.te.schedule import ScheduleError

ARM = "c -keys=arm_cpu,cpu -mcpu=cortex-m4"


def test_pack_dwblock_pairs_each_kernel_row_for_even_and_odd_columns():
    w = np.arange(1, 1 + 2 * 3 * 2, dtype=np.int8).reshape(1, 2, 3, 2)   # KH 2, KW 3, C 2
    got = dwb.pack_dwblock(w).view("<i2").reshape(2, 2, 4, 2)           # c, kh, word, half
    row = w[0, 0, :, 1]                                                  # channel 1, row 0
    # E_0 = (w0, w1), E_1 = (w2, 0), O_0 = (0, w0), O_1 = (w1, w2)
    assert got[1, 0].tolist() == [[row[0], row[1]], [row[2], 0], [0, row[0]], [row[1], row[2]]]
    doubled = dwb.pack_dwblock(w, 2).view("<i2")
    np.testing.assert_array_equal(doubled, 2 * got.reshape(-1))
    # even kernel widths: E_j = (w[2j], w[2j+1]) only, O ends with (w[KW-1], 0)
    w4 = np.array([[[[1], [2], [3], [4]]]], dtype=np.int8)
    assert dwb.pack_dwblock(w4).view("<i2").tolist() == [1, 2, 3, 4, 0, 1, 2, 3, 4, 0]


def _cases(seed: int, n: int):
    """Random depthwise layers and dwblock points: each draws a shape (odd and
    even widths, 1..19 channels, padding or not, stride 1 or 2, 3x3 mostly),
    then a point of the sketch's space for it (every epilogue form once in a
    while, by hand: the sketch offers one per workload)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        k = [(3, 3), (3, 3), (3, 3), (2, 4), (5, 3), (1, 1)][int(rng.integers(6))]
        stride = int(rng.integers(1, 3))
        pad = tuple(int(v) for v in rng.integers(0, 2, 4)) if k != (1, 1) else (0, 0, 0, 0)
        hw = (int(rng.integers(k[0] + 1, 10)), int(rng.integers(k[1] + 1, 14)))
        variant = dict(hw=hw, cin=int(rng.integers(1, 20)), k=k, strides=(stride, stride),
                       padding=pad, activation=["none", "relu6"][int(rng.integers(2))])
        if variant["cin"] == 1:   # one input channel is computed as a convolution
            variant["cin"] = 2
        ag = optimize(conv_graph("depthwise_conv2d", seed=seed + len(out), **variant))
        (group,) = [g for g in annotations(ag).groups if g.kind != "view"]
        seen = {}

        def probe(s, final, stages, seen=seen):
            seen["knobs"] = dwblock_knobs(stages, final)
        lower_group(group, ag, ARM, name="probe", schedule=probe)
        if seen["knobs"] is None:
            continue
        cfg = {knob.name: knob.values[int(rng.integers(len(knob.values)))]
               for knob in seen["knobs"]}
        if cfg["epilogue"] == "fused" and rng.random() < 0.25:
            cfg["epilogue"] = "loops"     # the sums, then the epilogue's own loops
        out.append((ag, group, variant, cfg))
    return out


def _lowered(cases, prefix: str, seed: int):
    kernels = []
    for n, (ag, group, variant, cfg) in enumerate(cases):
        values = all_values(ag, seeded_inputs(ag, seed + n))
        tensors = {t.name: t for t in ag.tensors()}
        try:
            kernel = lower_group(group, ag, ARM, name=f"{prefix}{n}",
                                 schedule=lambda s, final, stages, c=cfg: apply_dwblock(
                                     s, final, stages, c))
        except ConfigError:
            continue  # a chunk of channels too wide for this many rows: not a point
        assert "aot_dwblock_" in kernel.source, (variant, cfg)
        before = [values[id(tensors[p.tensor])] if p.role == "input" else None
                  for p in kernel.params]
        after = [values[id(tensors[p.tensor])] if p.role == "output" else None
                 for p in kernel.params]
        kernels.append((kernel, f"{prefix}{n}", before, after, f"{variant} {cfg}"))
    return kernels


def test_random_dwblock_layers_match_the_reference_on_the_host():
    cases = _lowered(_cases(11, 14), "dwb", 11)
    assert len(cases) >= 10
    forms = set()
    for kernel, _, before, after, name in cases:
        forms.add("fused" if "aot_dwblock_requant_s8(" in kernel.source else "sums")
        (got,) = run_kernel(kernel, [b for b in before if b is not None])
        want = next(a for a in after if a is not None)
        np.testing.assert_array_equal(got, want.reshape(-1), err_msg=name)
    assert forms == {"fused", "sums"}


def test_each_epilogue_form_computes_the_reference_the_fused_one_from_doubled_weights():
    ag = optimize(conv_graph("depthwise_conv2d", seed=3, hw=(6, 7), cin=8))
    (group,) = [g for g in annotations(ag).groups if g.kind != "view"]
    sizes = {}
    for form in ("fused", "loops", "row"):
        cfg = {"rows": 2, "pixels": 2, "channels": 8, "epilogue": form}
        kernel = lower_group(group, ag, ARM, name="k", schedule=lambda s, f, st, c=cfg:
                             apply_dwblock(s, f, st, c))
        (weights,) = [c for c in kernel.constants if c.data.size == 8 * 3 * 4 * 4]
        sizes[form] = np.abs(weights.data.view("<i2")).max()
        assert ("aot_dwblock_requant_s8(" in kernel.source) == (form == "fused")
        assert ("aot_requant_row_s8(" in kernel.source) == (form == "row")
        (got,) = run_kernel(kernel, seeded_inputs(ag, 3))
        want = all_values(ag, seeded_inputs(ag, 3))[id(ag.outputs[0])]
        np.testing.assert_array_equal(got, want.reshape(-1), err_msg=form)
    # the same weights, doubled for the fused form
    assert sizes["fused"] % 2 == 0 and sizes["fused"] == 2 * sizes["row"] == 2 * sizes["loops"]


def test_out_of_range_blocks_and_chunks_are_refused():
    with pytest.raises(ScheduleError, match="no dwblock helper for blocks of 7"):
        dwb.dwblock_intrin(1, 8, 4, (3, 3), (1, 1), 7, 4)
    with pytest.raises(ScheduleError, match="not within 1..4"):
        dwb.dwblock_intrin(1, 8, 4, (3, 3), (1, 1), 2, 8)
    with pytest.raises(ScheduleError, match="over the buffer"):
        dwb.dwblock_intrin(8, 96, 64, (3, 3), (1, 1), 4, 64)
    ag = optimize(conv_graph("depthwise_conv2d", seed=4, hw=(8, 40), cin=64))
    (group,) = [g for g in annotations(ag).groups if g.kind != "view"]
    with pytest.raises(ConfigError, match="do not fit the widening buffer"):
        lower_group(group, ag, ARM, name="k", schedule=lambda s, f, st: apply_dwblock(
            s, f, st, {"rows": 2, "pixels": 4, "channels": 64, "epilogue": "fused"}))


def test_only_depthwise_accumulations_get_the_sketch():
    seen = {}

    def probe(s, final, stages):
        seen["knobs"] = dwblock_knobs(stages, final)
    for op, kw in (("conv2d", {"cin": 4, "cout": 4}), ("depthwise_conv2d", {"cin": 4}),
                   ("depthwise_conv2d", {"cin": 4, "dilation": (2, 2)}),
                   ("depthwise_conv2d", {"cin": 2, "depth_multiplier": 2})):
        ag = optimize(conv_graph(op, seed=5, hw=(6, 6), **kw))
        (group,) = [g for g in annotations(ag).groups if g.kind != "view"]
        lower_group(group, ag, ARM, name="probe", schedule=probe)
        offered = seen["knobs"] is not None
        assert offered == (op == "depthwise_conv2d" and "dilation" not in kw
                           and "depth_multiplier" not in kw), (op, kw)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="needs qemu-system-arm")
def test_random_dwblock_layers_are_bit_exact_on_an_emulated_cortex_m4(tmp_path):
    import m4_firmware
    cases = [c[:4] for c in _lowered(_cases(17, 12), "dwb", 17)]
    assert m4_firmware.check_on_qemu(cases, tmp_path) == len(cases)
