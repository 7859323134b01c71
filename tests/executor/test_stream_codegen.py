"""Code for stream stages (compile_model(patches="stream[:T]")): the stage's layers lowered
once for their band shapes and called once per band, run by the host build (ASan/UBSan) and
the LLVM JIT bit-exact with the whole model; the refusals."""

from __future__ import annotations

import numpy as np
import pytest
from support.models import MODELS_DIR
from test_patch_codegen import _host, _int8_chain, _reference

from aot import compile as compile_mod
from aot.compile import CompileError, compile_model
from aot.passes import PassContext, optimize
from aot.executor import stages
from aot.executor.patches import PatchError
from aot.executor.stages import StreamChoice, default_stream, parse_patches
from aot.executor.codegen import StreamCode
from aot.executor.memory import MemoryPlanError
from aot.frontend import load_model
from aot.ir import GraphBuilder

RESNET8 = MODELS_DIR / "mlperf_ic_resnet8.tflite"


@pytest.mark.parametrize("spec", ["stream:1", "stream:2", "stream:3", "stream"])
@pytest.mark.one_fast
def test_int8_chain_by_bands_is_bit_exact(spec, tmp_path):
    g = _int8_chain()  # output 6x6: bands of 1, 2, 3 rows
    m = compile_model(g, "host/native", patches=spec, measure_code=False)
    stage = m.patches.stage
    assert len(stage.nodes) >= 2 and m.metadata()["patches"]["kind"] == "stream"
    if spec != "stream":
        assert stage.band == int(spec.split(":")[1])
    c = m.files["codegen/model.c"]
    first = f"({stage.first_band})" if stage.first_band < 0 else str(stage.first_band)
    assert f"for (int32_t j = {first}; j < {stage.bands}; ++j)" in c
    # one kernel per layer, whatever the number of bands
    assert len(m.kernels) == len(g.nodes)
    x = np.random.default_rng(1).integers(-128, 128, (3, *g.inputs[0].shape)).astype(np.int8)
    np.testing.assert_array_equal(_host(m, x, tmp_path), _reference(g, x))


def _float_residual():
    """max pool 3x3 SAME (fill -inf: a 4-byte pattern) -> conv 3x3 stride 2 -> add(conv 1x1
    stride 2) -> average pool."""
    rng = np.random.default_rng(2)
    b = GraphBuilder("fres")
    x = b.input("x", (1, 12, 8, 2), "float32")
    p = b.op("max_pool2d", [x], pool_size=(3, 3), padding=(1, 1, 1, 1))

    def conv(t, k, pad):
        wt = b.constant("", rng.standard_normal((3, k, k, 2)).astype(np.float32))
        return b.op("conv2d", [t, wt, None], strides=(2, 2), padding=pad, activation="relu")

    s = b.op("add", [conv(p, 3, (0, 0, 1, 1)), conv(p, 1, (0, 0, 0, 0))])
    return b.build([b.op("avg_pool2d", [s], pool_size=(6, 4))])


@pytest.mark.parametrize("band", [1, 3])
@pytest.mark.one_fast
def test_float_strided_residual_by_bands_is_bit_exact(band, tmp_path):
    g = _float_residual()
    m = compile_model(g, "host/native", patches=StreamChoice(4, band), measure_code=False)
    assert len(m.patches.stage.nodes) == 4 and m.patches.stage.band == band
    assert "d[k] = (-INFINITY);" in m.files["codegen/model.c"]  # max pool's fill, -inf
    x = np.random.default_rng(3).standard_normal((2, *g.inputs[0].shape)).astype(np.float32)
    # the same C kernels' sums without the stage (the reference may round differently)
    whole = compile_model(g, "host/native", name="whole", patches="off", measure_code=False)
    np.testing.assert_array_equal(_host(m, x, tmp_path), _host(whole, x, tmp_path))


@pytest.mark.parametrize("spec", ["stream:1", "stream:3"])
@pytest.mark.one_fast
def test_the_llvm_jit_runs_the_same_band_loop_bit_exact(spec):
    g = _int8_chain()
    m = compile_model(g, "llvm", patches=spec, measure_code=False)
    assert str(m.lowered.run).count("for (j, ") == 1
    x = np.random.default_rng(5).integers(-128, 128, (3, *g.inputs[0].shape)).astype(np.int8)
    np.testing.assert_array_equal(m.jit().run_sequence([x])[0], _reference(g, x))
    f = _float_residual()
    xf = np.random.default_rng(6).standard_normal((2, *f.inputs[0].shape)).astype(np.float32)
    whole = compile_model(f, "llvm", name="whole", patches="off", measure_code=False)
    band = int(spec.split(":")[1])
    banded = compile_model(f, "llvm", name="banded", patches=StreamChoice(4, band),
                           measure_code=False)
    np.testing.assert_array_equal(banded.jit().run_sequence([xf])[0],
                                  whole.jit().run_sequence([xf])[0])


