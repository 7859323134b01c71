"""The one C compiler driver (aot.codegen.cc): argv, failures, cache, sizes."""

from __future__ import annotations

import subprocess

import pytest

from aot.codegen import cc as cc_module
from aot.codegen.cc import CCompiler
from aot.errors import BuildError
from aot.target import load_board


def test_a_board_toolchain_gives_its_cross_compiler_cpu_flags_and_size_tool():
    board = load_board("qemu/mps2-an386")
    c = CCompiler.for_toolchain(board.toolchain)
    assert c.cc == "arm-none-eabi-gcc" and c.size == "arm-none-eabi-size"
    assert c.cpu_flags == tuple(board.toolchain.cpu_flags) and "-mcpu=cortex-m4" in c.cpu_flags


def test_the_compiler_is_run_with_cpu_flags_first_then_the_request(monkeypatch):
    calls = []

    def fake_run(argv, **kwargs):
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(cc_module.subprocess, "run", fake_run)
    CCompiler("xgcc", ("-mcpu=x",)).executable(["a.c", "b.c"], "prog", ["-O1"], what="w")
    assert calls == [["xgcc", "-mcpu=x", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O1",
                      "a.c", "b.c", "-o", "prog", "-lm"]]


def test_no_host_compiler_is_a_build_error_saying_what_to_install(monkeypatch):
    monkeypatch.setattr(cc_module.shutil, "which", lambda name: None)
    with pytest.raises(BuildError, match=r"no host C compiler: install gcc"):
        CCompiler.host()


def test_a_compile_error_names_what_was_built_and_carries_the_compilers_message(tmp_path):
    src = tmp_path / "bad.c"
    src.write_text("int f(void) { return undeclared; }\n")
    with pytest.raises(BuildError) as err:
        CCompiler.host().executable([src], tmp_path / "bad", what="the host build of m")
    assert str(err.value).startswith("the host build of m failed (gcc):")
    assert "undeclared" in str(err.value)


def test_shared_objects_are_cached_by_source_and_flags():
    source = "#include <stdint.h>\nint32_t one(void) { return 1; }\n"
    host = CCompiler.host()
    first = host.shared_object(source)
    assert host.shared_object(source) == first
    assert host.shared_object(source, ["-DX=1"]) != first


def test_text_bytes_counts_the_code_of_every_source(tmp_path):
    a, b = tmp_path / "a.c", tmp_path / "b.c"
    a.write_text("int fa(int x) { return x * 3 + 1; }\n")
    b.write_text("int fb(int x) { return x ^ 7; }\n")
    host = CCompiler.host()
    one, both = host.text_bytes([a]), host.text_bytes([a, b])
    assert 0 < one < both
