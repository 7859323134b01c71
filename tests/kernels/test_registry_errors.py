"""The strategy registry, target keys, the Kernel record and the errors of lower_group."""

from __future__ import annotations

import numpy as np
import pytest
from graphs import conv_graph, dense_graph
from kernel_checks import cross_compile

from aot.ir import GraphBuilder
from aot.kernels import COMPUTES, HANDWRITTEN, STRATEGIES, KernelError, lower_group, support_files
from aot.kernels.registry import HEADERS, compute_rule, strategy
from aot.passes import annotations, optimize
from aot.target import Target


def test_the_registries_list_every_operator_with_a_generic_strategy():
    assert sorted(COMPUTES) == sorted([
        "add", "avg_pool2d", "broadcast_to", "concatenate", "conv2d", "dense",
        "depthwise_conv2d", "dequantize", "equal", "greater", "greater_equal", "hard_swish",
        "leaky_relu", "less", "less_equal", "logical_and", "logical_not", "logical_or",
        "logistic", "max_pool2d", "maximum", "mean", "minimum", "mirror_pad", "mul",
        "not_equal", "pad", "quantize", "reduce_max", "reduce_min", "relu", "relu6",
        "resize_nearest", "select", "softmax", "strided_slice", "sub", "tanh", "transpose",
        "abs", "neg", "floor", "ceil", "round", "sqrt", "rsqrt", "exp", "log", "sin", "cos",
        "square", "erf", "div", "squared_difference", "floor_div", "floor_mod", "add_n", "elu",
        "gelu",
        "prelu", "cast", "zeros_like", "arg_max", "arg_min", "sum", "gather", "gather_nd",
        "cumsum", "batch_matmul", "transpose_conv2d", "resize_bilinear", "l2_pool2d",
        "dynamic_update_slice", "reduce_all", "log_softmax", "l2_normalization", "topk"])
    assert sorted(HANDWRITTEN) == ["assign_variable", "lstm", "read_variable", "svdf"]
    anchors = {"conv2d", "depthwise_conv2d", "dense", "avg_pool2d", "max_pool2d", "softmax",
               "mean", "reduce_max", "reduce_min", "arg_max", "arg_min", "sum", "cumsum",
               "batch_matmul", "transpose_conv2d", "l2_pool2d", "reduce_all", "log_softmax",
               "l2_normalization", "topk",
               "elementwise"}
    assert {a for a, key in STRATEGIES if key == "generic"} == anchors


def test_registering_a_strategy_twice_is_refused():
    with pytest.raises(ValueError, match="registered twice"):
        strategy("conv2d")(lambda s, final, stages: None)


def test_an_operator_has_one_kernel():
    with pytest.raises(ValueError, match="'svdf': the operator's kernel is registered twice"):
        compute_rule("svdf")(lambda ctx, node: None)   # svdf is hand-written
    assert "svdf" not in COMPUTES


def test_a_header_that_does_not_exist_is_refused_naming_it():
    with pytest.raises(ValueError, match="'frobnicate' declares support headers that do not "
                                         "exist: aot_frobnicate.h"):
        compute_rule("frobnicate", headers=("aot_frobnicate.h",))(lambda ctx, node: None)
    assert "frobnicate" not in COMPUTES and "frobnicate" not in HEADERS


def _groups(graph):
    ag = optimize(graph)
    return ag, [g for g in annotations(ag).groups]


def test_kernel_record_and_prototype():
    ag, groups = _groups(dense_graph(seed=1))
    k = lower_group(groups[0], ag, "c", name="net_k0")
    assert k.name == "net_k0"
    assert [(p.role, p.dtype, p.nbytes) for p in k.params] == [("input", "int8", 24),
                                                               ("output", "int8", 10)]
    assert k.prototype == "int32_t net_k0(const int8_t* restrict x0, int8_t* restrict y1);"
    assert k.prototype[:-1] in k.source
    # the shared headers and dense's own, no other operator's
    assert k.includes == ("aot_kernel_target.h", "aot_kernel_fixedpoint.h", "aot_dense.h")
    assert '#include "aot_dense.h"' in k.source and "aot_conv2d.h" not in k.source
    assert k.scratch_bytes == 0
    assert k.constant_bytes == 5 * 12 + 5 * 4  # int8 weights + int32 bias
    assert k.macs == 2 * 5 * 12 and k.op_names == ("dense",)
    assert "aot_mbqm" in support_files(None)["aot_kernel_fixedpoint.h"]


