"""Memory plans of graphs placed on several cores (aot.executor.memory, "parallel steps").

The checker below derives what a plan must honour from the placed graph
alone (the groups, their device annotations and barriers, who reads and
writes each tensor), not from the planner's lifetimes or aliases: the
groups of one parallel step (a split group; a group on core 1 with the one
before it) run at once, so

* every tensor alive at one of them is alive at all of them, and no two
  such tensors share a byte, unless one is a view of the other, or a whole
  group (not split) writes its output over an input that it alone of the
  parallel step reads and that dies there (one core writing in order);
* every buffer lies in memory each core reaches (the board's ``cores.shared``).

The shared models placed on 2 cores are planned with every in-place write
and any overlap allowed (the kernels' facts are not asked) and must pass;
a one-core plan of the same graph must not, and the placement pass on one
core changes no plan.
"""

from __future__ import annotations

import pytest
from support.models import MODELS_DIR

from aot.executor import plan_memory
from aot.executor.regions import MemoryRegionError
from aot.frontend import load_model
from aot.ir import GraphBuilder, Quantization
from aot.passes import PassContext, annotations, optimize, rebuild
from aot.target import load_board

MODELS = ["mlperf_kws_dscnn", "mlperf_vww_mobilenetv1_025", "mlperf_ic_resnet8",
          "mlperf_ad_fc_autoencoder"]
Q = Quantization((0.05,), (0,))


def any_overlap(y, x) -> int:
    """An overlap limit that lets an output start anywhere over its input."""
    return x.type.nbytes


def placed(graph, cores: int, **config):
    with PassContext(config={"placement.cores": cores, **config}):
        return optimize(graph)


def parallel_steps(graph) -> list[list[int]]:
    """The group indices that run at once, from the device annotations: a split
    group alone, a group on another core than 0 with the group before it; each
    such step must be followed by a barrier."""
    ann = annotations(graph)
    steps: list[list[int]] = []
    for i, g in enumerate(ann.groups):
        devices = ann.devices(g.nodes[0])
        if len(devices) > 1:
            steps.append([i])
        elif devices[0].core != 0:
            assert steps == [] or steps[-1] != [i - 1], "a group beside a split group"
            steps.append([i - 1, i])
    held = {b.before for b in ann.barriers}
    for step in steps:
        after = ann.groups[step[-1] + 1].nodes[0] if step[-1] + 1 < len(ann.groups) else None
        assert after in held, f"no barrier after groups {step}"
    return steps


def plan_problems(graph, plan, board=None) -> list[str]:
    """What ``plan`` breaks of the module docstring's rules for the placed ``graph``."""
    ann = annotations(graph)
    groups = ann.groups
    assert plan.steps == [g.name for g in groups]
    last = len(groups) - 1
    born, dies, readers = {}, {}, {}
    for t in graph.inputs:
        born[id(t)] = 0
    for i, g in enumerate(groups):
        for t in g.inputs():
            if t.kind in ("input", "activation"):
                dies[id(t)] = i
                readers.setdefault(id(t), set()).add(i)
        for t in g.outputs(graph):
            born[id(t)] = i
    for t in graph.outputs:
        dies[id(t)] = last
    view_of = {id(g.nodes[0].outputs[0]): g.nodes[0].inputs[0]
               for g in groups if g.kind == "view"}

    def root(t):
        while id(t) in view_of:
            t = view_of[id(t)]
        return t

    split = {i for i, g in enumerate(groups) if len(ann.devices(g.nodes[0])) > 1}
    span = {i: (i, i) for i in range(len(groups))}
    for step in parallel_steps(graph):
        for i in step:
            span[i] = (step[0], step[-1])
    placed_tensors = []
    for t in graph.tensors():
        if t.kind not in ("input", "activation") or id(t) not in born:
            continue
        b = plan.buffer_of(t)
        if not b.external:
            life = (span[born[id(t)]][0], span[dies.get(id(t), born[id(t)])][1])
            placed_tensors.append((t, b, life))

    def one_core_write(y, x) -> bool:
        """``y`` written over ``x`` by one whole group that alone of its parallel
        step reads ``x``, where ``x`` dies."""
        g = born[id(y)]
        first, end = span[g]
        beside = set(range(first, end + 1)) - {g}
        return (g not in split and g in readers.get(id(x), ()) and dies[id(x)] == g
                and not readers[id(x)] & beside)

    problems = []
    for k, (t, bt, lt) in enumerate(placed_tensors):
        for u, bu, lu in placed_tensors[k + 1:]:
            if bt.region != bu.region or lt[1] < lu[0] or lu[1] < lt[0]:
                continue
            if not (bt.offset < bu.offset + u.type.nbytes
                    and bu.offset < bt.offset + t.type.nbytes):
                continue
            if root(t) is root(u) or one_core_write(t, u) or one_core_write(u, t):
                continue
            problems.append(f"{t.name} and {u.name} share bytes while both alive "
                            f"(groups {lt} and {lu})")
    if board is not None:
        for core in range(ann.cores):
            reach = board.cores.reach(core)
            problems += [f"{b.name} in {b.region or 'ram'}, which core {core} does not reach"
                         for b in plan.buffers
                         if not b.external and reach is not None
                         and (b.region or "ram") not in reach]
    return problems


