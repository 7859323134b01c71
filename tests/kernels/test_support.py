"""The kernels' support headers (aot/kernels/include/) as C files: each
compiles on its own for every kind of core, each core gets the paths meant
for it, and the header the kernels include reaches all the others."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from aot.kernels import support_files
from aot.kernels.support import HEADER_NAME


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
    macros = subprocess.run([*cc, *STRICT, "-E", "-dM", "-I", str(d), str(d / HEADER_NAME)],
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


def test_the_kernels_header_reaches_every_support_header_but_the_stateful_ones():
    """aot_kernel_util.h reaches every header but the stateful operators' own
    (SVDF, LSTM, variables), which only their kernels include beside it, and
    which need nothing but the headers it reaches."""
    files = support_files(None)
    seen = _reached(files, HEADER_NAME)
    own = {"aot_svdf.h", "aot_lstm.h", "aot_variable.h"}
    assert set(files) - seen == own
    for name in own:
        assert _reached(files, name) - {name} <= seen
