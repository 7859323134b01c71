"""The parts' kernels of a placed model run in its memory plan, one after the other.

``plan_one`` with ``placement.cores = 2`` lowers every split group whole and
once per part (``PlannedModel.parts``: each part's kernel and the byte
offsets of its arguments in the whole tensors, aot.kernels.parts).  Here the
model runs on this machine (llvm, the kernels compiled by MCJIT) out of one
workspace laid out by its memory plan, group after group, each split group as
its parts' calls one after the other, every argument at its whole tensor's
address plus the part's offset: what the two cores will do, in sequence.  The
outputs are bit-exact with the reference run of the unsplit model.

The runner below is the test's own (kernel calls in group order, views copied
when the plan put them apart), so that it depends on the plan and the kernels
only, not on the entry function.
"""

from __future__ import annotations

import ctypes
from dataclasses import replace

import numpy as np
import pytest
from support.models import MODELS_DIR

from aot import reference
from aot.codegen.llvm import build_kernels
from aot.compile import plan_one
from aot.frontend import load_model
from aot.ir import GraphBuilder, Quantization, TensorType
from aot.codegen.c import C_TYPES
from aot.codegen.kernel import ir_dtype
from aot.kernels import Kernel, lower_group, lower_parts, support_files
from aot.kernels.kernel import KernelConstant
from aot.kernels.parts import share_constants
from aot.passes import FusedGroup, PassContext, PassError, annotations, optimize, part_group

MODELS = ["mlperf_ad_fc_autoencoder", "mlperf_kws_dscnn", "mlperf_ic_resnet8",
          "mlperf_vww_mobilenetv1_025"]


class PlanRunner:
    """A model planned with its inputs and outputs in the workspace, run group by group
    out of one workspace (its whole kernels and its parts' kernels in one JIT module)."""

    def __init__(self, planned) -> None:
        self.planned = planned
        groups = [g for g in planned.groups if g.kind != "view"]
        self.whole = dict(zip((g.name for g in groups), planned.kernels, strict=True))
        kernels = [*planned.kernels,
                   *(p.kernel for parts in planned.parts.values() for p in parts)]
        self.module = build_kernels(kernels, planned.target, support_files(planned.target))
        self.tensors = {t.name: t for t in planned.graph.tensors()}
        size = planned.plan.workspace_bytes
        self._raw = np.zeros(size + 64, np.uint8)
        skip = -self._raw.ctypes.data % 64
        self.workspace = self._raw[skip:skip + size]

    def calls(self, group: str, split: bool) -> list:
        """``(kernel, [(tensor, byte offset)] per argument)`` of ``group``: its parts' calls
        in core order when ``split``, else its whole kernel's."""
        if split and group in self.planned.parts:
            return [(p.kernel, [(a.tensor, a.offset) for a in p.args])
                    for p in self.planned.parts[group]]
        k = self.whole[group]
        return [(k, [(p.tensor, 0) for p in k.params])]

    def address(self, name: str) -> int:
        b = self.planned.plan.buffer_of(self.tensors[name])
        assert b is not None and not b.external and not b.region, name
        return self.workspace.ctypes.data + b.offset

    def bytes_of(self, t) -> np.ndarray:
        start = self.address(t.name) - self.workspace.ctypes.data
        return self.workspace[start:start + t.type.nbytes]

    def run(self, inputs, split: bool) -> list[np.ndarray]:
        graph = self.planned.graph
        for t, x in zip(graph.inputs, inputs, strict=True):
            self.bytes_of(t)[:] = np.ascontiguousarray(x, t.type.np_dtype).view(np.uint8).ravel()
        for g in self.planned.groups:
            if g.kind == "view":
                x, y = g.nodes[0].inputs[0], g.nodes[-1].outputs[0]
                if self.address(x.name) != self.address(y.name):
                    ctypes.memmove(self.address(y.name), self.address(x.name), y.type.nbytes)
                continue
            for kernel, args in self.calls(g.name, split):
                status = self.module.function(kernel.name)(
                    *[self.address(name) + offset for name, offset in args])
                assert status == 0, kernel.name
        return [self.bytes_of(t).view(t.type.np_dtype).reshape(t.shape).copy()
                for t in graph.outputs]


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
    runner = PlanRunner(planned)
    for seed in seeds:
        inputs = random_inputs(graph, seed)
        want = reference.run(graph, inputs)
        for split in (False, True):
            for got, expected in zip(runner.run(inputs, split), want, strict=True):
                np.testing.assert_array_equal(got, expected, err_msg=f"split={split}")
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