@pytest.mark.parametrize("io_in_workspace", [True, False])
@pytest.mark.parametrize("model", MODELS)
def test_two_core_plans_keep_parallel_steps_apart(model, io_in_workspace):
    graph = placed(load_model(MODELS_DIR / f"{model}.tflite"), 2)
    assert parallel_steps(graph)
    plan = plan_memory(graph, alignment=4, io_in_workspace=io_in_workspace,
                       overlap=any_overlap)
    assert plan_problems(graph, plan, load_board("qemu/mps2-an521")) == []


@pytest.mark.parametrize("model", MODELS)
def test_the_checker_refuses_a_one_core_plan_of_a_placed_graph(model):
    """Planned as if on one core (the same tensors, placement dropped), the overlaps
    the one-core planner allows break the two-core rules."""
    graph = placed(load_model(MODELS_DIR / f"{model}.tflite"), 2)
    one_core = rebuild(graph, placement={}, barriers=())
    plan = plan_memory(one_core, alignment=4, io_in_workspace=True, overlap=any_overlap)
    assert plan_problems(graph, plan)


@pytest.mark.parametrize("model", MODELS)
def test_one_core_placement_changes_no_plan(model):
    graph = load_model(MODELS_DIR / f"{model}.tflite")
    for io in (True, False):
        want = plan_memory(optimize(graph), alignment=4, io_in_workspace=io, overlap=any_overlap)
        got = plan_memory(placed(graph, 1), alignment=4, io_in_workspace=io,
                          overlap=any_overlap)
        assert got.to_json() == want.to_json() and got.aliases == want.aliases


def _shared_input():
    """h = relu(x); left = pool(h) beside right = relu(h); join(left, pool(right))."""
    b = GraphBuilder("beside")
    x = b.input("x", (1, 8, 8, 4), "int8", Q)
    h = b.op("relu", [x], name="h")
    left = b.op("max_pool2d", [h], pool_size=(2, 2), strides=(2, 2), name="left")
    right = b.op("relu", [h], name="right")
    after = b.op("max_pool2d", [right], pool_size=(2, 2), strides=(2, 2), name="after")
    return b.build([b.op("concatenate", [left, after], name="join", axis=3)])


