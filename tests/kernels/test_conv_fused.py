"""The convolution row helper fused with its requantizing epilogue
(aot.kernels.conv2d.fuse.fuse_conv_epilogue, aot_conv_requant_*_s8).

The rows built from OHWI weights, the rewrite of the two row calls into one,
where the library fuses by default and where it does not, and the fused
kernels bit for bit: on the host (the portable scratch path, for every
shape) and on an emulated Cortex-M4 (slow: the DSP path, whose blocks
requantize from registers, and its scratch fallback forced where the
library would not fuse).
"""

from __future__ import annotations

import re
import shutil
from importlib import resources

import numpy as np
import pytest
from graphs import conv_graph
from kernel_checks import all_values, check_group, cross_compile, seeded_inputs

from aot.kernels import lower_group
from aot.kernels.conv2d import fuse, paths
from aot.kernels.registry import TEMPLATES
from aot.passes import annotations, optimize

ARM = "c -keys=arm_cpu,cpu -mcpu=cortex-m4"
HELIUM = "c -keys=arm_mve,arm_cpu,cpu -mcpu=cortex-m55"
#: An unfused row call: aot_conv_s8 or one of its widened entry points.
UNFUSED = re.compile(r"\baot_conv_(acc_[a-z_]+_)?s8\(")


def _lower(variant, target=ARM, fuse_epilogue=None, seed=3, name="k", **forced):
    """The conv group of ``variant`` lowered for ``target``, with the
    ``fuse_epilogue`` knob forced when given (the row tile when it fits) and
    the ``forced`` knob values."""
    ag = optimize(conv_graph("conv2d", seed=seed, **variant))
    group = annotations(ag).groups[0]
    key = "arm_mve" if "arm_mve" in target else "arm_cpu"
    tpl = TEMPLATES[("conv2d", key)]
    seen = {}

    def schedule(s, final, stages):
        values = tpl.default_values(stages, final)
        seen.update(values)
        if fuse_epilogue is not None:
            tiles = tpl.knobs(stages, final)[0].values
            values = {**values, "fuse_epilogue": fuse_epilogue,
                      "tile": tiles[0] if fuse_epilogue else values["tile"]}
        tpl.apply(s, final, stages, {**values, **forced})
    k = lower_group(group, ag, target, name=name, schedule=schedule)
    return k, ag, group, seen


def test_the_widening_buffer_size_is_read_from_the_header(monkeypatch):
    """conv_fuses sizes windows by the C header's AOT_WIDE_WORDS, its one
    definition; a capacity defined twice or never is an error."""
    from aot.kernels import support
    text = resources.files("aot.kernels").joinpath("include/aot_kernel_int8.h").read_text()
    assert re.search(r"#define AOT_WIDE_WORDS (\d+)", text).group(1) == str(paths.WIDE_WORDS)
    assert support.header_define("AOT_WIDE_WORDS") == paths.WIDE_WORDS
    twice = support._headers() + (("extra.h", "#define AOT_WIDE_WORDS 8\n"),)
    monkeypatch.setattr(support, "_headers", lambda: twice)
    with pytest.raises(RuntimeError, match="define AOT_WIDE_WORDS 2 times"):
        support.header_define("AOT_WIDE_WORDS")


def test_rows_are_bounded_per_output_channel():
    """One row per output channel of OHWI weights, refused when one channel's
    128 * sum |w| + |bias| reaches 2^30."""
    w = np.ones((3, 2, 2, 5), np.int64)
    rows = fuse.conv_requant_rows(w, np.array([7, -7, 0]), 2**30 + 5, -3, 4)
    assert rows.shape == (16,)  # one group of four channels, the last one padded
    assert [fuse.row_of(rows, c)[0] for c in range(3)] == [14, -14, 0]  # 2 * bias
    reach = 128 * 20
    assert fuse.conv_requant_rows(w, np.array([0, 2**30 - reach - 1, 0]), 2**30 + 5, -3,
                                  4) is not None
    assert fuse.conv_requant_rows(w, np.array([0, 2**30 - reach, 0]), 2**30 + 5, -3, 4) is None


def test_pointwise_rows_become_one_fused_call():
    """Before: aot_conv_s8 and aot_requant_row_s8 per output row through an
    int32 row; after: one aot_conv_requant_wide_s8 reading the rows constant, no
    accumulator row, no bias or table constants."""
    k, _, _, values = _lower({"cin": 8, "cout": 6, "hw": (4, 5), "k": (1, 1),
                              "padding": (0, 0, 0, 0)})
    assert values["fuse_epilogue"] is True and values["tile"] == "row"
    assert "aot_conv_requant_wide_s8(" in k.source
    assert "aot_conv_s8(" not in k.source and "aot_requant_row_s8(" not in k.source
    assert "int32_t acc[" not in k.source
    assert len(k.constants) == 2  # the weights and the (2*bias, m, kh, e) rows
    assert k.constants[1].data.shape == (32,)


