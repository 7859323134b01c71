"""Run every shared model out of its planned workspace: the plan is only right if the
outputs still equal the reference interpreter's.

Each tensor that has a buffer is stored as raw bytes at its planned offset in
one workspace array (or its region's array, or its caller buffer) and read back
from there, step by step, so any two tensors wrongly sharing bytes corrupt the
result.
"""

from __future__ import annotations

import numpy as np
import pytest

from aot.executor import plan_memory
from aot.executor.regions import parse_regions, split_regions
from aot.frontend import load_model
from aot.ir import Graph, Node, Tensor
from aot.passes import annotations, optimize
from aot.reference.interpreter import run
from aot.target import load_board
from support.models import MODELS_DIR

TFLITE = sorted(p.name for p in MODELS_DIR.glob("*.tflite")) if MODELS_DIR.is_dir() else []


def _run_node(node: Node, args: list) -> list[np.ndarray]:
    """One node through the reference interpreter, its activations fed as inputs.

    A fresh session per node starts each variable from zero, as one invocation of
    the whole graph does (each variable has one reader), so one call compares.
    """
    inputs, feeds, probe_in = [], [], []
    fed: dict[int, Tensor] = {}  # a tensor read twice (add(x, x)) is one input
    for t, value in zip(node.inputs, args):
        if t is None or t.kind in ("constant", "variable"):
            probe_in.append(t)
            continue
        if id(t) not in fed:
            fed[id(t)] = Tensor(t.name, t.type, "input")
            inputs.append(fed[id(t)])
            feeds.append(value)
        probe_in.append(fed[id(t)])
    outs = [Tensor(t.name, t.type) for t in node.outputs]
    probe = Node(node.op, probe_in, outs, dict(node.attrs), node.name)
    return run(Graph(inputs, outs, [probe]), feeds)


def execute_with_plan(graph: Graph, plan, feeds: list[np.ndarray]) -> list[np.ndarray]:
    arrays = {"": np.zeros(plan.workspace_bytes, np.uint8),
              **{r: np.zeros(n, np.uint8) for r, n in plan.regions.items()}}
    caller = {id(b): np.zeros(b.size, np.uint8) for b in plan.buffers if b.external}

    def memory(t: Tensor) -> np.ndarray:
        b = plan.buffer_of(t)
        if b.external:
            return caller[id(b)][:t.type.nbytes]
        return arrays[b.region][b.offset:b.offset + t.type.nbytes]

    def store(t: Tensor, value: np.ndarray) -> None:
        memory(t)[:] = np.ascontiguousarray(value).view(np.uint8).reshape(-1)

    def load(t: Tensor) -> np.ndarray:
        return memory(t).view(t.type.np_dtype).reshape(t.shape).copy()

    planned = {id(t) for b in plan.buffers for t in b.tensors}
    for t, x in zip(graph.inputs, feeds):
        store(t, x)
    for group in annotations(graph).groups:
        local: dict[int, np.ndarray] = {}  # values inside a fused kernel
        for node in group.nodes:
            args = []
            for t in node.inputs:
                if t is None or t.kind in ("constant", "variable"):
                    args.append(None if t is None else t.data)
                else:
                    args.append(local[id(t)] if id(t) in local else load(t))
            for t, value in zip(node.outputs, _run_node(node, args)):
                if id(t) in planned:
                    store(t, value)
                else:
                    local[id(t)] = value
    return [load(t) for t in graph.outputs]


def _feeds(raw):
    rng = np.random.default_rng(11)
    feeds = []
    for t in raw.inputs:
        if t.dtype == "float32":
            feeds.append(rng.standard_normal(t.shape).astype(np.float32))
        else:
            info = np.iinfo(t.type.np_dtype)
            feeds.append(rng.integers(info.min, info.max + 1, t.shape).astype(t.type.np_dtype))
    return feeds


@pytest.mark.parametrize("name", TFLITE)
@pytest.mark.parametrize("io_in_workspace", [False, True])
def test_model_runs_correctly_out_of_its_planned_workspace(name, io_in_workspace):
    raw = load_model(MODELS_DIR / name)
    graph = optimize(raw)
    plan = plan_memory(graph, alignment=4, io_in_workspace=io_in_workspace)
    feeds = _feeds(raw)
    want = run(raw, feeds)
    got = execute_with_plan(graph, plan, feeds)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name", TFLITE)
def test_model_runs_correctly_out_of_a_workspace_split_over_two_regions(name):
    """Half the workspace in ram (at least the inputs and outputs), the rest in psram;
    heat by size order so that the split differs from model to model."""
    raw = load_model(MODELS_DIR / name)
    graph = optimize(raw)
    plan = plan_memory(graph, alignment=4, io_in_workspace=True)
    io = {id(t) for t in (*graph.inputs, *graph.outputs)}
    caller = sum(b.size for b in plan.buffers if any(id(t) in io for t in b.tensors))
    half = max(plan.workspace_bytes // 2, caller + 4)
    heat = {id(b): float(i + 1) * b.size for i, b in enumerate(plan.buffers)}
    split_regions(plan, graph, parse_regions(f"ram:{half},psram",
                                             load_board("qemu/mps2-an386")), heat)
    assert plan.workspace_bytes <= half
    feeds = _feeds(raw)
    want = run(raw, feeds)
    got = execute_with_plan(graph, plan, feeds)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)