def test_the_parts_of_a_row_split_keep_one_copy_of_its_constants():
    """Both parts read the layer's whole weights, bias and requantization tables: core
    0's kernel defines them (without ``static``), core 1's declares them ``extern``, so
    the parts hold the whole kernel's constant bytes once."""
    with PassContext(config={"placement.cores": 2, "placement.min_macs": 0}):
        graph = optimize(_residual())
    [group] = annotations(graph).groups
    whole = lower_group(group, graph, "c", name="k0")
    first, second = (p.kernel for p in lower_parts(group, graph, "c", name="k0"))
    assert {c.linkage for c in first.constants} == {"shared"}
    assert [(c.name, c.linkage) for c in second.constants] == [
        (c.name, "extern") for c in first.constants]
    assert first.constant_bytes == whole.constant_bytes > 0 and second.constant_bytes == 0
    for c in first.constants:
        assert f"\nconst {C_TYPES[ir_dtype(c.data)]} {c.name}[{c.data.size}]" in first.source
        assert (f"extern const {C_TYPES[ir_dtype(c.data)]} {c.name}[{c.data.size}] "
                "AOT_ALIGNED(8);") in second.source


def test_only_arrays_equal_value_for_value_are_shared():
    """An array is declared from the first earlier kernel holding the same element type,
    shape and values; one that differs in any of them (a channel split's slices) stays
    the kernel's own, and so does a kernel's second copy of its own array."""
    def kernel(name, *arrays):
        return Kernel(name, (), 0, 0, (), constants=tuple(
            KernelConstant(f"{name}_c{i}", np.asarray(a)) for i, a in enumerate(arrays)))

    a, b = np.arange(4, dtype=np.int32), np.arange(4, dtype=np.int8)
    shared = share_constants([kernel("p0", a, a), kernel("p1", a, b, a[::-1], a.reshape(2, 2)),
                              kernel("p2", b, a)])
    assert [[(c.name, c.linkage) for c in k.constants] for k in shared] == [
        [("p0_c0", "shared"), ("p0_c1", "static")],
        [("p0_c0", "extern"), ("p1_c1", "shared"), ("p1_c2", "static"), ("p1_c3", "static")],
        [("p1_c1", "extern"), ("p0_c0", "extern")]]
    assert [k.constant_bytes for k in shared] == [32, 4 + 16 + 16, 0]
    # an array a kernel already declares is no home for a later one
    declaring = replace(kernel("q0"), constants=(KernelConstant("x", a, "extern"),))
    assert [[(c.name, c.linkage) for c in k.constants]
            for k in share_constants([declaring, kernel("q1", a)])] == [
        [("x", "extern")], [("q1_c0", "static")]]


@pytest.mark.slow
def test_a_row_split_with_a_fused_residual_add_is_bit_exact():
    check_parts(_residual(), seeds=(0,), **{"placement.min_macs": 0})


def test_a_group_that_does_not_start_with_its_anchor_is_refused():
    with PassContext(config={"placement.cores": 2, "placement.min_macs": 0}):
        graph = optimize(_residual())
    [group] = annotations(graph).groups
    device = annotations(graph).devices(group.nodes[0])[1]
    backwards = FusedGroup(group.name, group.nodes[::-1], group.anchor)
    with pytest.raises(PassError, match="only a group that starts with its anchor is split"):
        part_group(backwards, graph, device)
