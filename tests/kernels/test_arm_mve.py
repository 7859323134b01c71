"""Helium (MVE) paths of the arm_cpu kernels (aot/kernels/conv2d/helium.py).

The generated kernels are the same C for every Cortex-M; built for a core
with MVE (Cortex-M55) the dot products of conv2d and dense run VMLADAVA and
depthwise convolutions run on int32 lanes.  Targets with the ``arm_mve`` key
(the qemu/mps3-an547 board) and ``arm_cpu`` call the epilogue's row helper,
which requantizes four outputs per vector step there.
The fast tests check what each build contains; the slow ones run the
arm_cpu edge cases of test_arm_cpu.py and the MLPerf Tiny models on the
emulated Cortex-M55 (qemu/mps3-an547) against the reference, bit for bit.
"""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest
from kernel_checks import check_graph, seeded_inputs
from support.disasm import disassemble
from support.models import MODELS_DIR
from test_arm_cpu import CASES, _graph

from aot.compile import compile_model
from aot.firmware import run_on_board
from aot.firmware.verify import compare, reference_outputs
from aot.kernels import lower_group
from aot.passes import annotations, optimize

M55 = ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"]
M4 = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
BOARD = "qemu/mps3-an547"
ARM_GCC = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                             reason="needs arm-none-eabi-gcc")
# objdump prints VMLADAVA as its alias VMLAVA (VMLAVAT inside a VPT block)
VMLADAVA = re.compile(r"\bvml(?:ad)?avat?\.s8\b")
# int8 im2col patches (kernel rows shorter than a vector) over several chunks
# of pixels, the last one odd
MVE_CASES = CASES + [
    ("conv2d", {"cin": 1, "cout": 6, "hw": (10, 40), "k": (8, 4), "padding": (3, 4, 1, 2)}),
    ("conv2d", {"cin": 3, "cout": 5, "hw": (6, 61), "k": (3, 5), "padding": (0, 0, 0, 0)}),
]
# fused residual adds: a row call (channels a multiple of four and not: the
# scalar tail), stride 2 with a relu, a pixel at a time (row over the budget)
RESIDUAL_VARIANTS = [
    {"cin": 13, "k": (1, 1), "padding": (0, 0, 0, 0)},
    {"cin": 16, "cout": 8, "hw": (6, 7)},
    {"cin": 8, "cout": 6, "hw": (9, 8), "strides": (2, 2), "activation": "relu"},
    {"cin": 5, "cout": 33, "hw": (3, 40)},
]
MVE_CASES += [("conv2d", {**v, "residual": True}) for v in RESIDUAL_VARIANTS[1:]]
MVE_TARGET = "c -keys=arm_mve,arm_cpu,cpu -mcpu=cortex-m55"
QEMU = pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="needs qemu-system-arm")


def _disassembly(graph, flags, tmp_path) -> str:
    """The objdump of the graph's first kernel built with ``flags`` (-Werror)."""
    ag = optimize(graph)
    k = lower_group(annotations(ag).groups[0], ag, "c -keys=arm_cpu,cpu -mcpu=cortex-m55",
                    name="k")
    return disassemble(k.source, flags, tmp_path)


@ARM_GCC
@pytest.mark.parametrize("graph", [
    pytest.param(lambda: _graph("conv2d", {"cin": 16, "cout": 7, "hw": (4, 21)}, 5), id="conv"),
    pytest.param(lambda: _graph("conv2d", {"cin": 13, "k": (1, 1), "padding": (0, 0, 0, 0)}, 5),
                 id="conv-tail"),
    pytest.param(lambda: _graph("dense", {"depth": 37, "units": 9}, 5), id="dense"),
])
@pytest.mark.one_fast
def test_cortex_m55_builds_run_vmladava_and_cortex_m4_builds_do_not(graph, tmp_path):
    g = graph()
    m55 = _disassembly(g, M55, tmp_path)
    assert VMLADAVA.search(m55) and "smlad" not in m55
    m4 = _disassembly(g, M4, tmp_path)
    assert "smlad" in m4 and not VMLADAVA.search(m4)


@ARM_GCC
@pytest.mark.slow
def test_cortex_m55_conv_steps_alternate_vector_loads_and_vmladavas(tmp_path):
    # kernel rows of 48 bytes: the 2x2 block's pipelined asm step, each of
    # its four post-increment loads followed by a VMLADAVA (the units overlap)
    dis = _disassembly(_graph("conv2d", {"cin": 16, "cout": 7, "hw": (4, 21)}, 5), M55,
                       tmp_path)
    kinds = ["load" if re.search(r"\bvldrb\.[us]8\s+q\d, \[\w+\], #16", line)
             else "mac" if VMLADAVA.search(line) else "other" for line in dis.splitlines()]
    assert any(kinds[i:i + 8] == ["load", "mac"] * 4 for i in range(len(kinds)))


@ARM_GCC
def test_cortex_m55_depthwise_widens_to_int32_lanes(tmp_path):
    g = _graph("depthwise_conv2d", {"cin": 11}, 5)  # one step of 8, a tail of 3
    m55 = _disassembly(g, M55, tmp_path)
    assert "vldrb.s32" in m55 and "vmul.i32" in m55 and "vctp.32" in m55
    assert "smlabb" not in m55


