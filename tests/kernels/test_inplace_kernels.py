"""Kernels that write their output over an input (aot.kernels.inplace).

Every kernel kind that can end a fused group with an elementwise tail
(elementwise ops alone, conv2d/depthwise/dense with a residual add, the
generic and the arm_cpu strategies) is lowered with its residual operand and
its output as an in-place pair, must accept it, and is run with both at one
address (built -O3, where GCC would exploit a wrong restrict, and under
ASan/UBSan): the output equals the reference.  Pairs a loop nest does not
allow are refused and keep their ``restrict``.
"""

from __future__ import annotations

import numpy as np
import pytest
from graphs import Q, binary_graph, conv_graph, per_axis, weights_int8
from kernel_checks import all_values, run_with_shared_bytes, seeded_inputs
from support.marks import fast_first

from aot.ir import GraphBuilder, TensorType
from aot.kernels import lower_group
from aot.passes import annotations, optimize

ARM = "c -keys=arm_cpu,cpu -mcpu=cortex-m4"


def dense_residual_graph(*, seed=0, rows=2, depth=24, units=9):
    """x -> dense -> add(residual input r) -> relu, int8."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder("dense_residual")
    x = b.input("x", (rows, depth), "int8", Q(0.05, 4))
    ws = rng.uniform(0.002, 0.05, units).astype(np.float32)
    w = b.constant("w", weights_int8(rng, (units, depth)), quant=per_axis(ws, 0))
    bq = per_axis((np.float32(0.05) * ws).astype(np.float32), 0)
    bt = b.constant("b", rng.integers(-3000, 3000, units).astype(np.int32), quant=bq)
    y = b.op("dense", [x, w, bt], out_type=TensorType((rows, units), "int8", Q(0.07, -6)))
    r = b.input("r", (rows, units), "int8", Q(0.06, -7))
    return b.build([b.op("add", [y, r], activation="relu",
                         out_type=TensorType((rows, units), "int8", Q(0.1, 2)))])


def relu_graph():
    b = GraphBuilder("relu")
    x = b.input("x", (3, 5, 7), "float32")
    return b.build([b.op("relu", [x])])


RESIDUAL = [
    ("conv2d", {}),
    ("conv2d", {"cin": 13, "k": (1, 1), "padding": (0, 0, 0, 0)}),
    ("conv2d", {"cin": 8, "cout": 6, "hw": (9, 8), "strides": (2, 2), "activation": "relu"}),
    ("conv2d", {"cin": 5, "cout": 33, "hw": (3, 40)}),  # one pixel at a time
    ("conv2d", {"cin": 16, "cout": 7, "hw": (4, 21)}),  # widened input, odd last chunk
    ("depthwise_conv2d", {"cin": 8}),
    ("depthwise_conv2d", {"cin": 11, "hw": (6, 5), "k": (3, 2), "padding": (0, 1, 2, 1)}),
    ("depthwise_conv2d", {"cin": 3, "depth_multiplier": 2}),
]


def _cases():
    cases = []
    for target in ("c", ARM):
        tag = "arm" if target == ARM else "generic"
        for op, variant in RESIDUAL:
            cases.append(pytest.param(
                lambda op=op, variant=variant: conv_graph(op, seed=5, residual=True, **variant),
                "r", target, id=f"{tag}-{op}-{variant}"))
        cases.append(pytest.param(dense_residual_graph, "r", target, id=f"{tag}-dense"))
        cases.append(pytest.param(lambda: dense_residual_graph(rows=1, depth=1040, units=6),
                                  "r", target, id=f"{tag}-dense-long"))
    for op in ("add", "sub", "mul", "maximum", "minimum"):
        # (graphs.binary_graph builds integer maximum/minimum with an activation)
        for dtype in ("int8", "int16", "float32") if op in ("add", "sub", "mul") \
                else ("float32",):
            for operand in ("a", "b"):
                cases.append(pytest.param(
                    lambda op=op, dtype=dtype: binary_graph(op, dtype=dtype, a_shape=(2, 5, 6),
                                                            b_shape=(2, 5, 6)),
                    operand, "c", id=f"{op}-{dtype}-over-{operand}"))
    cases.append(pytest.param(relu_graph, "x", "c", id="relu"))
    # Each case builds -O3 with the sanitizers (about 0.2-13 s): the fast subset
    # keeps one cheap case of each kind, the rest run with the slow tests.
    return fast_first(cases, [i for i, c in enumerate(cases) if c.id in FAST])


FAST = {"generic-conv2d-{'cin': 13, 'k': (1, 1), 'padding': (0, 0, 0, 0)}",
        "arm-conv2d-{'cin': 13, 'k': (1, 1), 'padding': (0, 0, 0, 0)}",
        "arm-depthwise_conv2d-{'cin': 11, 'hw': (6, 5), 'k': (3, 2), 'padding': (0, 1, 2, 1)}",
        "generic-dense", "arm-dense-long", "add-int8-over-a", "mul-int16-over-b",
        "sub-float32-over-a", "relu"}


def _lowered(graph, overwritten, target):
    ag = optimize(graph)
    groups = [g for g in annotations(ag).groups if g.kind != "view"]
    assert len(groups) == 1, [g.name for g in groups]
    y = groups[0].outputs(ag)[0].name
    kernel = lower_group(groups[0], ag, target, name="k")
    names = [p.tensor for p in kernel.params]
    wanted = [(i, j) for i, j in kernel.inplace_allowed if (names[i], names[j]) == (overwritten, y)]
    return ag, kernel.with_inplace(wanted)


@pytest.mark.parametrize("build, overwritten, target", _cases())
def test_kernel_writing_over_its_input_matches_the_reference(build, overwritten, target,
                                                             tmp_path):
    graph = build()
    ag, k = _lowered(graph, overwritten, target)
    assert len(k.inplace) == 1
    x_index, y_index = k.inplace[0]
    assert k.params[x_index].tensor == overwritten and k.params[y_index].role == "output"
    # exactly the pair loses restrict, in the exported prototype and the implementation
    decl = k.prototype[k.prototype.index("(") + 1:-2].split(", ")
    assert [("restrict" not in d) for d in decl] == [
        i in (x_index, y_index) for i in range(len(decl))]
    impl = next(line for line in k.source.splitlines()
                if line.startswith("static int32_t k_impl("))
    impl_params = impl[impl.index("(") + 1:impl.index(")")].split(", ")
    assert sum("restrict" not in d for d in impl_params) == 2
    inputs = seeded_inputs(ag, 7)
    values = all_values(ag, inputs, steps=1)
    named = {t.name: v for t, v in zip(ag.inputs, inputs)}
    got = run_with_shared_bytes(k, x_index, y_index, 0, named, tmp_path)
    want = np.asarray(values[id(ag.outputs[0])]).reshape(-1)
    if want.dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("target", ["c", ARM])
def test_the_input_of_a_convolution_is_never_overwritten(target):
    # Each output pixel reads a window of input pixels: writing over the input
    # would destroy values later pixels still need.
    _, k = _lowered(conv_graph("conv2d", seed=3, residual=True), "x", target)
    assert k.inplace == ()
    assert "restrict" in k.prototype.split(",")[0]


def test_a_broadcast_operand_is_never_overwritten():
    graph = binary_graph("add", a_shape=(2, 3, 4), b_shape=(1, 3, 1))
    _, k = _lowered(graph, "b", "c")
    assert k.inplace == () and k.prototype.count("restrict") == 3


def test_the_loop_nest_check_names_the_problem():
    from aot import te
    from aot.codegen.build import lower
    from aot.kernels.inplace import in_place_problem

    x = te.placeholder((8,), "int8", "x")
    y = te.compute((8,), lambda i: x[7 - i], name="y")
    func = lower(te.create_schedule(y.op), [x, y], name="rev")
    assert "at another index" in in_place_problem(func, func.params[0], func.params[1])
    z = te.compute((8,), lambda i: x[i].astype("int16"), name="z")
    func = lower(te.create_schedule(z.op), [x, z], name="widen")
    assert "int8" in in_place_problem(func, func.params[0], func.params[1])
    w = te.compute((8,), lambda i: x[i] + x[i], name="w")
    func = lower(te.create_schedule(w.op), [x, w], name="twice")
    assert in_place_problem(func, func.params[0], func.params[1]) is None