def test_no_write_over_an_input_the_step_beside_reads():
    """One core: right = relu(h) is written over h, which dies there.  Two cores:
    left (core 0) still reads h while right (core 1) runs, so right gets bytes
    of its own."""
    one = plan_memory(optimize(_shared_input()), alignment=4)
    assert ("right", "h", "in place") in one.aliases
    graph = placed(_shared_input(), 2)
    assert parallel_steps(graph) == [[1, 2]]
    two = plan_memory(graph, alignment=4, overlap=any_overlap)
    assert not any(src == "h" for _, src, _ in two.aliases)
    assert plan_problems(graph, two) == []


def _dying_input():
    """left = pool(relu(x)) beside right = relu(z): left's input dies at left."""
    b = GraphBuilder("dying")
    x = b.input("x", (1, 8, 8, 4), "int8", Q)
    z = b.input("z", (1, 8, 8, 4), "int8", Q)
    h = b.op("relu", [x], name="h")
    left = b.op("max_pool2d", [h], pool_size=(2, 2), strides=(2, 2), name="left")
    right = b.op("relu", [z], name="right")
    return b.build([left, right])


def test_side_by_side_buffers_live_together_until_the_barrier():
    """One core: right (step 2) takes h's bytes, h dying at step 1.  Two cores: left
    and right run at once, so h, left and right are all alive at steps 1 and 2."""
    one = plan_memory(optimize(_dying_input()), alignment=4, io_in_workspace=True)
    assert one.offsets()["right"] == one.offsets()["h"]
    graph = placed(_dying_input(), 2)
    two = plan_memory(graph, alignment=4, io_in_workspace=True)
    lives = {b.name: (b.start, b.end) for b in two.buffers}
    assert lives["h"] == (0, 2) and lives["right"] == (1, 2) and lives["left"][0] == 1
    assert two.offsets()["right"] != two.offsets()["h"]
    assert plan_problems(graph, two) == []


def test_a_split_step_writes_no_output_over_its_inputs():
    """ResNet-8's conv + residual add, split by rows: one core writes the sum over
    the residual input (it dies there); split, each core would overwrite rows the
    other may still read, so the sum gets bytes of its own."""
    graph = load_model(MODELS_DIR / "mlperf_ic_resnet8.tflite")
    one = plan_memory(optimize(graph), alignment=4)
    two_graph = placed(graph, 2)
    two = plan_memory(two_graph, alignment=4)
    adds = [g.nodes[-1].outputs[0].name for g in annotations(two_graph).groups
            if g.nodes[-1].op == "add"]
    assert any(out in adds for out, _, how in one.aliases if how == "in place")
    assert not any(out in adds for out, _, _ in two.aliases)
    assert two.workspace_bytes > one.workspace_bytes


def test_memory_regions_a_core_cannot_reach_are_refused(monkeypatch):
    from dataclasses import replace

    from aot import compile as compile_module
    from aot.compile import compile_model

    board = load_board("qemu/mps2-an521")
    narrow = replace(board, cores=replace(board.cores, shared=("ram",)))
    monkeypatch.setattr(compile_module, "load_board", lambda tag: narrow)
    with pytest.raises(MemoryRegionError, match="'sse_sram' is not reached by core 0"):
        compile_model(_dying_input(), "qemu/mps2-an521", memory_regions="ram,sse_sram",
                      config={"placement.cores": 2, "placement.min_macs": 0})


@pytest.mark.slow
@pytest.mark.parametrize("regions", [None, "ram:12K,sse_sram"])
@pytest.mark.parametrize("model", ["mlperf_kws_dscnn", "mlperf_ic_resnet8"])
def test_the_compilers_two_core_plans_keep_parallel_steps_apart(model, regions):
    """The plan compile_model would take on qemu/mps2-an521 (the kernels' in-place and
    overlap facts, and with memory_regions the split over two memories)."""
    from aot.compile import plan_one

    planned = plan_one(MODELS_DIR / f"{model}.tflite", "qemu/mps2-an521",
                       memory_regions=regions, config={"placement.cores": 2})
    assert plan_problems(planned.graph, planned.plan, planned.board) == []
    if regions:
        assert planned.plan.regions
