"""How far a kernel's output may overlap its input (aot.kernels.overlap).

Toy loop nests whose limit is worked out by hand, the cases where nothing
can be proved, the limits of the convolution kernels, and every kind of
kernel run with its output placed exactly at its limit over its input in
one allocation (built -O3 under ASan/UBSan): the output equals the
reference.
"""

from __future__ import annotations

import numpy as np
import pytest
from graphs import conv_graph, dense_graph, pool_graph
from kernel_checks import all_values, run_with_shared_bytes, seeded_inputs
from support.marks import fast_first

from aot import te
from aot.codegen.build import lower
from aot.codegen.c import NP_TYPES
from aot.kernels import kernel as kernel_module
from aot.kernels import lower_group
from aot.kernels.overlap import overlap_limit
from aot.passes import annotations, optimize
from aot.tir import expr as E
from aot.tir import stmt as S

ARM = "c -keys=arm_cpu,cpu -mcpu=cortex-m4"


def _limit(build, dtype="int8", n=8):
    x = te.placeholder((n,), dtype, "x")
    y = build(x)
    func = lower(te.create_schedule(y.op), [x, y], name="f")
    return overlap_limit(func, func.params[0], func.params[1])


def test_limits_of_toy_loop_nests_match_the_hand_worked_values():
    # y[i] = x[i]: each byte is read by the statement that overwrites it.
    assert _limit(lambda x: te.compute((8,), lambda i: x[i], name="y")) == 0
    # y[i] = x[i+1]: y may start one byte later, on the byte just read.
    assert _limit(lambda x: te.compute((7,), lambda i: x[i + 1], name="y")) == 1
    # y[i] = x[i] + x[i+1]: y[i] may land on x[i], which no later step reads.
    assert _limit(lambda x: te.compute((7,), lambda i: x[i] + x[i + 1], name="y")) == 0
    # Reversed: only y's last byte, y[7] = x[0], may land on x[0] (same statement).
    assert _limit(lambda x: te.compute((8,), lambda i: x[7 - i], name="y")) == -7
    # Widening int8 -> int16: y (16 bytes) may end where x ends.
    assert _limit(lambda x: te.compute((8,), lambda i: x[i].astype("int16"), name="y")) == -8
    # A sum accumulated in y itself: y is first written (zeroed) before x is
    # read, so y must end where x starts.
    k = te.reduce_axis((0, 8), "k")
    assert _limit(lambda x: te.compute((1,), lambda i: te.sum(x[k].astype("int32"), axis=k),
                                       name="y")) == -4


def test_nothing_is_proved_for_data_dependent_indices():
    x = te.placeholder((8,), "int8", "x")
    idx = te.placeholder((4,), "int32", "idx")
    y = te.compute((4,), lambda i: x[idx[i]], name="y")
    func = lower(te.create_schedule(y.op), [x, idx, y], name="gather")
    assert overlap_limit(func, func.params[0], func.params[2]) is None


def _copy_nest(extents, per_row: bool):
    """``for i: for j < extents[i]: y[3i + j] = x[2i + j + 1]``, either as one
    nest whose inner extent depends on ``i`` or, when ``per_row``, as one
    constant-extent loop per row in sequence (the same accesses in the same order)."""
    x, y = S.Buffer("x", "int8", (16,)), S.Buffer("y", "int8", (16,))
    i, j = E.Var("i"), E.Var("j")

    def row(r, extent):
        return S.For(j, E.const(0), extent, "serial",
                     S.Store(y, E.Load("int8", x, r * 2 + j + 1), r * 3 + j))
    if per_row:
        body = S.SeqStmt([row(E.const(r), E.const(e)) for r, e in enumerate(extents)])
    else:
        extent = E.Select(E.Binary("eq", i, E.const(0)), E.const(extents[0]),
                          E.Select(E.Binary("eq", i, E.const(1)), E.const(extents[1]),
                                   E.const(extents[2])))
        body = S.For(i, E.const(0), E.const(3), "serial", row(i, extent))
    func = S.PrimFunc("f", [x, y], body)
    return overlap_limit(func, x, y)


def test_a_nest_with_varying_extents_has_the_limit_of_its_rows_in_sequence():
    for extents in [(3, 1, 2), (0, 3, 3), (2, 2, 2)]:
        assert _copy_nest(extents, per_row=False) == _copy_nest(extents, per_row=True)
    # Worked by hand for (3, 3, 3): row 1 writes y[5] after reading x[5], and
    # row 2 reads x[5] again, so y[5] may not land on x[5] (d = 0): D = -1.
    assert _copy_nest((3, 3, 3), per_row=False) == -1


