"""Random float graphs through the whole pass pipeline and the planner.

Hypothesis builds graphs from convs, elementwise and broadcast ops, reshapes,
transposes, pads and softmax with branches, residuals and unused nodes. For
each: the optimized graph computes what the original does, its fused groups
cover its nodes in order, and running it out of the planned workspace gives
exactly the optimized graph's outputs.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from test_memory_exec import execute_with_plan

from aot.executor import format_memory_report, plan_memory
from aot.ir import GraphBuilder
from aot.passes import annotations, optimize
from aot.reference.interpreter import run

OPS = ("relu", "relu6", "add", "mul", "add_const", "mul_const", "conv", "pad_conv",
       "reshape", "transpose", "softmax")


@st.composite
def graphs(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    b = GraphBuilder("random")
    pool = [b.input(f"x{i}", (1, 4, 4, 2), "float32") for i in range(draw(st.integers(1, 2)))]

    def const(shape):
        return b.constant("", rng.uniform(-1, 1, shape).astype(np.float32))

    for _ in range(draw(st.integers(2, 12))):
        op = draw(st.sampled_from(OPS))
        # Mostly extend the latest value, so chains (and fusion) are common.
        x = pool[-1] if draw(st.integers(0, 3)) else draw(st.sampled_from(pool))
        rank4 = x.type.rank == 4
        if op in ("relu", "relu6", "softmax"):
            y = b.op(op, [x])
        elif op in ("add", "mul"):
            same = [t for t in pool if t.shape == x.shape]
            y = b.op(op, [x, draw(st.sampled_from(same))])
        elif op in ("add_const", "mul_const"):
            y = b.op(op[:3], [x, const((x.shape[-1],))])
        elif op in ("conv", "pad_conv") and rank4:
            if op == "pad_conv":
                x = b.op("pad", [x], pad_width=((0, 0), (1, 1), (1, 1), (0, 0)))
            out_c = draw(st.integers(1, 3))
            k = 3 if op == "pad_conv" else 1
            y = b.op("conv2d", [x, const((out_c, k, k, x.shape[3])), const((out_c,))])
        elif op == "reshape":
            shape = tuple(reversed(x.shape))
            y = b.op("reshape", [x], newshape=shape)
        elif op == "transpose":
            perm = tuple(reversed(range(x.type.rank)))
            y = b.op("transpose", [x], perm=perm)
        else:
            continue
        pool.append(y)
    outs = [pool[-1]] + ([pool[len(pool) // 2]] if draw(st.booleans()) else [])
    unique = list({id(t): t for t in outs}.values())
    return b.build(unique)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.booleans(), st.sampled_from([4, 16]), st.integers(0, 100))
def test_random_graph_survives_passes_and_its_plan(graph, io_in_workspace, alignment, seed):
    optimized = optimize(graph)
    groups = annotations(optimized).groups
    assert [n for g in groups for n in g.nodes] == optimized.nodes
    rng = np.random.default_rng(seed)
    feeds = [rng.standard_normal(t.shape).astype(np.float32) for t in graph.inputs]
    want = run(graph, feeds)
    got = run(optimized, feeds)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    plan = plan_memory(optimized, alignment=alignment, io_in_workspace=io_in_workspace)
    note(str(optimized))
    note(format_memory_report(plan))
    assert plan.lower_bound <= plan.workspace_bytes
    replay = execute_with_plan(optimized, plan, feeds)
    for r, g in zip(replay, got):
        np.testing.assert_array_equal(r, g)
