"""The static memory planner: toy plans with exact offsets, invariants, every shared model."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aot.errors import AotError
from aot.executor import (ALGORITHMS, Buffer, MemoryPlanError, check_fits, check_plan,
                          format_memory_report, plan_memory)
from aot.executor.memory import Sizes, check_group_fits_board, lower_bound
from aot.target import load_board
from aot.frontend import load_model
from aot.ir import GraphBuilder, Quantization
from aot.passes import optimize
from support.models import MODELS_DIR

Q = Quantization.per_tensor(0.1, 0)


def assert_no_overlap(buffers, workspace: int, n_steps: int) -> None:
    """Independent of check_plan: mark each byte of each live buffer, step by step."""
    for step in range(n_steps):
        used = np.zeros(workspace, dtype=np.int32)
        for b in buffers:
            if not b.external and b.start <= step <= b.end:
                used[b.offset:b.offset + b.size] += 1
        assert used.max(initial=0) <= 1, f"overlap at step {step}"


def _toy():
    """a = pad(x) 48 B, b = pad(a) 80 B, c = slice(b) 32 B, d = concat(c, a) (output)."""
    b = GraphBuilder("toy")
    x = b.input("x", (1, 16), "int8", Q)
    a = b.op("pad", [x], pad_width=((0, 0), (16, 16)), out_name="a")
    bb = b.op("pad", [a], pad_width=((0, 0), (16, 16)), out_name="b")
    c = b.op("strided_slice", [bb], begin=(0, 0), end=(1, 32), strides=(1, 1), out_name="c")
    d = b.op("concatenate", [c, a], axis=1, out_name="d")
    return b.build([d])


def test_toy_plan_has_the_exact_expected_offsets():
    plan = plan_memory(_toy(), alignment=16, algorithms=("greedy_by_size",))
    offsets = plan.offsets()
    # Largest first: b at 0; a conflicts with b, so above it at 80; c conflicts with both.
    assert offsets == {"x": None, "a": 80, "b": 0, "c": 128, "d": None}
    assert plan.workspace_bytes == 160 and plan.lower_bound == 160
    assert plan.io_bytes == 16 + 80
    assert [(b.name, b.start, b.end) for b in plan.buffers if not b.external] == [
        ("a", 0, 3), ("b", 1, 2), ("c", 2, 3)]


def test_a_step_buffer_lives_during_its_step_only():
    """plan_memory(step_buffers=): 40 bytes alive at step 1 only, beside a and b, above
    them; c (steps 2-3) then takes the same bytes."""
    from aot.ir import Tensor
    from aot.ir.types import TensorType

    g = _toy()
    extra = Tensor("patch_buffers", TensorType((40,), "int8"))
    step = g.nodes[1].name or g.nodes[1].op
    plan = plan_memory(g, alignment=16, algorithms=("greedy_by_size",),
                       step_buffers={step: extra})
    buf = plan.buffer_of(extra)
    assert (buf.start, buf.end, buf.size) == (1, 1, 40)
    assert plan.offsets()["c"] == buf.offset == 128
    assert plan.lower_bound == 48 + 80 + 40 and plan.workspace_bytes == 176
    assert_no_overlap([b for b in plan.buffers if not b.external], plan.workspace_bytes, 4)
    with pytest.raises(MemoryPlanError, match="which the graph does not have"):
        plan_memory(g, step_buffers={"nowhere": extra})


def test_toy_plan_with_io_in_the_workspace_and_other_alignment():
    plan = plan_memory(_toy(), alignment=4, io_in_workspace=True,
                       algorithms=("greedy_by_size",))
    assert plan.offsets() == {"b": 0, "d": 0, "a": 80, "c": 128, "x": 0}
    assert plan.workspace_bytes == 160 and plan.io_bytes == 0
    # x (step 0) and b (steps 1-2) never live together, nor b and d (step 3).


def test_smallest_candidate_wins_and_every_algorithm_is_tried():
    plan = plan_memory(_toy())
    assert set(plan.candidates) == set(ALGORITHMS) and len(ALGORITHMS) >= 2
    assert plan.workspace_bytes == min(plan.candidates.values())
    assert plan.candidates[plan.algorithm] == plan.workspace_bytes


def _chain(reshape=True, reuse_later=False):
    b = GraphBuilder("chain")
    x = b.input("x", (4, 8), "int8", Q)
    a = b.op("relu", [x], out_type=x.type, out_name="a")
    v = b.op("reshape", [a], newshape=(32,), out_name="v") if reshape else a
    y = b.op("relu6", [v], out_type=v.type, out_name="y")
    z = b.op("add", [v, y], out_type=v.type, out_name="z") if reuse_later else y
    return b.build([b.op("softmax", [z], out_name="out", out_type=z.type)])


def test_views_share_their_input_buffer():
    g = _chain()
    plan = plan_memory(g, inplace=False)
    a, v = g.nodes[0].outputs[0], g.nodes[1].outputs[0]
    assert plan.buffer_of(a) is plan.buffer_of(v)
    assert ("v", "a", "view") in plan.aliases


def test_elementwise_op_writes_over_an_input_that_dies_there():
    g = _chain()
    a, y = g.nodes[0].outputs[0], g.nodes[2].outputs[0]
    plan = plan_memory(g)
    assert plan.buffer_of(y) is plan.buffer_of(a)
    assert ("y", "v", "in place") in plan.aliases
    assert plan.workspace_bytes == 32 and plan.lower_bound == 32
    assert plan_memory(g, inplace=False).workspace_bytes == 64
    # The caller's input is never overwritten: relu(x) gets its own buffer.
    assert plan.buffer_of(a) is not plan.buffer_of(g.inputs[0])


def test_no_in_place_write_over_an_input_read_later():
    g = _chain(reuse_later=True)
    plan = plan_memory(g)
    y = g.nodes[2].outputs[0]
    assert plan.buffer_of(y) is not plan.buffer_of(g.nodes[0].outputs[0])


def test_fused_groups_are_steps_and_their_intermediates_take_no_memory():
    rng = np.random.default_rng(0)
    b = GraphBuilder("f")
    x = b.input("x", (1, 4, 4, 2), "float32")
    w = b.constant("w", rng.standard_normal((3, 1, 1, 2)).astype(np.float32))
    y = b.op("relu", [b.op("add", [b.op("conv2d", [x, w, None]),
                                   b.constant("t", np.ones(3, np.float32))])])
    g = b.build([b.op("softmax", [y])])
    plan = plan_memory(optimize(g))
    assert len(plan.steps) == 2
    assert [b.size for b in plan.buffers if not b.external] == [4 * 4 * 3 * 4]
    assert len(plan_memory(g, inplace=False).buffers) > len(plan.buffers)


def test_check_plan_rejects_overlap_and_misalignment():
    plan = plan_memory(_toy(), alignment=16)
    bufs = {b.name: b for b in plan.buffers}
    bufs["c"].offset = bufs["b"].offset + 16
    with pytest.raises(MemoryPlanError, match="'b'.*'c'.*overlap|'c'.*'b'.*overlap"):
        check_plan(plan)
    bufs["c"].offset = 136
    with pytest.raises(MemoryPlanError, match="multiple of 16"):
        check_plan(plan)


def test_check_fits_names_both_sizes_and_the_largest_tensors():
    g = _toy()
    plan = plan_memory(g)
    check_fits(plan, g, ram_bytes=10_000, flash_bytes=0)
    with pytest.raises(MemoryPlanError) as err:
        check_fits(plan, g, ram_bytes=100)
    text = str(err.value)
    assert "needs 256 bytes of RAM" in text and "has 100" in text and "'b' (80 bytes)" in text
    assert isinstance(err.value, AotError)
    with pytest.raises(MemoryPlanError, match="flash"):
        check_fits(plan_memory(_conv_model()), _conv_model(), flash_bytes=10)


def _conv_model():
    b = GraphBuilder("c")
    x = b.input("x", (1, 4, 4, 2), "float32")
    w = b.constant("w", np.ones((3, 1, 1, 2), np.float32))
    return b.build([b.op("conv2d", [x, w, None])])


def test_memory_report_has_table_chart_and_totals():
    plan = plan_memory(_toy(), algorithms=("greedy_by_size",))
    text = format_memory_report(plan, width=10, constants=0)
    lines = text.splitlines()
    assert lines[0].split() == ["id", "tensor", "bytes", "offset", "steps"]
    assert "B  b" in text and "caller" in text
    chart = [ln for ln in lines if "|" in ln]
    assert len(chart) == len(plan.steps)
    assert chart[2].startswith("   2 |BBBBBAAACC| ")  # 16 bytes per column
    assert "workspace 160 bytes (greedy_by_size" in text
    assert "lower bound 160 bytes" in text and "constants 0 bytes" in text


def test_bad_alignment_and_algorithm_names():
    with pytest.raises(MemoryPlanError, match="power of two"):
        plan_memory(_toy(), alignment=12)
    with pytest.raises(MemoryPlanError, match="did you mean 'greedy_by_size'"):
        plan_memory(_toy(), algorithms=("greedy_by_sise",))


# ----------------------------------------------------------------------- randomized lifetimes

@st.composite
def lifetimes(draw):
    n = draw(st.integers(1, 24))
    steps = draw(st.integers(1, 12))
    bufs = []
    for _ in range(n):
        start = draw(st.integers(0, steps - 1))
        end = draw(st.integers(start, steps - 1))
        bufs.append((draw(st.integers(0, 300)), start, end))
    return bufs, steps


@settings(max_examples=150, deadline=None)
@given(lifetimes(), st.sampled_from([1, 4, 16]), st.sampled_from(sorted(ALGORITHMS)))
@pytest.mark.slow
def test_random_lifetimes_never_overlap(case, alignment, algorithm):
    spec, steps = case
    buffers = [Buffer([], size, start, end) for size, start, end in spec]
    workspace = ALGORITHMS[algorithm](buffers, alignment)
    assert workspace % alignment == 0
    assert all(b.offset % alignment == 0 and b.offset + b.size <= workspace for b in buffers)
    assert_no_overlap(buffers, workspace, steps)
    assert workspace >= lower_bound(buffers, steps)


# ----------------------------------------------------------------------- shared models

TFLITE = sorted(p.name for p in MODELS_DIR.glob("*.tflite")) if MODELS_DIR.is_dir() else []

#: TFLM's arena_used_bytes() on Cortex-M4 (../shared/docs/BASELINE.md); it holds inputs and
#: outputs too, so it is compared with plans that keep them in the workspace.
TFLM_ARENA = {"mlperf_kws_dscnn": 22_820, "mlperf_vww_mobilenetv1_025": 100_708,
              "mlperf_ic_resnet8": 54_996, "mlperf_ad_fc_autoencoder": 2_580,
              "tflm_micro_speech": 6_836}


@pytest.mark.parametrize("name", TFLITE)
@pytest.mark.parametrize("io_in_workspace", [False, True])
@pytest.mark.parametrize("alignment", [4, 16])
def test_every_model_plan_is_sound(name, io_in_workspace, alignment):
    graph = optimize(load_model(MODELS_DIR / name))
    plan = plan_memory(graph, alignment=alignment, io_in_workspace=io_in_workspace)
    assert_no_overlap(plan.buffers, plan.workspace_bytes, len(plan.steps))
    assert plan.lower_bound <= plan.workspace_bytes
    for algorithm in ALGORITHMS:
        other = plan_memory(graph, alignment=alignment, io_in_workspace=io_in_workspace,
                            algorithms=(algorithm,))
        assert other.workspace_bytes >= plan.workspace_bytes
    stem = name.removesuffix(".tflite")
    if io_in_workspace and stem in TFLM_ARENA:
        assert plan.workspace_bytes <= TFLM_ARENA[stem]


def test_alignment_follows_the_target_and_boards_bound_the_plan():
    from aot.executor import check_fits_board, workspace_alignment
    from aot.target import Target, load_board

    assert workspace_alignment(Target("c -keys=arm_cpu,cpu -mcpu=cortex-m4")) == 4
    assert workspace_alignment(Target("c -mcpu=cortex-m55")) == 16
    assert workspace_alignment(Target("c")) == 16
    g = _toy()
    plan = plan_memory(g)
    check_fits_board(plan, g, load_board("host/native"))  # no memory map: always fits
    check_fits_board(plan, g, load_board("qemu/mps2-an386"))


def _residual(shortcut_from_x: bool):
    """softmax(add(conv_c(s), conv_b(conv_a(x)))), s = x or conv_a(x); 1x1 convs keep shapes."""
    rng = np.random.default_rng(2)
    b = GraphBuilder("res")
    x = b.input("x", (1, 3, 3, 2), "float32")

    def conv(t, name):
        w = b.constant("", rng.standard_normal((2, 1, 1, 2)).astype(np.float32))
        return b.op("conv2d", [t, w, None], out_name=name)

    a = conv(x, "a")
    bb = conv(a, "bb")
    c = conv(x if shortcut_from_x else bb, "c")
    s = b.op("add", [c, bb if shortcut_from_x else x], out_name="sum")
    return b.build([b.op("softmax", [s])])


def test_fused_residual_add_writes_over_the_branch_that_dies_there():
    g = optimize(_residual(True))
    plan = plan_memory(g)
    assert ("sum", "bb", "in place") in plan.aliases
    by_name = {t.name: t for t in g.tensors()}
    assert plan.buffer_of(by_name["sum"]) is plan.buffer_of(by_name["bb"])
    assert len(plan.buffers) == len(plan_memory(g, inplace=False).buffers) - 1


def test_no_in_place_over_an_input_the_anchor_reads():
    """conv_c(bb) + x: bb is read by the conv itself (windows), x is the caller's input."""
    plan = plan_memory(optimize(_residual(False)))
    assert not [a for a in plan.aliases if a[2] == "in place"]


