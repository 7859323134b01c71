"""The generic kernels on Armv6-M (Cortex-M0/M0+): what that core lacks, they never use.

Armv6-M has no DSP extension, no divide instruction and no unaligned word
loads.  The kernels of every shared model that fits a micro:bit are compiled
for ``-mcpu=cortex-m0`` and ``-mcpu=cortex-m0plus`` (the qemu/microbit and
raspberrypi/pico targets) and checked from the outside: no SDIV/UDIV or DSP
instruction in the objects (division goes through libgcc's __aeabi_* calls),
no cast that raises a pointer's alignment in the kernels (gcc's
``-Wcast-align=strict``), and the entry code views the workspace only at
offsets aligned for the type it casts to.  QEMU does not trap unaligned
accesses on the M0, so running the models (tests/firmware/test_closest_silicon.py)
cannot show this part.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from support.models import MODELS_DIR

from aot.compile import compile_model

M0 = "c -keys=arm_cpu,cpu -mcpu=cortex-m0 -mfloat-abi=soft"
#: Both Armv6-M cores: the micro:bit's M0 and the Pico's M0+.
CPUS = ["cortex-m0", "cortex-m0plus"]
FLAGS = ["-mthumb", "-mfloat-abi=soft", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror"]
MODELS = ["tflm_hello_world_int8.tflite", "tflm_micro_speech.tflite",
          "tflm_mnist_lstm_int8.tflite", "tflm_keyword_scrambled_int16.tflite",
          "onnx_mnist8_int8_qdq.onnx"]
SIZES = {"int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4,
         "float": 4, "int64_t": 8}

pytestmark = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                                reason="needs arm-none-eabi-gcc")


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.one_fast
def test_m0_kernels_need_nothing_armv6m_lacks(model, cpu, tmp_path):
    target = M0.replace("cortex-m0", cpu)
    root = compile_model(MODELS_DIR / model, target, name="m", measure_code=False).write(tmp_path)
    disassembly = []
    sources = [p for p in sorted((root / "codegen").glob("*.c")) if p.name != "m_rpc.c"]
    assert any("_kernels" in p.name for p in sources)
    for src in sources:
        obj = tmp_path / (src.stem + ".o")
        # The entry (m.c) views the workspace at planned offsets: the next test.
        strict = ["-Wcast-align=strict"] if "_kernels" in src.name else []
        subprocess.run(["arm-none-eabi-gcc", f"-mcpu={cpu}", *FLAGS, *strict,
                        "-I", str(root / "include"),
                        "-I", str(root / "codegen"), "-c", str(src), "-o", str(obj)],
                       check=True, capture_output=True, text=True)
        disassembly.append(subprocess.run(["arm-none-eabi-objdump", "-d", str(obj)], check=True,
                                          capture_output=True, text=True).stdout)
    text = "\n".join(disassembly)
    mnemonics = set(re.findall(r"^\s+[0-9a-f]+:\s+(?:[0-9a-f]{4} ?)+\s+([a-z0-9.]+)", text,
                               re.MULTILINE))
    assert mnemonics, "no code disassembled"
    assert not mnemonics & {"sdiv", "udiv", "smlad", "sxtb16", "ssat", "usat", "ldrd", "strd"}
    assert not any(m.startswith("it") for m in mnemonics)  # no Thumb-2 IT blocks either


@pytest.mark.parametrize("model", MODELS)
def test_m0_entry_views_the_workspace_at_aligned_offsets(model, tmp_path):
    root = compile_model(MODELS_DIR / model, M0, name="m", measure_code=False).write(tmp_path)
    casts = re.findall(r"\((?:const )?(\w+) \*\)\(ws \+ (\d+)\)",
                       (root / "codegen" / "m.c").read_text())
    for ctype, offset in casts:
        assert int(offset) % SIZES[ctype] == 0, (ctype, offset)
