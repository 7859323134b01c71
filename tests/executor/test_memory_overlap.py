"""Outputs that overlap part of a dying input, within the kernel's proved limit."""

from __future__ import annotations

import pytest

from aot.executor import MemoryPlanError, check_plan, format_memory_report, plan_memory
from aot.ir import GraphBuilder, Quantization

Q = Quantization.per_tensor(0.1, 0)


def _chain(reuse_a=False, third=True):
    """x -> a -> b [-> c] -> out, each 32 bytes (int8), ``out`` the caller's."""
    g = GraphBuilder("chain")
    x = g.input("x", (32,), "int8", Q)
    a = g.op("relu", [x], out_type=x.type, out_name="a")
    last = g.op("relu6", [a], out_type=x.type, out_name="b")
    if third:
        last = g.op("relu", [last], out_type=x.type, out_name="c")
    if reuse_a:
        last = g.op("add", [last, a], out_type=x.type, out_name="d")
    return g.build([g.op("softmax", [last], out_type=x.type, out_name="out")])


def _asked(limit):
    asked = []

    def overlap(out, src):
        asked.append((out.name, src.name))
        return limit
    return overlap, asked


def test_each_output_starts_before_its_input_within_the_limit():
    overlap, asked = _asked(-16)
    plan = plan_memory(_chain(third=False), alignment=4, inplace=False, overlap=overlap,
                       algorithms=("greedy_by_size",))
    assert asked == [("b", "a")]             # out is the caller's: not in the workspace
    # Placed from the top: b 16 bytes below a, over a's first half.
    assert plan.offsets() == {"x": None, "a": 16, "b": 0, "out": None}
    assert plan.workspace_bytes == 48 and plan.algorithm == "greedy_by_size (top down)"
    assert plan.candidates["greedy_by_size"] == 64   # from the bottom the pair cannot fit
    # At most 48 bytes are alive at one step once the pair shares 16 of its 64.
    assert plan.lower_bound == 48
    assert plan.aliases == [("b", "a", "overlap")]
    assert "overlap:  b over part of a" in format_memory_report(plan)


def test_a_chain_of_pairs_drifts_down_by_each_limit():
    overlap, _ = _asked(-8)
    plan = plan_memory(_chain(), alignment=4, inplace=False, overlap=overlap,
                       algorithms=("greedy_by_size",))
    assert plan.offsets() == {"x": None, "a": 16, "b": 8, "c": 0, "out": None}
    assert plan.workspace_bytes == 48 and plan.lower_bound == 40


def test_a_limit_at_or_above_zero_lets_the_output_take_the_inputs_place():
    overlap, _ = _asked(0)
    plan = plan_memory(_chain(), alignment=4, inplace=False, overlap=overlap)
    assert plan.workspace_bytes == 32
    offsets = plan.offsets()
    assert offsets["a"] == offsets["b"] == offsets["c"]


def test_no_limit_no_overlap_and_inputs_read_later_are_never_offered():
    overlap, _ = _asked(None)
    assert plan_memory(_chain(), alignment=4, inplace=False, overlap=overlap).workspace_bytes == 64
    overlap, asked = _asked(0)
    plan_memory(_chain(reuse_a=True), alignment=4, inplace=False, overlap=overlap)
    assert ("b", "a") not in asked           # a is read again by d
    assert ("c", "b") in asked


def test_a_limit_that_leaves_no_overlap_is_ignored():
    overlap, _ = _asked(-32)                 # the output must end where the input starts
    plan = plan_memory(_chain(), alignment=4, inplace=False, overlap=overlap)
    assert not [a for a in plan.aliases if a[2] == "overlap"] and plan.workspace_bytes == 64


def test_check_plan_holds_each_pair_to_its_limit():
    overlap, _ = _asked(-16)
    plan = plan_memory(_chain(third=False), alignment=4, inplace=False, overlap=overlap,
                       algorithms=("greedy_by_size",))
    bufs = {b.name: b for b in plan.buffers}
    assert (bufs["a"].offset, bufs["b"].offset) == (16, 0)
    bufs["b"].offset = 4                         # 4 bytes past the limit
    with pytest.raises(MemoryPlanError, match="'a'.*'b'.*overlap|'b'.*'a'.*overlap"):
        check_plan(plan)
    bufs["b"].offset = 0
    check_plan(plan)
