"""Project generation: a standalone folder from an artifact and a board record."""

from __future__ import annotations

import dataclasses
import json

import pytest
from support.models import MODELS_DIR

from aot.compile import compile_model
from aot.firmware import ProjectError, create_project, load_project
from aot.firmware.project import runtime_port
from aot.target import load_board


def test_project_holds_model_runtime_port_and_build_files(hello_artifact, tmp_path):
    project = create_project(hello_artifact, "qemu/mps2-an386", tmp_path / "proj")
    root = project.path
    for rel in ("Makefile", "CMakeLists.txt", "project.json", "model/metadata.json",
                "model/include/hello.h", "model/codegen/hello_rpc.c",
                "runtime/src/rpc_main.c", "runtime/runtime.mk", "runtime/runtime.cmake",
                "runtime/ports/mps2/port.c", "runtime/ports/cortex-m/link.ld.in"):
        assert (root / rel).is_file(), rel
    makefile = (root / "Makefile").read_text()
    # The board's toolchain and memory map, spelled out for make alone.
    assert "CC := arm-none-eabi-gcc" in makefile
    assert "AOT_ARCH_FLAGS := -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16" \
        in makefile
    assert "AOT_RAM_ORIGIN := 0x20000000" in makefile
    assert "AOT_RAM_LENGTH := 0x00400000" in makefile
    assert "AOT_STACK_SIZE := 0x00002000" in makefile  # the default of every port
    assert "model/codegen/hello_rpc.c" in makefile
    assert "FLASH_ORIGIN 0x00000000" in (root / "CMakeLists.txt").read_text()
    data = json.loads((root / "project.json").read_text())
    assert data["board"] == "qemu/mps2-an386" and data["port"] == "mps2"
    assert load_project(root).name == "hello"


def test_the_boards_stack_reaches_the_linker_script(tmp_path):
    # The micro:bit keeps 4 KiB of its 16 KiB for the stack (board record), and
    # the compiler checked the model against the 12 KiB left.
    compiled = compile_model(MODELS_DIR / "tflm_hello_world_int8.tflite", "qemu/microbit",
                             measure_code=False)
    project = create_project(compiled.write(tmp_path / "a"), "qemu/microbit", tmp_path / "p")
    assert "AOT_STACK_SIZE := 0x00001000" in (project.path / "Makefile").read_text()
    meta = json.loads((tmp_path / "a" / "metadata.json").read_text())
    assert meta["build"]["board"]["memory"]["stack_size"] == "0x00001000"


def test_board_port_names_map_to_runtime_folders():
    assert runtime_port(load_board("qemu/mps3-an547")) == "mps3-an547"
    assert runtime_port(load_board("qemu/sifive-e")) == "sifive_e"
    assert runtime_port(load_board("raspberrypi/pico")) == "rp2040"
    with pytest.raises(ProjectError, match="not supported yet: the C runtime has no port"):
        runtime_port(dataclasses.replace(load_board("raspberrypi/pico"), port="rp2350"))


def test_an547_project_gets_its_port_from_the_runtime(tmp_path):
    compiled = compile_model(MODELS_DIR / "tflm_hello_world_int8.tflite", "qemu/mps3-an547",
                             measure_code=False)
    artifact = compiled.write(tmp_path / "a")
    project = create_project(artifact, "qemu/mps3-an547", tmp_path / "p")
    assert (project.path / "runtime/ports/mps3-an547/port.mk").is_file()
    assert "AOT_PORT := mps3-an547" in (project.path / "Makefile").read_text()


def test_artifact_for_another_board_is_refused(hello_artifact, tmp_path):
    with pytest.raises(ProjectError, match="compiled for qemu/mps2-an386, not qemu/sifive-e"):
        create_project(hello_artifact, "qemu/sifive-e", tmp_path / "p")


def test_refuses_to_write_over_other_files(hello_artifact, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ProjectError, match="not empty and holds no aot project"):
        create_project(hello_artifact, "qemu/mps2-an386", tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_recreating_a_project_replaces_it(hello_artifact, tmp_path):
    create_project(hello_artifact, "qemu/mps2-an386", tmp_path / "p")
    (tmp_path / "p/model/codegen/stale.c").write_text("int stale;\n")
    project = create_project(hello_artifact, "qemu/mps2-an386", tmp_path / "p")
    assert not (tmp_path / "p/model/codegen/stale.c").exists()
    assert all("stale" not in s for s in project.model_sources)


def test_missing_artifact_and_non_project(tmp_path):
    with pytest.raises(ProjectError, match="does not exist; write one with `aot compile`"):
        create_project(tmp_path / "nothing", "qemu/mps2-an386", tmp_path / "p")
    with pytest.raises(ProjectError, match="not an aot firmware project"):
        load_project(tmp_path)


def test_project_from_an_artifact_archive(tmp_path):
    compiled = compile_model(MODELS_DIR / "tflm_hello_world_int8.tflite", "qemu/mps2-an386",
                             name="hello", measure_code=False)
    archive = compiled.write(tmp_path / "hello", tar=True)
    project = create_project(archive, "qemu/mps2-an386", tmp_path / "p")
    assert (project.path / "model/codegen/hello_rpc.c").is_file()
    (tmp_path / "junk.tar").write_bytes(b"not a tar")
    with pytest.raises(ProjectError, match="neither an artifact folder nor"):
        create_project(tmp_path / "junk.tar", "qemu/mps2-an386", tmp_path / "q")
