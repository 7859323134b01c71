"""The one C compiler driver (aot.codegen.cc): argv, failures, cache, sizes."""

from __future__ import annotations

import subprocess

import pytest

from aot.codegen import cc as cc_module
from aot.codegen.cc import CCompiler
from aot.errors import AotWarning, BuildError
from aot.target import load_board


def test_a_board_toolchain_gives_its_cross_compiler_and_cpu_flags():
    board = load_board("qemu/mps2-an386")
    c = CCompiler.for_toolchain(board.toolchain)
    assert c.cc == "arm-none-eabi-gcc"
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


def _sources(tmp_path):
    a, b = tmp_path / "a.c", tmp_path / "b.c"
    a.write_text("int fa(int x) { return x * 3 + 1; }\n")
    b.write_text("int fb(int x) { return x ^ 7; }\n")
    return [a, b]


def _counting(monkeypatch):
    """Count the compiler runs (the compiles text_bytes does not take from a store)."""
    runs = []
    real = cc_module.subprocess.run

    def run(argv, **kwargs):
        if "-c" in argv:
            runs.append(argv)
        return real(argv, **kwargs)

    monkeypatch.setattr(cc_module.subprocess, "run", run)
    return runs


def test_elf_text_bytes_is_what_size_lists_under_text(tmp_path):
    src = tmp_path / "a.c"
    src.write_text("static int g(int x) { return x + 1; }\nint f(int x) { return g(x) * 5; }\n"
                   "int h(int x) { return x ? f(x) : 0; }\n")
    obj = tmp_path / "a.o"
    subprocess.run(["gcc", "-O0", "-ffunction-sections", "-c", str(src), "-o", str(obj)],
                   check=True)
    listed = subprocess.run(["size", "-A", str(obj)], capture_output=True, text=True,
                            check=True).stdout
    expected = sum(int(line.split()[1]) for line in listed.splitlines()
                   if line.startswith(".text"))
    assert expected > 0 and cc_module.elf_text_bytes(obj.read_bytes()) == expected


@pytest.mark.parametrize("data", [b"", b"not an object", b"\x7fELF\x01\x01\x01" + b"\0" * 9,
                                  b"\x7fELF\x02\x01\x01" + b"\0" * 80])
def test_elf_text_bytes_refuses_what_is_not_an_object(data):
    with pytest.raises(ValueError):
        cc_module.elf_text_bytes(data)


def test_parallel_text_bytes_equals_the_sum_of_one_by_one(tmp_path):
    host = CCompiler.host()
    a, b = _sources(tmp_path)
    assert host.text_bytes([a, b], jobs=2) == host.text_bytes([a], jobs=1) + \
        host.text_bytes([b], jobs=1)


def test_stored_objects_are_reused_only_under_the_same_key(tmp_path, monkeypatch):
    host, store = CCompiler.host(), cc_module.ObjectStore(tmp_path / "cache")
    sources = _sources(tmp_path)
    runs = _counting(monkeypatch)
    size = host.text_bytes(sources, store=store)
    assert len(runs) == 2 and len(list((tmp_path / "cache" / "size").glob("*.o"))) == 2
    assert host.text_bytes(sources, store=store) == size and len(runs) == 2
    # Other flags, another header digest, another compiler: compiled again.
    host.text_bytes(sources, ["-DX=1"], store=store)
    assert len(runs) == 4
    host.text_bytes(sources, headers_digest="other", store=store)
    assert len(runs) == 6
    monkeypatch.setattr(cc_module, "compiler_identity", lambda cc: "gcc 99.1")
    host.text_bytes(sources, store=store)
    assert len(runs) == 8
    # Another source under the same name.
    monkeypatch.undo()
    runs = _counting(monkeypatch)
    sources[0].write_text("int fa(int x) { return x * x * x + 3 * x + 1; }\n")
    assert host.text_bytes(sources, store=store) != size and len(runs) == 1


def test_a_damaged_object_is_compiled_again_with_a_note(tmp_path, monkeypatch):
    host, store = CCompiler.host(), cc_module.ObjectStore(tmp_path / "cache")
    sources = _sources(tmp_path)
    size = host.text_bytes(sources, store=store)
    for obj in (tmp_path / "cache" / "size").glob("*.o"):
        obj.write_bytes(obj.read_bytes()[:40])
    runs = _counting(monkeypatch)
    store = cc_module.ObjectStore(tmp_path / "cache")
    with pytest.warns(AotWarning, match=r"cached object .* is damaged .*compiling it again"):
        assert host.text_bytes(sources, store=store) == size
    assert len(runs) == 2
    assert host.text_bytes(sources, store=store) == size and len(runs) == 2  # repaired


def test_an_unwritable_store_is_bypassed_with_one_note(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would go")
    host = CCompiler.host()
    sources = _sources(tmp_path)
    note = r"object cache .* cannot be used \(Not a directory\): measuring the code size"
    with pytest.warns(AotWarning, match=note) as notes:
        size = host.text_bytes(sources, store=cc_module.ObjectStore(blocker))
    assert size == host.text_bytes(sources) and len(notes) == 1


def test_the_compiler_identity_names_its_version_and_follows_the_executable(tmp_path):
    fake = tmp_path / "xcc"
    fake.write_text("#!/bin/sh\necho 'xcc (aot test) 1.0'\n")
    fake.chmod(0o755)
    first = cc_module.compiler_identity(str(fake))
    assert str(fake) in first and "xcc (aot test) 1.0" in first
    fake.write_text("#!/bin/sh\necho 'xcc (aot test) 2.0'\n")
    assert "2.0" in cc_module.compiler_identity(str(fake))
