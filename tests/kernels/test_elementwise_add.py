"""The int8 add/sub forms (aot.kernels.elementwise): each operand's rescale
chosen over its 256 values at compile time (affine, one-rounding or
two-rounding), the output's one-rounding requantization, and every pair of
int8 values against the reference, alone and fused after a convolution
(ResNet-8's residual add)."""

from __future__ import annotations

import numpy as np
import pytest
from graphs import binary_graph, conv_graph
from kernel_checks import check_graph, seeded_inputs

from aot.kernels import lower_group
from aot.passes import annotations, optimize

ARM = "qemu/mps2-an386"


def _all_pairs(g):
    """Inputs a (256, 1) and b (1, 256) holding every int8 value: the
    broadcast output covers every pair."""
    values = np.arange(-128, 128, dtype=np.int8)
    return [values.reshape(256, 1), values.reshape(1, 256)]


def _source(g, target="c"):
    ag = optimize(g)
    return lower_group(annotations(ag).groups[0], ag, target, name="k").source


@pytest.mark.parametrize("op", ["add", "sub"])
@pytest.mark.parametrize("scales, activation", [
    ((0.05, 0.03, 0.07), "none"),     # b: one-rounding operand; a: affine (m = 2^30)
    ((0.03, 0.05, 0.02), "relu"),
    ((0.04, 0.04, 0.09), "relu6"),    # equal scales: both operands affine
    ((0.5, 0.0001, 3e-7), "none"),    # output multiplier above one: two-rounding output
    ((0.5, 1e-9, 0.4), "none"),       # b's term rounds to a constant (affine, slope 0)
    ((0.05, 0.03, 68.0), "none"),     # right shift 29: kh past int32, aot_requant output
], ids=str)
@pytest.mark.one_fast
def test_every_pair_of_int8_values_matches_the_reference(op, scales, activation):
    g = binary_graph(op, a_shape=(256, 1), b_shape=(1, 256), scales=scales,
                     activation=activation)
    check_graph(g, _all_pairs(g), target=ARM)


def test_the_forms_are_chosen_per_operand():
    """Different scales: the larger-scale operand's multiplier is 2^30 with no
    shift, an exact affine function (no call); the other's is the SMMLAR form
    aot_dw_requant, and so is the output's; no two-rounding aot_mbqm is left."""
    src = _source(binary_graph("add", scales=(0.05, 0.03, 0.07)), ARM)
    assert "aot_mbqm(" not in src
    assert src.count("aot_dw_requant(") == 2 and "aot_clamp_s8(" in src
    # an output multiplier above one keeps the two-rounding form for the output only
    src = _source(binary_graph("add", scales=(0.5, 0.0001, 3e-7)), ARM)
    assert src.count("aot_mbqm(") == 1 and src.count("aot_dw_requant(") == 1
    # an output offset that does not fold into kh: the one-rounding form
    src = _source(binary_graph("add", scales=(0.05, 0.03, 68.0)), ARM)
    assert "aot_mbqm(" not in src and src.count("aot_requant(") == 1


def test_int16_operands_keep_the_two_rounding_form():
    src = _source(binary_graph("add", dtype="int16"))
    assert "requant(" not in src and src.count("aot_mbqm(") == 3


@pytest.mark.parametrize("variant", [
    {"op": "conv2d", "cin": 8, "cout": 8, "k": (1, 1), "padding": (0, 0, 0, 0)},
    {"op": "conv2d", "cin": 4, "cout": 6, "seed": 9},
    {"op": "depthwise_conv2d", "cin": 8, "seed": 4},
], ids=str)
@pytest.mark.one_fast
def test_a_residual_add_fused_after_a_convolution_matches_the_reference(variant):
    variant = dict(variant)
    g = conv_graph(variant.pop("op"), residual=True, **variant)
    kernels = check_graph(g, seeded_inputs(g, 13), target=ARM)
    assert "aot_mbqm(" not in kernels[0].source
