"""Cross-compile one generated kernel file and read its disassembly.

Tests use it to check which instructions a kernel really uses (SMLAD on a
Cortex-M4, VMLADAVA on a Cortex-M55) from the outside.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from aot.kernels import support_files


def disassemble(source: str, cpu_flags, directory: Path, opt=("-O2",)) -> str:
    """``objdump -d`` of ``source`` built with arm-none-eabi-gcc ``opt -std=c99
    -Wall -Wextra -Werror`` and ``cpu_flags``, beside the support headers in
    ``directory`` (created if needed).  MVE is decoded (objdump is told the
    v8.1-M architecture, which it otherwise prints as ldc/cdp); skips the
    test when the cross compiler is missing."""
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("needs arm-none-eabi-gcc (scripts/setup.sh installs it)")
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in support_files(None).items():
        (directory / name).write_text(text)
    (directory / "k.c").write_text(source)
    subprocess.run(["arm-none-eabi-gcc", *cpu_flags, "-std=c99", "-Wall", "-Wextra", "-Werror",
                    *opt, "-I", str(directory), "-c", str(directory / "k.c"),
                    "-o", str(directory / "k.o")], check=True)
    arch = ["-m", "armv8.1-m.main"] if any("cortex-m55" in f for f in cpu_flags) else []
    return subprocess.run(["arm-none-eabi-objdump", "-d", *arch, str(directory / "k.o")],
                          capture_output=True, text=True, check=True).stdout
