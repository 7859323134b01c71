"""The CMake toolchain files aot ships (aot/cmake/toolchains): one per cross
compiler family of the board records, named by `aot config --toolchain-file`
and aot_toolchain_file(), and refused clearly where there is none."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from aot.cli import main
from aot.commands.config import cmake_dir, toolchain_file
from aot.target import list_boards
from support.net_firmware import aot_program

needs_cmake = pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")


def _set(text: str, var: str) -> str:
    return re.search(rf"^set\({var} (\S+)\)$", text, re.M).group(1)


def test_every_cross_board_has_a_toolchain_file_naming_its_compiler():
    shipped = set()
    for board in list_boards():
        tag = board.tag
        if board.platform == "host":
            continue
        path = toolchain_file(board)
        text = path.read_text()
        assert _set(text, "CMAKE_SYSTEM_NAME") == "Generic", path
        assert _set(text, "CMAKE_C_COMPILER") == board.toolchain.tool("gcc"), (tag, path)
        assert _set(text, "CMAKE_ASM_COMPILER") == board.toolchain.tool("gcc"), (tag, path)
        assert _set(text, "CMAKE_TRY_COMPILE_TARGET_TYPE") == "STATIC_LIBRARY", path
        shipped.add(path.name)
    # No file ships that no board uses.
    assert shipped == {p.name for p in (cmake_dir() / "toolchains").glob("*.cmake")}
    assert shipped == {"arm-none-eabi.cmake", "riscv64-unknown-elf.cmake"}


def test_aot_config_prints_a_boards_toolchain_file(capsys):
    assert main(["config", "--toolchain-file", "qemu/an386"]) == 0  # an alias
    assert Path(capsys.readouterr().out.strip()) == \
        cmake_dir() / "toolchains" / "arm-none-eabi.cmake"
    assert main(["config", "--toolchain-file", "host/native"]) == 2
    assert ("host/native builds with this machine's own C compiler: it needs no toolchain "
            "file") in capsys.readouterr().err
    assert main(["config", "--toolchain-file", "acme/nothing"]) == 2
    assert "unknown board tag 'acme/nothing'" in capsys.readouterr().err


@needs_cmake
@pytest.mark.parametrize("body, message", [
    # (before project() with CMAKE_TOOLCHAIN_FILE: tests/cmake/test_board_support.py)
    ("project(p NONE)\naot_toolchain_file(qemu/sifive-e TC)\n"
     'message(STATUS "tc=${TC}")', None),
    ("aot_toolchain_file(acme/nothing CMAKE_TOOLCHAIN_FILE)\nproject(p NONE)",
     "aot_toolchain_file(acme/nothing): aot config: error: unknown board tag 'acme/nothing'"),
    ("aot_toolchain_file(qemu/mps2-an386)\nproject(p NONE)",
     "aot_toolchain_file(qemu/mps2-an386): usage: aot_toolchain_file(<board tag> <variable>)"),
    ("project(p C)\naot_toolchain_file(qemu/mps2-an386 CMAKE_TOOLCHAIN_FILE)",
     "aot_toolchain_file(qemu/mps2-an386): called after project()"),
])
@pytest.mark.one_fast
def test_aot_toolchain_file_before_project(tmp_path, body, message):
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(
        f"cmake_minimum_required(VERSION 3.19)\nfind_package(aot REQUIRED)\n{body}\n")
    done = subprocess.run(["cmake", "-S", str(src), "-B", str(tmp_path / "b"),
                           f"-Daot_DIR={cmake_dir()}",
                           f"-DAOT_EXECUTABLE={aot_program(tmp_path)}"],
                          capture_output=True, text=True)
    text = re.sub(r"\s*\n\s*", " ", done.stderr)
    if message is None:
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"tc={cmake_dir() / 'toolchains' / 'riscv64-unknown-elf.cmake'}" in done.stdout
    else:
        assert done.returncode != 0
        assert message in text, done.stderr
