"""The kernels' support headers (aot/kernels/include/, aot/kernels/<op>/include/)
as C files: each compiles on its own for every kind of core, each core gets
the paths meant for it, and a kernel includes the shared headers and its
operators' own only."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import aot.kernels
from aot.kernels import support_files
from aot.kernels.registry import HEADERS, kernel_includes
from aot.kernels.support import COMMON_HEADERS


#: name -> (compiler, flags, the AOT_HAVE_* macros the target header must define)
CORES = {
    "host": ("gcc", [], set()),
    "cortex-m4": ("arm-none-eabi-gcc",
                  ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
                  {"AOT_HAVE_DSP"}),
    "cortex-m0plus": ("arm-none-eabi-gcc", ["-mcpu=cortex-m0plus", "-mthumb"], set()),
    "cortex-m55": ("arm-none-eabi-gcc", ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"],
                   {"AOT_HAVE_DSP", "AOT_HAVE_MVE"}),
    # a tuned kernel's file defines AOT_NO_MVE to keep the DSP helpers on Helium
    "cortex-m55-no-mve": ("arm-none-eabi-gcc",
                          ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-DAOT_NO_MVE"],
                          {"AOT_HAVE_DSP"}),
    "riscv32": ("riscv64-unknown-elf-gcc",
                ["--specs=picolibc.specs", "-march=rv32imac_zicsr", "-mabi=ilp32"], set()),
}

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-x", "c"]


def _headers_dir(tmp_path):
    for name, text in support_files(None).items():
        (tmp_path / name).write_text(text)
    return tmp_path


def _compiler(core):
    cc, flags, _ = CORES[core]
    if shutil.which(cc) is None:
        pytest.skip(f"needs {cc} for {core} (scripts/setup.sh installs it)")
    return [cc, *flags]


def _cases():
    # the Helium headers (*mve.h) are only ever included where the core has
    # MVE (<arm_mve.h> refuses other cores)
    return [(name, core) for name in sorted(support_files(None)) for core in CORES
            if not name.endswith("mve.h") or "AOT_HAVE_MVE" in CORES[core][2]]


@pytest.mark.parametrize("name,core", _cases())
def test_each_header_compiles_on_its_own(name, core, tmp_path):
    cc = _compiler(core)
    d = _headers_dir(tmp_path)
    proc = subprocess.run([*cc, *STRICT, "-fsyntax-only", "-I", str(d), str(d / name)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("core", sorted(CORES))
def test_each_core_gets_its_own_helper_paths(core, tmp_path):
    cc = _compiler(core)
    d = _headers_dir(tmp_path)
    (d / "all.c").write_text("".join(f'#include "{name}"\n' for name in sorted(support_files())
                                     if not name.endswith("mve.h")))
    macros = subprocess.run([*cc, *STRICT, "-E", "-dM", "-I", str(d), str(d / "all.c")],
                            capture_output=True, text=True, check=True).stdout
    have = set(re.findall(r"^#define (AOT_HAVE_\w+)", macros, re.M))
    assert have == CORES[core][2]


def _reached(files, start):
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += re.findall(r'^\s*#\s*include\s+"([^"]+)"', files[name], re.M)
    return seen


def test_a_kernel_includes_the_shared_headers_and_its_operators_own():
    assert kernel_includes(["dense", "add"]) == (*COMMON_HEADERS, "aot_dense.h")
    assert kernel_includes(["svdf"]) == (*COMMON_HEADERS, "aot_svdf.h")
    assert kernel_includes(["softmax"]) == COMMON_HEADERS
    assert {op for op, own in HEADERS.items() if "aot_conv2d.h" in own} == {
        "conv2d", "depthwise_conv2d"}


def test_the_shared_headers_reach_no_operators_header():
    """aot/kernels/include/ holds what every operator may use: none of it
    includes an operator's header, so a kernel reads only its operators' helpers."""
    files = support_files(None)
    shared = {f.name for f in (Path(aot.kernels.__file__).parent / "include").glob("*.h")}
    assert set(COMMON_HEADERS) <= shared
    for name in shared:
        assert _reached(files, name) <= shared, name
