"""The parts' kernels of a placed model run in its memory plan, one after the other.

``plan_one`` with ``placement.cores = 2`` lowers every split group whole and
once per part (``PlannedModel.parts``: each part's kernel and the byte
offsets of its arguments in the whole tensors, aot.kernels.parts).  Here the
model's entry program (the JIT's, llvm on this machine) has each split group's
call replaced by its parts' calls, one after the other, every argument at its
whole tensor's workspace address plus the part's offset: what the two cores
will do, in sequence.  The outputs are bit-exact with the reference run of
the unsplit model, and the parts' kernels are the layer's own compute
(a smaller instance, no other kernel header).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from support.models import MODELS_DIR

from aot import reference
from aot.codegen.llvm import build_kernels
from aot.compile import plan_one
from aot.executor.codegen import Arg, KernelCall, Ref
from aot.executor.jit import JitModel
from aot.frontend import load_model
from aot.ir import GraphBuilder, Quantization, TensorType
from aot.kernels import lower_parts, support_files
from aot.passes import PassContext, annotations, optimize

MODELS = ["mlperf_ad_fc_autoencoder", "mlperf_kws_dscnn", "mlperf_ic_resnet8",
          "mlperf_vww_mobilenetv1_025"]


def parts_in_sequence(planned) -> JitModel:
    """``planned``'s entry program with every split group's call replaced by its
    parts' calls (workspace addresses plus the parts' offsets), on the JIT."""
    program, kernels = planned.program, list(planned.kernels)
    steps = []
    for step in program.steps:
        parts = planned.parts.get(getattr(step, "group", None), ())
        if not parts:
            steps.append(step)
            continue
        whole = {p.tensor: arg for p, arg in zip(kernels[step.kernel].params, step.args,
                                                 strict=True)}
        for part in parts:
            args = []
            for where in part.args:
                arg = whole[where.tensor]
                assert arg.ref.space == "workspace", "plan with io_in_workspace"
                args.append(Arg(Ref("workspace", arg.ref.index + where.offset), arg.dtype,
                                arg.writable))
            steps.append(KernelCall(len(kernels), tuple(args), step.group,
                                    f"{step.group} on core {part.core}"))
            kernels.append(part.kernel)
    module = build_kernels(kernels, planned.target, support_files(planned.target))
    return JitModel(replace(program, steps=tuple(steps)), kernels, module)


def random_inputs(graph, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(np.iinfo(t.type.np_dtype).min, np.iinfo(t.type.np_dtype).max + 1,
                         t.shape, dtype=t.type.np_dtype) for t in graph.inputs]


def check_parts(graph, cores: int = 2, seeds=(0, 1), **config) -> dict:
    planned = plan_one(graph, "llvm", io_in_workspace=True,
                       config={"placement.cores": cores, **config})
    assert planned.parts
    for parts in planned.parts.values():
        assert [p.core for p in parts] == list(range(cores))
        for p in parts:
            assert len(p.args) == len(p.kernel.params)
    model = parts_in_sequence(planned)
    for seed in seeds:
        inputs = random_inputs(graph, seed)
        for got, want in zip(model.run(inputs), reference.run(graph, inputs), strict=True):
            np.testing.assert_array_equal(got, want)
    return planned.parts


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_the_parts_of_a_placed_model_are_bit_exact(model):
    graph = load_model(MODELS_DIR / f"{model}.tflite")
    parts = check_parts(graph)
    assert len(parts) >= 8


def _residual():
    """A 3x3 conv of stride 1 over 6 rows whose fused add reads a residual operand."""
    b = GraphBuilder("residual")
    q = Quantization((0.05,), (0,))
    x = b.input("x", (1, 6, 4, 3), "int8", q)
    r = b.input("r", (1, 6, 4, 2), "int8", Quantization((0.08,), (2,)))
    w = b.constant("w", np.arange(2 * 3 * 3 * 3).reshape(2, 3, 3, 3) % 7 - 3, "int8",
                   Quantization((0.02, 0.03), (0, 0), 0))
    bias = b.constant("bias", [5, -5], "int32", Quantization((0.001, 0.0015), (0, 0), 0))
    y = b.op("conv2d", [x, w, bias], padding=(1, 1, 1, 1), strides=(1, 1), name="conv",
             out_type=TensorType((1, 6, 4, 2), "int8", Quantization((0.1,), (3,))))
    s = b.op("add", [y, r], name="sum",
             out_type=TensorType((1, 6, 4, 2), "int8", Quantization((0.15,), (-1,))))
    return b.build([s])


def test_the_parts_of_a_row_split_and_their_offsets():
    """Core 1 computes output rows [3, 6): it reads input rows [2, 6) (the halo row 2
    included) at 2 * 4 * 3 bytes, the residual's and writes the output's rows from
    3 * 4 * 2 bytes on, with a kernel of the same fused compute (conv2d + add)."""
    with PassContext(config={"placement.cores": 2, "placement.min_macs": 0}):
        graph = optimize(_residual())
    [group] = annotations(graph).groups
    parts = lower_parts(group, graph, "c", name="k0")
    offsets = [{a.tensor: a.offset for a in p.args} for p in parts]
    assert offsets == [{"x": 0, "r": 0, "sum": 0}, {"x": 2 * 4 * 3, "r": 3 * 4 * 2,
                                                   "sum": 3 * 4 * 2}]
    assert [(p.core, p.kernel.name, p.kernel.op_names) for p in parts] == [
        (0, "k0_p0", ("conv2d", "add")), (1, "k0_p1", ("conv2d", "add"))]
    assert [p.kernel.params[0].nbytes for p in parts] == [4 * 4 * 3, 4 * 4 * 3]


@pytest.mark.slow
def test_a_row_split_with_a_fused_residual_add_is_bit_exact():
    check_parts(_residual(), seeds=(0,), **{"placement.min_macs": 0})