@pytest.mark.parametrize("target", ["c -keys=arm_cpu,cpu -mcpu=cortex-m4",
                                    Target("c -keys=riscv,cpu")])
@pytest.mark.one_fast
def test_targets_with_other_keys_fall_back_to_the_generic_strategy(target):
    ag, groups = _groups(conv_graph("conv2d", seed=2))
    k = lower_group(groups[0], ag, target, name="k")
    cross_compile(k)


def test_a_view_group_has_no_kernel():
    b = GraphBuilder("v")
    x = b.input("x", (2, 6), "float32")
    r = b.op("reshape", [x], newshape=(3, 4))
    ag, groups = _groups(b.build([b.op("softmax", [r])]))
    view = next(g for g in groups if g.kind == "view")
    with pytest.raises(KernelError, match="is a view"):
        lower_group(view, ag, "c", name="k")


def test_every_ir_operator_has_a_kernel_or_is_a_view():
    from aot.ir import REGISTRY
    assert set(REGISTRY) - set(COMPUTES) - set(HANDWRITTEN) == {"reshape", "squeeze",
                                                                "expand_dims"}


def test_an_operator_without_kernel_names_the_group_and_what_exists(monkeypatch):
    monkeypatch.delitem(COMPUTES, "tanh")  # as an operator added to the IR before its kernel
    b = GraphBuilder("t")
    x = b.input("x", (2, 6), "float32")
    ag, groups = _groups(b.build([b.op("tanh", [x])]))
    with pytest.raises(KernelError,
                       match=r"tanh .* not supported yet \(kernels exist for: abs, add"):
        lower_group(groups[0], ag, "c", name="k")


def test_int16_hard_swish_is_refused_not_miscomputed():
    # int8 HARD_SWISH is a table (tests/kernels/test_activation_movement.py); int16 has no
    # kernel (TFLM has none either; int16 RELU has: tests/kernels/test_int16_layers.py)
    from aot.ir import Quantization
    b = GraphBuilder("r")
    x = b.input("x", (4,), "int16", Quantization.per_tensor(0.1, 0))
    ag, groups = _groups(b.build([b.op("hard_swish", [x])]))
    with pytest.raises(KernelError, match=r"hard_swish \(.*\) from int16 to int16: not "
                                          r"supported yet \(int8 and float32; int16 LOGISTIC"):
        lower_group(groups[0], ag, "c", name="k")


def test_constants_are_emitted_once_per_kernel_as_static_arrays():
    ag, groups = _groups(conv_graph("conv2d", seed=3, per_channel=True))
    k = lower_group(groups[0], ag, "c", name="k")
    assert k.source.count("static const int8_t k_c0[") == 1
    weights = np.asarray(ag.nodes[0].inputs[1].data)
    assert f"static const int8_t k_c0[{weights.size}]" in k.source


@pytest.mark.parametrize("cin, expect", [(16, "acc[48]"), (256, "acc[256]")])
def test_wide_convolutions_fall_back_from_rows_to_pixels_to_bound_the_stack(cin, expect):
    """A row of 3 pixels x 16 channels fits the stack budget; x 256 does not, so that
    kernel keeps one pixel's accumulators (and window) instead."""
    ag, groups = _groups(conv_graph("depthwise_conv2d", seed=4, hw=(5, 3), cin=cin))
    k = lower_group(groups[0], ag, "c", name="k")
    assert f"int32_t {expect};" in k.source
