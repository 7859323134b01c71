"""Code for patch stages (compile_model(patches=...)): the stage's layers lowered once for
their patch shapes and called for every patch, run by the host build bit-exact with the
whole model; the refusals."""

from __future__ import annotations

import numpy as np
import pytest
from support.models import MODELS_DIR

from aot import __version__
from aot.compile import CompileError, compile_model, compile_one
from aot.executor import stages
from aot.executor.patches import PatchError
from aot.executor.stages import PatchChoice, parse_patches
from aot.executor.budget import MemoryBudgetError
from aot.executor.codegen import host_main
from aot.export.host import build_program, run_program
from aot.ir import GraphBuilder, Quantization
from aot.ir.types import TensorType
from aot.reference import interpreter


def _host(m, x, tmp_path):
    art = m.write(tmp_path / m.name)
    prog = build_program(art, m.name, host_main(m.name, m.graph, m.plan, version=__version__),
                         tmp_path / f"{m.name}.prog", sanitize=True)
    return run_program(prog, m.graph, [x], tmp_path)[0]


def _reference(g, x):
    return np.stack([interpreter.run(g, [xi])[0] for xi in x])


def _int8_chain(h=12, w=11):
    """conv 3x3 SAME (8 channels: the largest tensor) -> max pool 3x3 stride 2 SAME ->
    depthwise 3x3 SAME -> conv 1x1 -> average pool; nonzero zero points, so a wrong fill
    shows."""
    rng = np.random.default_rng(7)
    b = GraphBuilder("chain8")
    x = b.input("x", (1, h, w, 3), "int8", Quantization.per_tensor(0.05, 3))

    def wq(shape):
        return b.constant("", rng.integers(-127, 128, shape).astype(np.int8),
                          quant=Quantization.per_tensor(0.02, 0))

    def bias(n):
        return b.constant("", rng.integers(-300, 300, n).astype(np.int32),
                          quant=Quantization.per_tensor(0.001, 0))

    def q(shape, zp):
        return TensorType(shape, "int8", Quantization.per_tensor(0.04, zp))

    y = b.op("conv2d", [x, wq((8, 3, 3, 3)), bias(8)], q((1, h, w, 8), -7),
             padding=(1, 1, 1, 1), activation="relu")
    oh, ow = (h + 1) // 2, (w + 1) // 2
    y = b.op("max_pool2d", [y], pool_size=(3, 3), strides=(2, 2),
             padding=(0, 0, (oh - 1) * 2 + 3 - h, (ow - 1) * 2 + 3 - w))
    y = b.op("depthwise_conv2d", [y, wq((1, 3, 3, 8)), bias(8)], q((1, oh, ow, 8), 5),
             padding=(1, 1, 1, 1), depth_multiplier=1)
    y = b.op("conv2d", [y, wq((2, 1, 1, 8)), bias(2)], q((1, oh, ow, 2), 2))
    return b.build([b.op("avg_pool2d", [y], pool_size=(oh, ow))])


@pytest.mark.parametrize("grid", ["2x2", "3x3", "4x1", "1x3"])
@pytest.mark.one_fast
def test_int8_chain_by_patches_is_bit_exact(grid, tmp_path):
    g = _int8_chain()
    m = compile_model(g, "host/native", patches=grid, measure_code=False)
    assert m.patches is not None and len(m.patches.stage.nodes) >= 2
    stage = m.patches.stage
    assert f"for (int32_t pr = 0; pr < {len(stage.row_starts)}; ++pr)" \
        in m.files["codegen/model.c"]  # the loops over the tiles' rows and columns
    assert f"for (int32_t pc = 0; pc < {len(stage.col_starts)}; ++pc)" \
        in m.files["codegen/model.c"]
    # one kernel per layer, whatever the number of patches; P_run_kernel times the others
    assert len(m.kernels) == len(g.nodes)
    callable_alone = len(g.nodes) - len(m.patches.stage.nodes)
    assert f"#define MODEL_NUM_KERNELS {callable_alone}u" in m.files["include/model.h"]
    x = np.random.default_rng(1).integers(-128, 128, (3, *g.inputs[0].shape)).astype(np.int8)
    np.testing.assert_array_equal(_host(m, x, tmp_path), _reference(g, x))