@pytest.mark.parametrize("variant, target, why", [
    ({"cin": 3}, ARM, "three channels: no widened path"),
    ({"cin": 64, "cout": 3, "hw": (3, 3)}, ARM, "a 3x3x64 window passes the buffer"),
    ({"cin": 8, "k": (1, 1), "padding": (0, 0, 0, 0)}, HELIUM, "Helium's vector epilogue"),
    ({"cin": 8, "cout": 48, "k": (1, 1), "padding": (0, 0, 0, 0)},
     "c -keys=arm_cpu,cpu -mcpu=cortex-m0", "no DSP extension"),
])
def test_the_library_keeps_two_calls_where_the_dsp_path_does_not_fuse(variant, target, why):
    # no knob either: elsewhere the fused helper's fallback would read a
    # pixel's window again after writing part of its outputs, which the
    # overlap proof does not allow for (KWS on the Cortex-M0 was wrong so)
    k, _, _, values = _lower(variant, target)
    assert "fuse_epilogue" not in values, why
    assert UNFUSED.search(k.source) and "aot_requant_row_s8(" in k.source


def test_the_knob_off_keeps_the_two_calls():
    k, *_ = _lower({"cin": 8, "k": (1, 1), "padding": (0, 0, 0, 0)}, fuse_epilogue=False)
    assert "aot_conv_requant_" not in k.source
    assert UNFUSED.search(k.source) and "aot_requant_row_s8(" in k.source


#: Fused rows on every path (aot_conv_requant_wide_s8, _patch_s8, _scratch_s8,
#: the entry point the case's call names): the widened blocks (3x2, 2x2, 1x4,
#: 1x2 and single channels), the im2col patches, and forced where the library
#: would not fuse, the scratch of 2 pixels x 32 channels (more than 32
#: channels, an odd pixel, padding, strides, few channels, a window too big
#: for the buffer).
FUSED = [
    ({"cin": 8, "cout": 7, "hw": (3, 7), "k": (1, 1), "padding": (0, 0, 0, 0)}, "wide"),
    ({"cin": 12, "cout": 5, "hw": (2, 4), "k": (1, 1), "padding": (0, 0, 0, 0),
      "activation": "relu6"}, "wide"),
    ({"cin": 16, "cout": 6, "hw": (4, 9), "strides": (2, 2), "activation": "relu"}, "wide"),
    ({"cin": 4, "cout": 3, "hw": (5, 7), "k": (3, 1), "dilation": (2, 1)}, "wide"),
    ({"cin": 3, "cout": 37, "hw": (5, 5)}, "scratch"),
    ({"cin": 64, "cout": 3, "hw": (3, 5)}, "scratch"),
    ({"cin": 5, "cout": 33, "hw": (3, 40)}, "scratch"),  # one pixel at a time
    # widened im2col patches: 48 bytes (the 512-byte buffer), 144 (the 1 KiB one)
    ({"cin": 1, "cout": 5, "hw": (10, 9), "k": (3, 4), "strides": (2, 2),
      "padding": (1, 1, 1, 2)}, "patch"),
    ({"cin": 2, "cout": 3, "hw": (11, 12), "k": (9, 8), "padding": (4, 3, 4, 4)},
     "long_patch"),
]


@pytest.mark.parametrize("variant, path", FUSED, ids=str)
@pytest.mark.one_fast
def test_fused_kernels_match_the_reference_on_the_host(variant, path):
    k, ag, group, _ = _lower(variant, fuse_epilogue=True, seed=11)
    assert f"aot_conv_requant_{path}_s8(" in k.source
    check_group(k, group, ag, all_values(ag, seeded_inputs(ag, 11)))
    cross_compile(k)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="needs qemu-system-arm")
def test_fused_kernels_are_bit_exact_on_an_emulated_cortex_m4(tmp_path):
    import m4_firmware

    cases = []
    for n, (variant, _) in enumerate(FUSED):
        k, ag, group, _ = _lower(variant, fuse_epilogue=True, seed=23, name=f"f{n}")
        values = all_values(ag, seeded_inputs(ag, 23))
        tensors = {t.name: t for t in ag.tensors()}
        before = [None if p.role == "output" else values[id(tensors[p.tensor])]
                  for p in k.params]
        after = [None if p.role == "input" else values[id(tensors[p.tensor])]
                 for p in k.params]
        cases.append((k, f"f{n}", before, after))
    assert m4_firmware.check_on_qemu(cases, tmp_path) == len(cases)


def _node_with_weights(w, bias):
    """A stand-in conv2d node: weights and bias data, output channels."""
    t = lambda data: type("T", (), {"data": data})()  # noqa: E731
    out = type("T", (), {"shape": (1, 1, 1, w.shape[0])})()
    return type("N", (), {"op": "conv2d", "inputs": [None, t(w), t(bias)],
                          "outputs": [out]})()