@pytest.mark.parametrize("op, variant", [
    ("conv2d", {"cin": 8, "activation": "relu"}),
    ("depthwise_conv2d", {"cin": 8, "activation": "relu6"}),
])
def test_arm_targets_call_the_epilogue_row_helper_and_others_do_not(op, variant):
    # Helium vectorizes it, the DSP extension does two outputs per step; a
    # depthwise row's epilogue is fused with its accumulators (depthwise_conv2d.fuse),
    # and so is a convolution's on a core with the DSP extension and without
    # Helium (an M55 keeps the two calls even with the arm_cpu keys)
    ag = optimize(_graph(op, variant, 5))
    group = annotations(ag).groups[0]
    fused = "aot_conv_requant_" if op == "conv2d" else "aot_depthwise_requant_s8("
    for arm in (BOARD, "qemu/mps2-an386", "c -keys=arm_cpu,cpu -mcpu=cortex-m55"):
        helper = ("aot_requant_row_s8(" if op == "conv2d" and arm != "qemu/mps2-an386"
                  else fused)
        assert helper in lower_group(group, ag, arm, name="k").source
    for other in ("c", "c -keys=riscv,cpu -mcpu=generic-rv32"):
        source = lower_group(group, ag, other, name="k").source
        assert "aot_requant_row_s8(" not in source and fused not in source


def test_an_epilogue_of_another_form_stays_scalar():
    # a fused residual add changes the expression: the plain pattern must not
    # match, and on arm_cpu (the M4's schedule is unchanged) nothing else does
    ag = optimize(_graph("conv2d", {"cin": 13, "k": (1, 1), "padding": (0, 0, 0, 0),
                                    "residual": True}, 5))
    for target in (BOARD, "qemu/mps2-an386"):
        k = lower_group(annotations(ag).groups[0], ag, target, name="k")
        assert "aot_requant_row_s8(" not in k.source and "aot_conv_s8(" in k.source
        assert ("aot_requant_add_row_s8(" in k.source) == (target == BOARD)


@pytest.mark.parametrize("variant", RESIDUAL_VARIANTS, ids=lambda v: str(v))
@pytest.mark.one_fast
def test_a_fused_residual_epilogue_is_one_row_call_on_arm_mve(variant):
    g = _graph("conv2d", {**variant, "residual": True}, 5)
    ag = optimize(g)
    k = lower_group(annotations(ag).groups[0], ag, BOARD, name="k")
    assert k.source.count("aot_requant_add_row_s8(") >= 1 and "aot_mbqm(" not in k.source
    # the portable loop of the same call (the host has no Helium) against
    # the reference
    check_graph(g, seeded_inputs(g, 31), cross=False, target=MVE_TARGET)


def test_resnet8s_residual_blocks_take_the_row_call_on_arm_mve():
    # ResNet-8's adds have operands whose rescale is affine (the scalar
    # cores' cheaper form); on Helium each block must still end in the vector
    # row call, not a scalar epilogue
    compiled = compile_model(MODELS_DIR / "mlperf_ic_resnet8.tflite", BOARD,
                             measure_code=False, patches="off")
    rows = [k.name for k in compiled.kernels if "aot_requant_add_row_s8(" in k.source]
    assert len(rows) == 3, rows


def test_a_residual_add_of_another_form_stays_scalar():
    # a broadcast residual (one value per channel) is not read at the
    # output's indices: no row call
    ag = optimize(_graph("conv2d", {"cin": 8, "residual": "channel"}, 5))
    k = lower_group(annotations(ag).groups[0], ag, BOARD, name="k")
    assert "aot_requant_add_row_s8(" not in k.source and "aot_mbqm(" in k.source


@ARM_GCC
def test_lengths_off_the_vector_width_use_a_tail_predicate(tmp_path):
    dis = _disassembly(_graph("dense", {"depth": 37, "units": 9}, 5), M55, tmp_path)
    assert "vctp.8" in dis


@pytest.mark.slow
@ARM_GCC
@QEMU
@pytest.mark.parametrize("op, variant", MVE_CASES, ids=lambda v: str(v))
def test_arm_cpu_cases_are_bit_exact_on_an_emulated_cortex_m55(op, variant, tmp_path):
    g = _graph(op, variant, 25)
    inputs = [np.stack([a, b]) for a, b in zip(seeded_inputs(g, 25), seeded_inputs(g, 26))]
    compiled = compile_model(g, BOARD, measure_code=False)
    run = run_on_board(compiled, inputs, workdir=tmp_path)
    checks = compare(g, run.outputs, reference_outputs(g, inputs))
    assert all(c.exact for c in checks)


@pytest.mark.slow
@ARM_GCC
@QEMU
@pytest.mark.parametrize("model", ["mlperf_kws_dscnn", "mlperf_vww_mobilenetv1_025",
                                   "mlperf_ic_resnet8", "mlperf_ad_fc_autoencoder",
                                   "tflm_micro_speech"])
def test_models_are_bit_exact_on_an_emulated_cortex_m55(model, tmp_path):
    path = MODELS_DIR / f"{model}.tflite"
    compiled = compile_model(path, BOARD, measure_code=False)
    g = compiled.graph
    inputs = [np.stack([a, b]) for a, b in zip(seeded_inputs(g, 27), seeded_inputs(g, 28))]
    run = run_on_board(compiled, inputs, workdir=tmp_path)
    assert all(c.exact for c in compare(g, run.outputs, reference_outputs(g, inputs)))