@pytest.mark.slow
def test_float_chain_fills_with_minus_infinity_and_zero(tmp_path):
    """A float max pool reads -inf outside the image, a float convolution 0.0."""
    rng = np.random.default_rng(2)
    b = GraphBuilder("fchain")
    x = b.input("x", (1, 15, 16, 1), "float32")
    w = b.constant("", rng.standard_normal((16, 3, 3, 1)).astype(np.float32))
    y = b.op("conv2d", [x, w, None], padding=(1, 1, 1, 1))
    y = b.op("max_pool2d", [y], pool_size=(3, 3), padding=(1, 1, 1, 1))
    w2 = b.constant("", rng.standard_normal((1, 3, 3, 16)).astype(np.float32))
    y = b.op("conv2d", [y, w2, None], padding=(1, 1, 1, 1), activation="relu")
    g = b.build([b.op("avg_pool2d", [y], pool_size=(15, 16))])
    m = compile_model(g, "host/native", patches="2x2", measure_code=False)
    assert len(m.patches.stage.nodes) == 3
    xs = rng.standard_normal((2, *g.inputs[0].shape)).astype(np.float32) - 2.0
    whole = _host(compile_model(g, "host/native", name="whole", measure_code=False), xs,
                  tmp_path)
    np.testing.assert_array_equal(_host(m, xs, tmp_path), whole)
    jit = compile_model(g, "llvm", patches="2x2", measure_code=False).jit()
    np.testing.assert_array_equal(jit.run_sequence([xs])[0], whole)


def test_patch_buffers_are_planned_beside_the_stage_input_and_output():
    m = compile_model(_int8_chain(), "host/native", patches="3x3", measure_code=False)
    buf = m.plan.buffer_of(m.patches.buffer)
    stage = m.patches.stage
    assert buf.size == m.patches.plan.workspace_bytes
    for t in (stage.input, stage.output):
        other = m.plan.buffer_of(t)
        assert other.start <= buf.start <= other.end
        assert buf.offset + buf.size <= other.offset or other.offset + other.size <= buf.offset


@pytest.mark.parametrize("value, message", [
    ("3", "a grid 'RxC'"), ("0x2", "a grid 'RxC'"), ((2,), "a grid 'RxC'"), ("on", "'auto'")])
def test_bad_patches_are_refused(value, message):
    with pytest.raises(PatchError, match=message):
        parse_patches(value)


def test_parse_patches():
    assert parse_patches(None) == parse_patches("off") == "off"
    assert parse_patches("auto") == "auto"
    assert parse_patches("3x2") == parse_patches((3, 2)) == (3, 2)


def test_a_grid_on_a_graph_without_a_stage_is_refused():
    b = GraphBuilder("dense")
    x = b.input("x", (1, 4), "float32")
    w = b.constant("", np.ones((3, 4), np.float32))
    g = b.build([b.op("dense", [x, w, None])])
    with pytest.raises(PatchError, match="no patch stage"):
        compile_model(g, "host/native", patches="2x2", measure_code=False)
    # auto finds nothing and compiles without patches
    assert compile_model(g, "host/native", patches="auto", measure_code=False).patches is None


@pytest.mark.parametrize("grid", [(2, 2), (3, 3)])
@pytest.mark.one_fast
def test_a_residual_stage_reads_the_middle_of_its_input_patch(grid, tmp_path):
    """x -> conv -> conv -> add(x): the add reads x's patch without the convolutions' halo,
    through a strided_slice at a fixed offset."""
    rng = np.random.default_rng(4)
    b = GraphBuilder("res")
    x = b.input("x", (1, 9, 8, 2), "float32")

    def conv(t):
        w = b.constant("", rng.standard_normal((2, 3, 3, 2)).astype(np.float32))
        return b.op("conv2d", [t, w, None], padding=(1, 1, 1, 1), activation="relu")

    s = b.op("add", [conv(conv(x)), x])
    g = b.build([b.op("avg_pool2d", [s], pool_size=(9, 8))])
    m = compile_one(g, "host/native", patches=PatchChoice(3, grid),
                    measure_code=False)  # the block
    assert len(m.patches.stage.nodes) == 3
    assert "strided_slice" in [n.op for n in m.patches.graph.nodes]
    xs = rng.standard_normal((2, *g.inputs[0].shape)).astype(np.float32)
    whole = compile_model(g, "host/native", name="whole", patches="off", measure_code=False)
    np.testing.assert_array_equal(_host(m, xs, tmp_path), _host(whole, xs, tmp_path))