def test_lowering_proves_no_fact_until_the_planner_asks(monkeypatch):
    calls = []

    def counting(real):
        def wrapped(*args):
            calls.append(real.__name__)
            return real(*args)
        return wrapped
    monkeypatch.setattr(kernel_module, "overlap_limit", counting(overlap_limit))
    monkeypatch.setattr(kernel_module, "in_place_problem",
                        counting(kernel_module.in_place_problem))
    _, k = _lowered(pool_graph("max_pool2d", seed=8, hw=(8, 8), c=8), "c")
    assert calls == []  # what the tuner does: lower, print, measure; never plan
    allowed, limits = k.inplace_allowed, k.overlap_allowed
    assert sorted(set(calls)) == ["in_place_problem", "overlap_limit"]
    asked = len(calls)
    assert (k.inplace_allowed, k.overlap_allowed) == (allowed, limits)
    bound = k.with_inplace([(0, 1)])  # max_pool's output may overlap its input
    assert (bound.inplace_allowed, bound.overlap_allowed) == (allowed, limits)
    assert len(calls) == asked  # proved once, carried over to the bound kernel


def _lowered(graph, target):
    ag = optimize(graph)
    groups = [g for g in annotations(ag).groups if g.kind != "view"]
    assert len(groups) == 1, [g.name for g in groups]
    return ag, lower_group(groups[0], ag, target, name="k")


def _limit_of(kernel, x_index=0):
    y_index = next(i for i, p in enumerate(kernel.params) if p.role == "output")
    return next(d for i, j, d in kernel.overlap_allowed if (i, j) == (x_index, y_index))


def test_a_3x3_depthwise_row_kernel_needs_one_row_of_slack():
    # arm_cpu: one aot_depthwise_s8 call per output row over three padded input
    # rows; output row r is written before input row r is read for row r+1.
    _, k = _lowered(conv_graph("depthwise_conv2d", hw=(25, 5), cin=64), ARM)
    assert _limit_of(k) == -5 * 64
    # A 1x1 convolution (one fused aot_conv_requant_wide_s8 per row) reads each
    # pixel's input before writing that pixel's output.
    _, k = _lowered(conv_graph("conv2d", hw=(25, 5), cin=64, cout=64, k=(1, 1),
                               padding=(0, 0, 0, 0)), ARM)
    assert "aot_conv_requant_wide_s8(" in k.source
    assert _limit_of(k) == 0
    # Fewer output than input channels: pixel p's output may go as far as the
    # input pixel p ends, less the output pixel (64 - 16 bytes).
    _, k = _lowered(conv_graph("conv2d", hw=(25, 5), cin=64, cout=16, k=(1, 1),
                               padding=(0, 0, 0, 0)), ARM)
    assert _limit_of(k) == 64 - 16


@pytest.mark.slow
def test_fused_blocked_rows_read_a_widened_row_first(tmp_path):
    # the block sketch's fused row (aot_block_requant_s8): with the row's input
    # widened first (row_widened) every read comes before the first write, so
    # the output row may lie on its own input row; reading the input again
    # for each channel block (row), the output row must stay clear of it
    from aot.tune.auto.sketch import apply_block
    ag = optimize(conv_graph("conv2d", hw=(6, 5), cin=16, cout=16, k=(1, 1),
                             padding=(0, 0, 0, 0)))
    (group,) = [g for g in annotations(ag).groups if g.kind != "view"]
    limits, kernels = {}, {}
    for order in ("row_widened", "row"):
        cfg = {"block": "2x2", "order": order, "requant_row": True, "epilogue": "fused"}
        k = lower_group(group, ag, ARM, name="k",
                        schedule=lambda s, f, st, c=cfg: apply_block(s, f, st, c))
        assert "aot_block_requant_s8(" in k.source
        limits[order] = _limit_of(k)
        kernels[order] = k
    assert limits["row_widened"] == 0 and limits["row"] < 0
    # run in place (the output on its input, the limit) it computes the reference
    k = kernels["row_widened"]
    y_index = next(i for i, p in enumerate(k.params) if p.role == "output")
    inputs = seeded_inputs(ag, 12)
    values = all_values(ag, inputs, steps=1)
    named = {t.name: v for t, v in zip(ag.inputs, inputs)}
    got = run_with_shared_bytes(k.with_inplace([(0, y_index)]), 0, y_index, 0, named, tmp_path)
    np.testing.assert_array_equal(got, np.asarray(values[id(ag.outputs[0])]).reshape(-1))


