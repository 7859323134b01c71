"""Builds with the board's toolchain: make (with the object cache), CMake, too-big firmware."""

from __future__ import annotations

import json

import subprocess

import pytest

from aot.firmware import BuildError, build_project, create_project
from aot.firmware.project import load_project
from aot.target import load_board
from aot.target.tags import load_board_file

RUNTIME_SOURCES = {"runtime/src/frame.c", "runtime/src/model.c", "runtime/src/rpc_server.c",
                   "runtime/src/rpc_loader.c", "runtime/src/rpc_main.c",
                   "runtime/ports/cortex-m/startup.c", "runtime/ports/cortex-m/syscalls.c",
                   "runtime/ports/cortex-m/icount.c",
                   "runtime/ports/mps2/port.c"}


@pytest.mark.slow
def test_make_build_reports_sizes_by_part(hello_artifact, tmp_path):
    project = create_project(hello_artifact, "qemu/mps2-an386", tmp_path / "p")
    result = build_project(project, jobs=2)
    assert result.elf.is_file() and project.map_file.is_file()
    assert RUNTIME_SOURCES <= set(result.compiled)
    assert "model/codegen/hello_rpc.c" in result.compiled
    s = result.sizes
    sizes = json.loads((hello_artifact / "metadata.json").read_text())["sizes"]
    # the linked constants are the arrays aot compile reports, less what GCC folds into
    # the code: hello's last dense layer has a one-element bias (4 bytes), used as an
    # immediate
    assert s.constants == sizes["constants"] - 4 > 0
    assert s.model_code > 0 and s.runtime_flash > s.model_code
    planned = sizes["workspace"]
    assert s.workspace == planned > 0 and s.io == 2 and s.stack == 0x2000
    size = subprocess.run(["arm-none-eabi-size", "-A", str(result.elf)], capture_output=True,
                          text=True, check=True).stdout
    sections = {line.split()[0]: int(line.split()[1]) for line in size.splitlines()
                if line.startswith(".")}
    flash = sum(sections.get(n, 0) for n in (".isr_vector", ".text", ".rodata", ".data",
                                             ".ARM.exidx"))
    assert s.flash == flash
    assert s.ram == sections[".data"] + sections[".bss"] + sections[".stack"]


@pytest.mark.slow
def test_second_project_reuses_cached_runtime_objects(hello_artifact, tmp_path):
    first = build_project(create_project(hello_artifact, "qemu/mps2-an386", tmp_path / "a"),
                          cache_dir=tmp_path / "cache")
    assert RUNTIME_SOURCES <= set(first.compiled) and first.restored == []
    second = build_project(create_project(hello_artifact, "qemu/mps2-an386", tmp_path / "b"),
                           cache_dir=tmp_path / "cache")
    assert not RUNTIME_SOURCES & set(second.compiled)
    assert len(second.restored) == len(RUNTIME_SOURCES)
    assert second.elf.read_bytes() == first.elf.read_bytes()


@pytest.mark.slow
def test_other_flags_miss_the_cache(hello_artifact, tmp_path):
    build_project(create_project(hello_artifact, "qemu/mps2-an386", tmp_path / "a"),
                  cache_dir=tmp_path / "cache")
    project = create_project(hello_artifact, "qemu/mps2-an386", tmp_path / "b")
    project.data["opt_flags"] = ["-Os"]
    makefile = project.path / "Makefile"
    makefile.write_text(makefile.read_text().replace("AOT_OPT_FLAGS := -O2",
                                                     "AOT_OPT_FLAGS := -Os"))
    result = build_project(project, cache_dir=tmp_path / "cache")
    assert result.restored == [] and RUNTIME_SOURCES <= set(result.compiled)


@pytest.mark.slow
def test_cmake_builds_the_same_project(hello_artifact, tmp_path):
    project = create_project(hello_artifact, "qemu/mps2-an386", tmp_path / "p")
    build = tmp_path / "cmake-build"
    subprocess.run(["cmake", "-S", str(project.path), "-B", str(build)], check=True,
                   capture_output=True)
    subprocess.run(["cmake", "--build", str(build), "-j2"], check=True, capture_output=True)
    assert (build / "firmware.elf").is_file()


def _small_board(tmp_path, ram: int):
    """qemu/mps2-an386 with only ``ram`` bytes of RAM, all but 256 of them reserved for
    the stack (a record file of the same tag)."""
    text = load_board("qemu/mps2-an386").path.read_text()
    text = text.replace("ram = { origin = 0x2000_0000, length = 0x0040_0000, speed = 1 }",
                        f"ram = {{ origin = 0x2000_0000, length = {ram} }}\n"
                        f"stack_bytes = {ram - 256}")
    path = tmp_path / "mps2-an386.toml"
    path.write_text(text)
    return load_board_file(path)


@pytest.mark.slow
def test_firmware_too_big_for_the_board_names_the_sizes(hello_artifact, tmp_path):
    project = create_project(hello_artifact, _small_board(tmp_path, 4096), tmp_path / "p")
    with pytest.raises(BuildError, match=r"does not fit qemu/mps2-an386: RAM overflows by "
                                         r"\d+ bytes \(flash 4194304 bytes, ram 4096 bytes"):
        build_project(project)


def test_missing_toolchain_is_a_clear_error(hello_artifact, tmp_path):
    project = create_project(hello_artifact, "qemu/mps2-an386", tmp_path / "p")
    project.data["cc"] = "no-such-gcc"
    with pytest.raises(BuildError, match="no-such-gcc is not installed"):
        build_project(project)
    assert load_project(project.path).data["cc"] == "arm-none-eabi-gcc"