@pytest.mark.parametrize("grid", ["2x2", "4x1"])
@pytest.mark.one_fast
def test_the_llvm_jit_runs_the_same_patch_loop_bit_exact(grid):
    g = _int8_chain()
    m = compile_model(g, "llvm", patches=grid, measure_code=False)
    assert str(m.lowered.run).count("for (pr, 0,") == 1
    x = np.random.default_rng(5).integers(-128, 128, (3, *g.inputs[0].shape)).astype(np.int8)
    np.testing.assert_array_equal(m.jit().run_sequence([x])[0], _reference(g, x))


def test_patches_with_memory_regions_are_not_supported_yet():
    g = _int8_chain()
    with pytest.raises(CompileError, match="not supported yet: patches with memory regions"):
        compile_model(g, "qemu/mps2-an386", patches="2x2", memory_regions="ram",
                      measure_code=False)


@pytest.mark.slow
def test_vww_by_patches_is_bit_exact_and_smaller(tmp_path):
    path = MODELS_DIR / "mlperf_vww_mobilenetv1_025.tflite"
    whole = compile_model(path, "host/native", io_in_workspace=False, measure_code=False)
    m = compile_model(path, "host/native", patches="3x3", io_in_workspace=False,
                      measure_code=False)
    assert m.sizes.workspace < whole.sizes.workspace
    x = np.random.default_rng(3).integers(-128, 128, (2, *m.graph.inputs[0].shape)) \
        .astype(np.int8)
    np.testing.assert_array_equal(_host(m, x, tmp_path), _host(whole, x, tmp_path))


@pytest.mark.slow
def test_a_budget_no_plan_meets_tries_stages(tmp_path):
    g = _int8_chain(24, 24)
    whole = compile_model(g, "host/native", memory_budget=5000, measure_code=False)
    assert whole.patches is None and whole.sizes.ram <= 5000  # fits: no patches
    m = compile_model(g, "host/native", memory_budget=4000, measure_code=False)
    assert m.patches is not None and m.budget.ram <= 4000 < whole.budget.ram
    # a stream stage first: it recomputes nothing, so it costs less work than any patch grid
    assert m.metadata()["patches"]["band_rows"] == m.patches.stage.band
    x = np.random.default_rng(4).integers(-128, 128, (2, *g.inputs[0].shape)).astype(np.int8)
    np.testing.assert_array_equal(_host(m, x, tmp_path), _reference(g, x))


@pytest.mark.slow
def test_a_budget_below_every_stage_reports_the_plan_without_patches():
    with pytest.raises(MemoryBudgetError, match="smallest plan reachable needs 4608 bytes"):
        compile_model(_int8_chain(24, 24), "host/native", memory_budget=1000,
                      measure_code=False)


@pytest.mark.slow
def test_auto_keeps_the_plan_with_less_ram(monkeypatch):
    """The stage's estimate misses the plan's overlaps (VWW with its input in the
    workspace: 36,864 bytes without patches, 44,316 with auto's stage): auto compares the
    real plans.  A larger allowance makes this small chain's auto pick a stage."""
    monkeypatch.setattr(stages, "PATCH_ALLOWANCE", 0.5)
    g = _int8_chain(48, 48)
    picked = []
    for io in (False, True):
        off = compile_model(g, "host/native", io_in_workspace=io, patches="off",
                            measure_code=False)
        auto = compile_model(g, "host/native", patches="auto", io_in_workspace=io,
                             measure_code=False)
        assert auto.sizes.ram <= off.sizes.ram
        assert (auto.patches is None) == (auto.sizes.ram == off.sizes.ram)
        picked.append(auto.patches is not None)
    assert any(picked)