@pytest.mark.parametrize("width", [9, 85], ids=["one-chunk", "two-chunks"])
@pytest.mark.one_fast
def test_fused_patch_rows_run_at_their_limit(width, tmp_path):
    # the patch order gathers its patches a chunk of pixels at a time: a row in
    # one chunk reads all its input first, a row in two does not; either way
    # the kernel run with its output at the proved limit computes the reference
    from aot.tune.auto.sketch import apply_block
    ag = optimize(conv_graph("conv2d", seed=3, hw=(5, width), cin=3, cout=4,
                             strides=(2, 2), padding=(0, 0, 0, 0)))
    (group,) = [g for g in annotations(ag).groups if g.kind != "view"]
    cfg = {"block": "3x2", "order": "patch", "fold_kw": True, "weights": "wide_pairs",
           "requant_row": True, "epilogue": "fused"}
    k = lower_group(group, ag, ARM, name="k",
                    schedule=lambda s, f, st: apply_block(s, f, st, cfg))
    assert "aot_block_patch_requant_s8(" in k.source
    y_index = next(i for i, p in enumerate(k.params) if p.role == "output")
    limit = _limit_of(k)
    # reading first, a row's output may lie on its own input row's start
    assert (limit >= 0) == (width == 9)
    shift = min(limit, k.params[0].nbytes - 1)
    inputs = seeded_inputs(ag, 13)
    values = all_values(ag, inputs, steps=1)
    named = {t.name: v for t, v in zip(ag.inputs, inputs)}
    got = run_with_shared_bytes(k.with_inplace([(0, y_index)]), 0, y_index, shift, named,
                                tmp_path)
    np.testing.assert_array_equal(got, np.asarray(values[id(ag.outputs[0])]).reshape(-1))


CASES = [
    ("conv3x3", lambda: conv_graph("conv2d", seed=1, hw=(9, 7), cin=8, cout=8)),
    ("conv1x1-widen", lambda: conv_graph("conv2d", seed=2, hw=(6, 5), cin=8, cout=16, k=(1, 1),
                                         padding=(0, 0, 0, 0))),
    ("conv1x1-narrow", lambda: conv_graph("conv2d", seed=9, hw=(4, 7), cin=16, cout=4, k=(1, 1),
                                          padding=(0, 0, 0, 0))),
    ("conv-stride2", lambda: conv_graph("conv2d", seed=3, hw=(10, 8), cin=4, cout=8,
                                        strides=(2, 2))),
    ("depthwise", lambda: conv_graph("depthwise_conv2d", seed=4, hw=(8, 6), cin=12)),
    ("depthwise-stride2", lambda: conv_graph("depthwise_conv2d", seed=5, hw=(9, 9), cin=8,
                                             strides=(2, 2))),
    ("dense", lambda: dense_graph(seed=6, rows=1, depth=40, units=10)),
    ("avg_pool", lambda: pool_graph("avg_pool2d", seed=7, hw=(8, 8), c=8)),
    ("max_pool", lambda: pool_graph("max_pool2d", seed=8, hw=(8, 8), c=8)),
]


@pytest.mark.parametrize("target", ["c", ARM], ids=["generic", "arm"])
# The fast subset runs the cheap 1x1 convolution (0.3-0.6 s, against up to 5 s
# for the others) on both targets; the other layers run with the slow tests.
@pytest.mark.parametrize("name, build", fast_first(CASES, [1], unpack=True),
                         ids=[c[0] for c in CASES])
def test_a_kernel_run_with_its_output_at_the_limit_matches_the_reference(name, build, target,
                                                                         tmp_path):
    ag, k = _lowered(build(), target)
    y_index = next(i for i, p in enumerate(k.params) if p.role == "output")
    limit = _limit_of(k)
    # The tightest placement the planner may choose: the limit, in elements,
    # not past the input's end (beyond it the buffers no longer overlap).
    size = np.dtype(NP_TYPES[k.params[y_index].dtype]).itemsize
    shift = min(limit - limit % size, k.params[0].nbytes - size)
    assert shift < k.params[0].nbytes and shift + k.params[y_index].nbytes > 0  # they overlap
    bound = k.with_inplace([(0, y_index)])
    assert bound.prototype.count("restrict") == k.prototype.count("restrict") - 2
    inputs = seeded_inputs(ag, 11)
    values = all_values(ag, inputs, steps=1)
    named = {t.name: v for t, v in zip(ag.inputs, inputs)}
    got = run_with_shared_bytes(bound, 0, y_index, shift, named, tmp_path)
    np.testing.assert_array_equal(got, np.asarray(values[id(ag.outputs[0])]).reshape(-1))