def test_views_come_from_canonicalize_in_optimized_graphs():
    g = _chain()
    from aot.passes import PassContext

    with_views = plan_memory(optimize(g), inplace=False)
    without = plan_memory(optimize(g, PassContext(disabled_pass=["canonicalize"])),
                          inplace=False)
    assert any(kind == "view" for _, _, kind in with_views.aliases)
    assert not any(kind == "view" for _, _, kind in without.aliases)


@pytest.mark.parametrize("io_in_workspace", [False, True])
def test_graph_outputs_are_never_overwritten_in_place(io_in_workspace):
    """relu's result is a graph output read by the last step: it dies there but must
    still hold its value when the call returns (found by the random-graph replay)."""
    b = GraphBuilder("g")
    x = b.input("x", (1, 8), "float32")
    r = b.op("relu", [x])
    g = b.build([b.op("add", [r, b.constant("c", np.ones(8, np.float32))]), r])
    plan = plan_memory(g, io_in_workspace=io_in_workspace)
    assert plan.aliases == []


def test_group_fit_check_counts_the_shared_workspace_once():
    board = load_board("qemu/mps2-an386")
    ram = board.memory.model_ram_bytes
    member = Sizes(workspace=ram // 2 + 1, constants=10, state=0, io=0, code=10)
    # Two halves side by side would not fit; one shared workspace does.
    check_group_fits_board("g", {"a": member, "b": member}, member, board)
    over = Sizes(workspace=ram // 2 + 1, constants=10, state=ram // 2, io=0, code=10)
    with pytest.raises(MemoryPlanError, match=r"model group 'g' needs \d+ bytes of RAM "
                                              r"\(shared workspace \d+, state \d+.*workspaces: "
                                              r"a \d+, b \d+"):
        check_group_fits_board("g", {"a": member, "b": member}, over, board)