@pytest.mark.slow
def test_resnet8_streams_its_stem_and_two_blocks_bit_exact(tmp_path):
    m = compile_model(RESNET8, "host/native", patches="stream:1", measure_code=False)
    stage = m.patches.stage
    # 10,624 bytes of windows by the analysis, less the two fused away (a convolution
    # whose output only its residual add reads, in the same kernel)
    assert len(stage.nodes) == 8 and m.patches.buffer.type.nbytes == 9088
    assert m.sizes.workspace == 20352  # 32,768 without the stage
    g = load_model(RESNET8)
    x = np.random.default_rng(3).integers(-128, 128, (2, *g.inputs[0].shape)).astype(np.int8)
    np.testing.assert_array_equal(_host(m, x, tmp_path), _reference(g, x))


def test_parse_stream():
    assert parse_patches("stream") == ("stream", None)
    assert parse_patches("stream:4") == ("stream", 4)


@pytest.mark.parametrize("value", ["stream:0", "stream:x", "streams", "stream:"])
def test_bad_stream_specs_are_refused(value):
    with pytest.raises(PatchError, match="takes bands of T >= 1 rows"):
        parse_patches(value)


def test_a_band_that_divides_no_stage_is_refused():
    with pytest.raises(PatchError, match="no stream stage in bands of 5 rows"):
        compile_model(_int8_chain(), "host/native", patches="stream:5", measure_code=False)


def test_streams_with_memory_regions_are_not_supported_yet():
    with pytest.raises(CompileError, match="not supported yet: patches with memory regions"):
        compile_model(_int8_chain(), "qemu/mps2-an386", patches="stream", memory_regions="ram",
                      measure_code=False)


@pytest.mark.slow
def test_the_default_streams_resnet8_and_off_turns_it_off():
    m = compile_model(RESNET8, "host/native", measure_code=False)
    assert isinstance(m.patches, StreamCode) and m.patches.stage.band == 1
    assert m.sizes.workspace == 20352 and "stream: the first 8 layers" in m.patches.summary()
    off = compile_model(RESNET8, "host/native", patches="off", measure_code=False)
    assert off.patches is None and off.sizes.workspace == 32768


@pytest.mark.slow
def test_the_default_keeps_no_stage_where_the_plan_without_is_smaller():
    """KWS: a stream stage lowers the whole-step estimate (16,000 -> 13,710 bytes) but not
    the plan with overlaps (9,280): the default compiles both and keeps the smaller."""
    kws = MODELS_DIR / "mlperf_kws_dscnn.tflite"
    assert default_stream(optimize(load_model(kws), PassContext(opt_level=2)), True) is not None
    m = compile_model(kws, "host/native", measure_code=False)
    assert m.patches is None and m.sizes.workspace == 9280


def test_the_default_uses_no_stage_with_memory_regions():
    m = compile_model(RESNET8, "qemu/mps2-an386", memory_regions="ram,psram",
                      measure_code=False)
    assert m.patches is None


@pytest.mark.slow
def test_a_budget_no_plan_meets_tries_stream_stages(tmp_path):
    m = compile_model(RESNET8, "host/native", memory_budget="24K", measure_code=False)
    assert isinstance(m.patches, StreamCode) and m.budget.ram <= 24 * 1024
    g = load_model(RESNET8)
    x = np.random.default_rng(9).integers(-128, 128, (1, *g.inputs[0].shape)).astype(np.int8)
    np.testing.assert_array_equal(_host(m, x, tmp_path), _reference(g, x))


def test_the_default_streams_a_model_too_big_for_the_board_without(monkeypatch):
    """40x40x8 int8 activations do not fit the micro:bit's 12,288 bytes; streamed they do (a
    larger allowance: this small chain's copies weigh more than 5 % of its MACs)."""
    monkeypatch.setattr(stages, "PATCH_ALLOWANCE", 0.5)
    g = _int8_chain(40, 40)
    with pytest.raises(MemoryPlanError, match="needs 12800 bytes of RAM"):
        compile_model(g, "qemu/microbit", patches="off", measure_code=False)
    m = compile_model(g, "qemu/microbit", measure_code=False)
    assert isinstance(m.patches, StreamCode) and m.sizes.ram <= 12288


@pytest.mark.slow
def test_the_default_prints_and_measures_only_the_plan_it_keeps(monkeypatch):
    """ResNet-8: both plans are made (lowered and placed), but C is printed and its code
    measured for the kept one only."""
    printed, measured = [], []
    generate = compile_mod.entry.generate
    monkeypatch.setattr(compile_mod.entry, "generate",
                        lambda *a, **k: printed.append(k["patches"]) or generate(*a, **k))
    monkeypatch.setattr(compile_mod, "_code_bytes",
                        lambda *a, **k: measured.append(a[1]) or (1, "", {}))
    m = compile_model(RESNET8, "host/native")
    assert isinstance(m.patches, StreamCode) and m.sizes.workspace == 20352
    assert printed == [m.patches] and len(measured) == 1 and m.sizes.code == 1
