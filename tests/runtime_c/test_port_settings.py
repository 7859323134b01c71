"""A port's settings are written once, in ports/<port>/port.mk: Make includes
it, and runtime.cmake and aot.export.port_settings read the same file.  For
every port, CMake's and Python's readings equal Make's own evaluation."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from aot.export import RUNTIME_DIR, ExportError, port_settings, runtime_ports

needs_tools = pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("make") is None,
                                 reason="needs cmake and make")

_CMAKE = """include({rt}/runtime.cmake)
_aot_port_settings({port})
string(REPLACE ";" " " srcs "${{_aot_srcs}}")
string(REPLACE ";" " " cflags "${{_aot_cflags}}")
string(REPLACE ";" " " ldflags "${{_aot_ldflags}}")
string(REPLACE ";" " " mem "${{_aot_mem}}")
message("srcs=${{srcs}}")
message("ld=${{_aot_ld}}")
message("cflags=${{cflags}}")
message("ldflags=${{ldflags}}")
message("mem=${{mem}}")
"""

_MAKE = """AOT_RUNTIME_DIR := {rt}
include {rt}/ports/{port}/port.mk
AOT_STACK_SIZE ?= 0x2000
print:
\t@echo "srcs=$(strip $(AOT_PORT_SRCS) $(AOT_PORT_ASM_SRCS))"
\t@echo "ld=$(strip $(AOT_PORT_LDSCRIPT_IN))"
\t@echo "cflags=$(strip $(AOT_PORT_CFLAGS))"
\t@echo "ldflags=$(strip $(AOT_PORT_LDFLAGS))"
\t@echo "mem=$(strip $(AOT_FLASH_ORIGIN) $(AOT_FLASH_LENGTH) $(AOT_RAM_ORIGIN) $(AOT_RAM_LENGTH) $(AOT_STACK_SIZE))"
"""  # noqa: E501 (one make recipe line)


def _lines(text: str) -> list[tuple[str, list[str]]]:
    pairs = [line.split("=", 1) for line in text.splitlines() if "=" in line]
    return [(key.strip(), value.split()) for key, value in pairs]


@needs_tools
@pytest.mark.parametrize("port", runtime_ports())
def test_cmake_reads_each_port_as_make_does(port, tmp_path):
    script = tmp_path / "port.cmake"
    script.write_text(_CMAKE.format(rt=RUNTIME_DIR, port=port))
    cmake = subprocess.run(["cmake", "-P", str(script)], capture_output=True, text=True)
    assert cmake.returncode == 0, cmake.stderr
    makefile = tmp_path / "Makefile"
    makefile.write_text(_MAKE.format(rt=RUNTIME_DIR, port=port))
    make = subprocess.run(["make", "-s", "-f", str(makefile), "print"], capture_output=True,
                          text=True)
    assert make.returncode == 0, make.stderr
    got, want = _lines(cmake.stderr), _lines(make.stdout)
    assert len(want) == 5 and got == want


@needs_tools
def test_an_unknown_port_and_make_outside_the_subset_are_refused(tmp_path):
    script = tmp_path / "port.cmake"
    script.write_text(_CMAKE.format(rt=RUNTIME_DIR, port="nope"))
    done = subprocess.run(["cmake", "-P", str(script)], capture_output=True, text=True)
    assert done.returncode != 0
    assert "aot: unknown runtime port 'nope'; ports: esp32c3, host," in " ".join(
        done.stderr.split())
    rt = tmp_path / "rt"
    shutil.copytree(RUNTIME_DIR, rt)
    (rt / "ports" / "odd").mkdir()
    (rt / "ports" / "odd" / "port.mk").write_text("ifeq ($(X),1)\nAOT_PORT_SRCS := a.c\nendif\n")
    script.write_text(_CMAKE.format(rt=rt, port="odd"))
    done = subprocess.run(["cmake", "-P", str(script)], capture_output=True, text=True)
    assert done.returncode != 0
    assert "'ifeq ($(X),1)' is outside the part of Make that runtime.cmake reads" in " ".join(
        done.stderr.split())


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.parametrize("port", runtime_ports())
def test_python_reads_each_port_as_make_does(port, tmp_path):
    makefile = tmp_path / "Makefile"
    makefile.write_text(_MAKE.format(rt=RUNTIME_DIR, port=port))
    make = subprocess.run(["make", "-s", "-f", str(makefile), "print"], capture_output=True,
                          text=True)
    assert make.returncode == 0, make.stderr
    v = port_settings(port)
    mem = [v.get(k, "") for k in ("AOT_FLASH_ORIGIN", "AOT_FLASH_LENGTH", "AOT_RAM_ORIGIN",
                                  "AOT_RAM_LENGTH")] + [v.get("AOT_STACK_SIZE", "0x2000")]
    got = [("srcs", f"{v.get('AOT_PORT_SRCS', '')} {v.get('AOT_PORT_ASM_SRCS', '')}".split()),
           ("ld", v.get("AOT_PORT_LDSCRIPT_IN", "").split()),
           ("cflags", v.get("AOT_PORT_CFLAGS", "").split()),
           ("ldflags", v.get("AOT_PORT_LDFLAGS", "").split()),
           ("mem", " ".join(mem).split())]
    assert got == _lines(make.stdout)


def test_an_unknown_port_is_refused_naming_the_ports():
    with pytest.raises(ExportError, match=r"unknown runtime port 'z80'; ports: .*mps2"):
        port_settings("z80")
