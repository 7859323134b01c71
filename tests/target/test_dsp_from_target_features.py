"""DSP kernels follow the target's features, never the board's name.

The same model compiled for a Cortex-M33 (Armv8-M mainline, which has the DSP
extension unless ``+nodsp`` removes it) and built with the flags of each
target: the objects use SMLAD/SXTB16 exactly when the target has the DSP
extension.  The C the compiler writes leaves the choice to the C
preprocessor (``__ARM_FEATURE_DSP``, aot_kernel_target.h), which gcc defines
from the same ``-mcpu`` the target names.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from support.models import MODELS_DIR

from aot.compile import compile_model
from aot.target import Target, load_board

M33 = "c -keys=arm_cpu,cpu -mcpu=cortex-m33{} -mfloat-abi=hard -mfpu=fpv5-sp-d16"
MODEL = MODELS_DIR / "tflm_micro_speech.tflite"  # a depthwise convolution and a dense layer
DSP = ("smlad", "sxtb16")


def gcc_flags(target: Target) -> list[str]:
    """The gcc flags the target string itself names (-mcpu with its modifiers)."""
    a = target.attrs
    return [f"-mcpu={a['mcpu']}", "-mthumb", f"-mfloat-abi={a['mfloat-abi']}",
            f"-mfpu={a['mfpu']}"]


def kernel_disassembly(target_string: str, tmp_path) -> str:
    compiled = compile_model(MODEL, target_string, name="m", measure_code=False)
    root = compiled.write(tmp_path / "artifact")
    sources = [p for p in sorted((root / "codegen").glob("*.c")) if not p.name.endswith("_rpc.c")]
    text = []
    for src in sources:
        obj = tmp_path / (src.stem + ".o")
        subprocess.run(["arm-none-eabi-gcc", *gcc_flags(Target(target_string)), "-std=c99",
                        "-O2", "-I", str(root / "include"), "-I", str(root / "codegen"),
                        "-c", str(src), "-o", str(obj)], check=True)
        text.append(subprocess.run(["arm-none-eabi-objdump", "-d", str(obj)], check=True,
                                   capture_output=True, text=True).stdout)
    return "\n".join(text)


def test_nodsp_is_a_feature_of_the_target():
    assert Target(M33.format("")).has_dsp and not Target(M33.format("+nodsp")).has_dsp
    assert Target(M33.format("+nodsp")).isa == Target(M33.format("")).isa == "thumbv8m.main"
    # The board's DSP comes from its target string, the same parse.
    assert load_board("qemu/mps2-an505").target.has_dsp


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="needs arm-none-eabi-gcc")
@pytest.mark.slow
def test_m33_kernels_use_dsp_instructions_only_with_the_dsp_feature(tmp_path):
    with_dsp = kernel_disassembly(M33.format(""), tmp_path / "dsp")
    without = kernel_disassembly(M33.format("+nodsp"), tmp_path / "nodsp")
    assert all(op in with_dsp for op in DSP)
    assert not any(op in without for op in DSP)
    # Both really hold the kernels: the multiply-accumulates are there, as MLA or MUL.
    assert "mla" in without or "mul" in without
