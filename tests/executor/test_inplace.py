"""In-place writes in compiled models: planned only with the kernel's consent,
bound to one address in the generated call, and bit-exact with TFLM.

Small models from tests/support/tflite_builder.py: two convolutions of one
input whose sum (a residual ADD fused into the second convolution) may
overwrite the first convolution's output when nothing reads it later.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from support.models import MODELS_DIR
from support.tflite_builder import ModelBuilder
from toy_kernels import ToyLibrary

from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.executor import codegen, format_memory_report, plan_memory
from aot.executor.codegen import CodegenError
from aot.ir import GraphBuilder
from aot.kernels import lower_group

C = 4
HW = (6, 5)


def residual_model(*, reused_later: bool) -> bytes:
    """x -> a = conv1x1(x); s = relu(conv3x3(x) + a); y = conv1x1(s) [+ a].

    With ``reused_later`` the last step adds ``a`` again, so ``a`` is still
    needed after ``s`` is written and must not be overwritten by it.
    """
    rng = np.random.default_rng(11)
    mb = ModelBuilder()
    x = mb.input("x", [1, *HW, C], "int8", scale=0.05, zero_point=-3)

    def conv(name, src, k, scale, zero_point, output=False):
        ws = rng.uniform(0.005, 0.03, C).astype(np.float32)
        w = mb.const(f"{name}_w", rng.integers(-127, 128, (C, k, k, C)), "int8", scale=ws,
                     zero_point=0, axis=0)
        b = mb.const(f"{name}_b", rng.integers(-500, 500, C), "int32", scale=0.05 * ws,
                     zero_point=0, axis=0)
        make = mb.output if output else mb.tensor
        y = make(name, [1, *HW, C], "int8", scale=scale, zero_point=zero_point)
        mb.op("CONV_2D", [src, w, b], [y], padding="SAME", stride_w=1, stride_h=1)
        return y

    a = conv("a", x, 1, 0.06, 2)
    b = conv("b", x, 3, 0.07, -1)
    s = mb.tensor("s", [1, *HW, C], "int8", scale=0.09, zero_point=-5)
    mb.op("ADD", [b, a], [s], fused_activation_function="RELU")
    if not reused_later:
        conv("y", s, 1, 0.1, 4, output=True)
    else:
        c = conv("c", s, 1, 0.1, 4)
        y = mb.output("y", [1, *HW, C], "int8", scale=0.12, zero_point=1)
        mb.op("ADD", [c, a], [y])
    return mb.finish()


def _inputs(n: int) -> np.ndarray:
    return np.random.default_rng(3).integers(-128, 128, (n, 1, *HW, C)).astype(np.int8)


def _run_and_compare(compiled, model: bytes, tflm, tmp_path, sanitize=False):  # noqa: F811
    xs = _inputs(3)
    got = run_on_host(compiled, [xs], workdir=tmp_path, sanitize=sanitize)
    want = tflm.run(model, [[x] for x in xs])
    for i in range(len(xs)):
        np.testing.assert_array_equal(got[0][i], want[i][0], err_msg=f"invocation {i}")


def _in_place(plan):
    return [(y, x) for y, x, how in plan.aliases if how == "in place"]


@pytest.mark.parametrize("sanitize", [False, True], ids=["plain", "sanitized"])
@pytest.mark.one_fast
def test_residual_add_overwrites_its_dying_operand_and_stays_exact(sanitize, tflm,  # noqa: F811
                                                                   tmp_path):
    model = residual_model(reused_later=False)
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    assert _in_place(compiled.plan) == [("s", "a")]
    writer = next(k for k in compiled.kernels if any(p.tensor == "s" for p in k.params))
    (i, j), = writer.inplace
    assert (writer.params[i].tensor, writer.params[j].tensor) == ("a", "s")
    # the call passes one address for both
    call = next(line for line in compiled.files["codegen/m.c"].splitlines()
                if f"{writer.name}(" in line and "status" in line)
    tensors = {t.name: t for t in compiled.graph.tensors()}
    buf = compiled.plan.buffer_of(tensors["s"])
    assert buf is compiled.plan.buffer_of(tensors["a"])
    assert call.count(f"(ws + {buf.offset})") == 2
    without = compile_model(path, "host/native", name="m", measure_code=False, inplace=False)
    assert _in_place(without.plan) == []
    assert compiled.sizes.workspace < without.sizes.workspace
    _run_and_compare(compiled, model, tflm, tmp_path, sanitize=sanitize)


def test_an_operand_read_later_is_never_overwritten(tflm, tmp_path):  # noqa: F811
    model = residual_model(reused_later=True)
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    assert ("s", "a") not in _in_place(compiled.plan)
    a = compiled.plan.buffer_of(next(t for t in compiled.graph.tensors() if t.name == "a"))
    # s never shares a's bytes; the output y (in the workspace) may, since the
    # last step reads a for the last time as it writes y.
    assert "s" not in [t.name for t in a.tensors]
    assert ("s", "a") not in [(y, x) for y, x, how in compiled.plan.aliases]
    _run_and_compare(compiled, model, tflm, tmp_path)


def test_a_kernel_that_does_not_accept_the_alias_is_refused(tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(residual_model(reused_later=False))
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    ag = compiled.graph
    plan = plan_memory(ag, inplace=True)
    assert _in_place(plan)
    groups = list(ag.annotations.groups)
    kernels = [lower_group(g, ag, "c", name=f"m_k{i}") for i, g in enumerate(groups)
               if g.kind != "view"]  # lowered without the pair: all restrict
    with pytest.raises(CodegenError, match="declares them restrict"):
        codegen.generate("m", ag, groups, kernels, plan, target="c", board=None,
                         version="test", target_hash="0")


class _Refusing:
    """The kernel library, but no kernel allows an in-place pair or an overlap."""

    def __init__(self):
        self.withheld = []

    def lower_group(self, group, ag, target, *, name):
        kernel = lower_group(group, ag, target, name=name)
        self.withheld += [(kernel.params[i].tensor, kernel.params[j].tensor)
                          for i, j in kernel.inplace_allowed]
        return dataclasses.replace(kernel, allow_inplace=(), allow_overlap=())

    @staticmethod
    def support_files(target):
        from aot.kernels import support_files
        return support_files(target)


@pytest.mark.slow
def test_a_refused_pair_keeps_its_own_buffer(tflm, tmp_path):  # noqa: F811
    model = residual_model(reused_later=False)
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    library = _Refusing()
    compiled = compile_model(path, "host/native", name="m", measure_code=False,
                             kernel_library=library)
    assert ("a", "s") in library.withheld and _in_place(compiled.plan) == []
    without = compile_model(path, "host/native", name="m", measure_code=False, inplace=False)
    assert compiled.sizes.workspace == without.sizes.workspace
    _run_and_compare(compiled, model, tflm, tmp_path)


def test_a_library_without_inplace_plans_none():
    g = GraphBuilder("toy")
    x = g.input("x", (1, 16), "float32")
    a = g.op("relu", [x])
    y = g.op("mul", [g.op("add", [a, a]), a])
    compiled = compile_model(g.build([y]), "host/native", name="toy", measure_code=False,
                             kernel_library=ToyLibrary())
    assert _in_place(compiled.plan) == []


def _add_graph(through_view: bool):
    g = GraphBuilder("view")
    x = g.input("x", (2, 8), "float32")
    a = g.op("relu", [x])
    v = g.op("reshape", [a], newshape=(2, 8)) if through_view else a
    return g.build([g.op("relu", [g.op("add", [a, v])])]), a, v


def test_a_view_of_the_operand_read_by_the_same_step_blocks_the_alias():
    # add(a, reshape(a)): writing the sum over a would change the view's
    # bytes, a second kernel argument, while the kernel still reads it.
    graph, a, _ = _add_graph(through_view=False)
    assert a.name in {x for _, x in _in_place(plan_memory(graph, inplace=True))}
    graph, a, v = _add_graph(through_view=True)
    plan = plan_memory(graph, inplace=True)
    assert plan.buffer_of(a) is plan.buffer_of(v)
    assert not {a.name, v.name} & {x for _, x in _in_place(plan)}


@pytest.mark.slow
def test_resnet8_residual_adds_write_in_place():
    path = MODELS_DIR / "mlperf_ic_resnet8.tflite"
    # without the default stream stage, which runs the first two blocks band by band
    compiled = compile_model(path, "qemu/mps2-an386", name="r8", measure_code=False,
                             patches="off")
    pairs = _in_place(compiled.plan)
    assert len(pairs) == 3 and all("add" in y for y, _ in pairs)
    outs = {y for y, _ in pairs}
    accepted = [k for k in compiled.kernels
                if k.inplace and any(p.tensor in outs for p in k.params)]
    assert len(accepted) == 3 and all("add" in k.op_names for k in accepted)
    # The other bound kernels are the overlaps of the plan (docs/memory.md).
    overlaps = {(y, x) for y, x, how in compiled.plan.aliases if how == "overlap"}
    for k in compiled.kernels:
        if k.inplace and k not in accepted:
            (i, j), = k.inplace
            assert (k.params[j].tensor, k.params[i].tensor) in overlaps
    for k in accepted:
        (i, j), = k.inplace
        decl = k.prototype[k.prototype.index("(") + 1:-2].split(", ")
        assert "restrict" not in decl[i] and "restrict" not in decl[j]
        assert all("restrict" in d for n, d in enumerate(decl) if n not in (i, j))
    report = format_memory_report(compiled.plan)
    assert report.count("in place: ") == 3
    without = compile_model(path, "qemu/mps2-an386", name="r8", measure_code=False,
                            inplace=False, patches="off")
    assert compiled.sizes.workspace < without.sizes.workspace


def test_compile_command_reports_the_aliases_and_turns_them_off(tmp_path, capsys):
    from aot.cli import main

    path = tmp_path / "m.tflite"
    path.write_bytes(residual_model(reused_later=False))
    assert main(["compile", str(path), "--target", "c", "-o", str(tmp_path / "a"),
                 "--memory-report"]) == 0
    assert "in place: s over a" in capsys.readouterr().out
    assert main(["compile", str(path), "--target", "c", "-o", str(tmp_path / "b"),
                 "--memory-report", "--no-inplace"]) == 0
    assert "in place:" not in capsys.readouterr().out