def test_all_zero_channels_take_the_one_rounding_form_with_the_same_output():
    """A channel whose weights are all zero outputs MBQM(bias) + offset for every
    input: with a shift past the fold bound (or a small multiplier) it takes
    (2^30 + 1, -1) and bias 4 * MBQM(bias), which gives the same value; the
    other channels, and zero channels already in the form, keep theirs."""
    from aot.kernels.conv2d.compute import CONSTANT_CHANNEL, constant_channels
    from aot.passes.annotated import QuantParams
    from aot.quant.arith import multiply_by_quantized_multiplier as mbqm

    w = np.zeros((5, 1, 1, 8), np.int8)
    w[0] = 3  # a live channel with a large shift: not replaced (not constant)
    bias = np.array([1000, 2**30 - 64, -77_000_000, 12345, 5], np.int64)
    m = np.array([2**30 + 7, 1320764593, 1500000000, 2**29, 2**30 + 9], np.int32)
    shift = np.array([-27, -27, -31, -3, -5], np.int32)
    qp = QuantParams(m, shift, 0, -128, (-128, 127))
    qp2, folded = constant_channels(_node_with_weights(w, bias), qp, bias)
    replaced = [1, 2, 3]  # zero weights and outside the form; 4 is in it already
    for c in range(5):
        if c in replaced:
            assert (qp2.multiplier[c], qp2.shift[c]) == CONSTANT_CHANNEL
        else:
            assert (qp2.multiplier[c], qp2.shift[c], folded[c]) == (m[c], shift[c], bias[c])
        before = mbqm(np.int32(bias[c]), m[c], shift[c])
        after = mbqm(np.int32(folded[c]), qp2.multiplier[c], qp2.shift[c])
        assert max(min(after, 512), -512) == max(min(before, 512), -512)
    # nothing outside the form: the same parameters back
    inside = QuantParams(np.full(5, 2**30 + 3, np.int32), np.full(5, -3, np.int32), 0, -128,
                         (-128, 127))
    assert constant_channels(_node_with_weights(w, bias), inside, bias)[0] is inside


def test_vww_pointwise_layers_with_pruned_channels_are_fused(models_dir):
    """VWW's pointwise layers from 12x12x64 on have all-zero channels with right
    shifts up to 31: replaced, every pointwise layer takes the fused rows."""
    from aot.frontend import load_model
    ag = optimize(load_model(models_dir / "mlperf_vww_mobilenetv1_025.tflite"))
    fused = [g.name for g in annotations(ag).groups
             if g.anchor is not None and g.anchor.op == "conv2d"
             and "aot_conv_requant_wide_s8(" in lower_group(g, ag, ARM, name="k").source]
    assert len(fused) == 13  # all but the first (3 input channels)


def test_the_fused_call_names_its_path_from_constant_arguments_only():
    """conv2d.paths.fused_row_helper(x_cs, kh, kw, c_n, dw, widen): the widened
    entry points for constant arguments they take, the portable scratch path
    for a deciding argument that is not a constant, widen off or columns that
    are not contiguous."""
    from aot.tir import expr as E
    c = E.const
    assert paths.fused_row_helper(c(8), c(1), c(1), c(8), c(1), c(1)) == paths.FUSED_WIDE
    assert paths.fused_row_helper(c(1), c(10), c(4), c(1), c(1), c(1)) == paths.FUSED_PATCH
    assert paths.fused_row_helper(E.Var("x_cs"), c(1), c(1), c(8), c(1), c(1)) \
        == paths.FUSED_SCRATCH
    assert paths.fused_row_helper(c(8), c(1), c(1), c(8), c(1), c(0)) == paths.FUSED_SCRATCH
    assert paths.fused_row_helper(c(16), c(1), c(1), c(8), c(1), c(1)) == paths.FUSED_SCRATCH
    assert paths.fused_row_helper(c(2), c(9), c(8), c(2), c(1), c(1)) \
        == paths.FUSED_LONG_PATCH
    assert paths.PIXEL_ORDERED == {paths.FUSED_WIDE, paths.FUSED_PATCH,
                                   paths.FUSED_LONG_PATCH}


@pytest.mark.parametrize("variant, entry", [
    ({"cin": 8, "cout": 3, "hw": (3, 5)}, "aot_conv_acc_wide_s8("),
    ({"cin": 64, "cout": 3, "hw": (3, 3)}, "aot_conv_acc_rows_s8("),   # 3x3x64: row by row
    ({"cin": 1, "cout": 3, "hw": (10, 9), "k": (3, 4)}, "aot_conv_acc_patch_s8("),
    ({"cin": 2, "cout": 3, "hw": (11, 12), "k": (9, 8)}, "aot_conv_acc_long_patch_s8("),
    ({"cin": 3}, "aot_conv_s8("),   # three channels: no widened path
])
def test_the_unfused_call_names_its_widened_path(variant, entry):
    """conv2d.paths.name_conv_paths: with the epilogue not fused, each row's
    aot_conv_s8 call names the widened path its constant shape takes (the
    entry points take neither x_cs nor widen), and keeps aot_conv_s8 with
    the tuner's widen_input off."""
    k, *_ = _lower(variant, fuse_epilogue=False)
    calls = {m.group(0) for m in UNFUSED.finditer(k.source)}
    assert calls == {entry}
    k, *_ = _lower(variant, fuse_epilogue=False, widen_input=False)
    assert "aot_conv_acc_" not in k.source and "aot_conv_s8(" in k.source
