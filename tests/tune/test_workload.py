"""Workload extraction: distinct kernels, reference data, and the default config."""

import numpy as np
import pytest
from support.disasm import disassemble

from aot.kernels import lower_group
from aot.target import Target
from aot.tune.workload import extract_workloads

M4 = Target("c -keys=arm_cpu,cpu -mcpu=cortex-m4")
RISCV = Target("c -keys=riscv,cpu -march=rv32imac")


@pytest.fixture(scope="module")
def kws(models_dir):
    return extract_workloads(models_dir / "mlperf_kws_dscnn.tflite", M4)


def test_kws_has_four_distinct_workloads(kws):
    _, workloads = kws
    assert [(w.description, len(w.groups)) for w in workloads] == [
        ("conv2d 1x49x10x1 * 64x10x4x1 -> 1x25x5x64", 1),
        ("depthwise_conv2d 1x25x5x64 * 1x3x3x64 -> 1x25x5x64", 4),
        ("conv2d 1x25x5x64 * 64x1x1x64 -> 1x25x5x64", 4),
        ("dense 1x64 * 12x64 -> 1x12", 1),
    ]
    assert len({w.key for w in workloads}) == 4


M55_BOARD = Target("c -keys=arm_mve,arm_cpu,cpu -mcpu=cortex-m55 -mfloat-abi=hard")


@pytest.mark.parametrize("target", [M4, RISCV, M55_BOARD], ids=["arm_cpu", "riscv", "arm_mve"])
@pytest.mark.one_fast
def test_default_config_is_the_library_strategy(models_dir, target):
    """Untuned compilation and the default config give the same C."""
    ag, workloads = extract_workloads(models_dir / "mlperf_kws_dscnn.tflite", target)
    for wl in workloads:
        want = lower_group(wl.group, ag, target, name="k").source
        assert wl.lower(wl.default, "k").source == want, wl.description
    intrinsics = [w.default["accumulate"] != "loops" for w in workloads]
    assert intrinsics == [("arm_cpu" in target.keys)] * len(workloads)


def test_reference_data_has_the_kernel_shapes(kws):
    ag, workloads = kws
    for wl in workloads:
        out = wl.group.outputs(ag)[0]
        assert wl.expected.shape == out.shape and wl.expected.dtype == out.type.np_dtype
        assert wl.inputs and all(isinstance(v, np.ndarray) for v in wl.inputs.values())
        # real activations, not a constant
        assert len(np.unique(wl.expected)) > 1


@pytest.mark.slow
def test_every_config_of_a_workload_lowers(kws):
    _, workloads = kws
    dense = workloads[-1]
    sources = {dense.lower(c, "k").source for c in dense.space}
    # with an intrinsic, the reduction knob changes nothing: fewer distinct kernels
    assert 1 < len(sources) < len(dense.space)


def test_optimize_knob_prefixes_a_gcc_pragma(kws):
    _, workloads = kws
    dense = workloads[-1]
    fast = dense.space.config({**dense.default, "optimize": "O3,unroll-loops"})
    source = dense.lower(fast, "k").source
    assert source.startswith('#pragma GCC optimize ("O3", "unroll-loops")\n')
    assert source.split("\n", 1)[1] == dense.lower(dense.default, "k").source


M55 = Target("c -keys=arm_cpu,cpu -mcpu=cortex-m55 -mfloat-abi=hard")


@pytest.mark.slow
def test_vector_isa_knob_chooses_helium_or_dsp_helpers_on_a_core_with_both(models_dir,
                                                                           tmp_path):
    """Only cores with Helium and the DSP extension get the knob; its "dsp" value
    builds the same loop nest on the DSP helpers (SMLAD, no VMLADAV, which objdump
    prints as its alias VMLAVA)."""
    assert "vector_isa" not in {k.name for k in extract_workloads(
        models_dir / "mlperf_kws_dscnn.tflite", M4)[1][-1].space.knobs}
    _, workloads = extract_workloads(models_dir / "mlperf_kws_dscnn.tflite", M55)
    dense = workloads[-1]
    assert dense.default["vector_isa"] == "mve"
    dsp = dense.space.config({**dense.default, "vector_isa": "dsp"})
    source = dense.lower(dsp, "k").source
    assert source.startswith("#define AOT_NO_MVE 1\n")
    assert source.split("\n", 1)[1] == dense.lower(dense.default, "k").source
    flags = ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"]
    with_mve = disassemble(dense.lower(dense.default, "k").source, flags, tmp_path / "mve")
    with_dsp = disassemble(source, flags, tmp_path / "dsp")
    assert "vmlava" in with_mve and "smlad" not in with_mve
    assert "smlad" in with_dsp and "vmlava" not in with_dsp


def test_arm_mve_templates_make_the_vectorized_epilogue_a_knob(models_dir):
    """On the M55 board's keys the conv templates offer the library's
    aot_requant_row_s8 epilogue as a knob; turned off, the epilogue is loops."""
    _, workloads = extract_workloads(models_dir / "mlperf_kws_dscnn.tflite", M55_BOARD)
    conv = next(w for w in workloads if w.description.startswith("conv2d 1x25x5x64"))
    assert conv.default["requant_row"] is True
    assert "aot_requant_row_s8(" in conv.lower(conv.default, "k").source
    off = conv.space.config({**conv.default, "requant_row": False})
    assert "aot_requant_row_s8(" not in conv.lower(off, "k").source
