"""The depthwise row in LLVM IR with the DSP intrinsics (aot.codegen.llvm_dsp).

Objects for an Armv7E-M core with DSP (M4, M7) define ``aot_depthwise_s8`` in IR (a
local function per shape); the others keep the header's C through a wrapper.  The row
is called only with the depthwise epilogue unfused (the fuse_epilogue knob off; the
library's default fuses them into aot_depthwise_requant_s8, the header's C), so these
tests compile with that knob off.  The IR cannot
run on this machine (Arm intrinsics), so its results are checked on the
emulated Cortex-M4 (slow): depthwise layers with the shapes that take each
of its paths (pairs of pixels and an odd last one, channel groups of four
and a tail, fewer than four channels, kernels over eight taps high, strides,
dilation, padding) against aot.reference, bit for bit.  The shared models
(KWS, VWW) run in tests/firmware/test_models_qemu_llvm.py.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from kernels.graphs import conv_graph  # tests/kernels/graphs.py
from kernels.kernel_checks import DepthwiseFusion
from support.models import random_inputs

from aot.compile import compile_model
from aot.firmware import run_on_board
from aot.firmware.verify import compare, reference_outputs

arm_tools = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                               reason="needs the arm-none-eabi toolchain")

VARIANTS = [
    {"cin": 8},
    {"cin": 6, "hw": (7, 7), "strides": (2, 2), "activation": "relu6"},
    {"cin": 11, "hw": (6, 5), "k": (3, 2), "dilation": (1, 2), "padding": (0, 1, 2, 1)},
    {"cin": 36, "hw": (3, 40)},
    {"cin": 2, "hw": (5, 6)},
    {"cin": 4, "hw": (12, 5), "k": (10, 3), "padding": (0, 1, 0, 1)},
    {"cin": 9, "hw": (4, 11), "k": (1, 9), "padding": (0, 4, 0, 4), "strides": (1, 2)},
]


def _depthwise(variant, seed=3):
    return conv_graph("depthwise_conv2d", seed=seed, **variant)


def _tool(name: str, *args) -> str:
    return subprocess.run([f"arm-none-eabi-{name}", *map(str, args)], capture_output=True,
                          text=True, check=True).stdout


def _symbols_and_code(obj: bytes, tmp_path) -> tuple[str, str]:
    path = tmp_path / "k.o"
    path.write_bytes(obj)
    return _tool("nm", path), _tool("objdump", "-d", path)


def _unfused(board):
    """The library with the depthwise rows and epilogues as two calls (the
    fuse_epilogue knob off): the IR row replaces the first."""
    return DepthwiseFusion("arm_mve" if board == "qemu/mps3-an547" else "arm_cpu", False)


def _depthwise_kernel_objects(board, helper="aot_depthwise_s8", library=None):
    compiled = compile_model(_depthwise({"cin": 8}), board, codegen="llvm",
                             measure_code=False,
                             kernel_library=_unfused(board) if library is None else library)
    objects = compiled.llvm.objects()
    return [objects[name] for name, text in zip(compiled.llvm.units,
                                                compiled.llvm.modules_text)
            if helper in text]


@arm_tools
def test_the_fused_row_is_the_headers_c_on_every_core(tmp_path):
    """By default (fuse_epilogue on, arm_cpu) a depthwise row and its epilogue
    are one call of the header's aot_depthwise_requant_s8, through a wrapper
    compiled by gcc; there is no IR version of it."""
    from aot import kernels
    (obj,) = _depthwise_kernel_objects("qemu/mps2-an386", "aot_depthwise_requant_s8", kernels)
    symbols, _ = _symbols_and_code(obj, tmp_path)
    assert " U aot_depthwise_requant_s8__" in symbols and "aot_depthwise_s8" not in symbols


@arm_tools
def test_a_dsp_core_runs_the_ir_row(tmp_path):
    (obj,) = _depthwise_kernel_objects("qemu/mps2-an386")
    symbols, text = _symbols_and_code(obj, tmp_path)
    assert " U aot_depthwise_s8" not in symbols  # no wrapper of the header's C
    assert " t aot_depthwise_s8.8.64.8.6.8.3.3.1.1.1" in symbols  # the IR row, for its shape
    assert "smlabb" in text and "smlatt" in text and "sxtb16" in text
    assert ", ror #8" in text  # the odd bytes: one SXTB16, as the header's inline asm


@arm_tools
@pytest.mark.parametrize("board", ["qemu/mps3-an547", "qemu/microbit", "qemu/mps2-an505"])
def test_other_cores_keep_the_headers_row(board, tmp_path):
    (obj,) = _depthwise_kernel_objects(board)
    symbols, _ = _symbols_and_code(obj, tmp_path)
    assert " U aot_depthwise_s8__" in symbols  # the wrapper of the header's C


@pytest.fixture(scope="module")
def object_cache(tmp_path_factory):
    """The runtime's objects, compiled once for these tests."""
    return tmp_path_factory.mktemp("object-cache")


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: "-".join(
    f"{k}{'x'.join(map(str, x)) if isinstance(x, tuple) else x}" for k, x in v.items()))
def test_the_ir_row_is_bit_exact_on_a_cortex_m4(variant, object_cache, tmp_path):
    graph = _depthwise(variant)
    compiled = compile_model(graph, "qemu/mps2-an386", codegen="llvm", measure_code=False,
                             kernel_library=_unfused("qemu/mps2-an386"))
    assert any("aot_depthwise_s8." in text for text in compiled.llvm.modules_text)
    sequence = random_inputs(graph, seed=5, count=3)
    inputs = [np.stack([inv[k] for inv in sequence]) for k in range(len(graph.inputs))]
    run = run_on_board(compiled, inputs, workdir=tmp_path, cache_dir=object_cache)
    checks = compare(graph, run.outputs, reference_outputs(graph, inputs))
    assert all(c.passed and c.exact for c in checks), [c.to_json() for c in checks]
