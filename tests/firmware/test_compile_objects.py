"""`aot build` after `aot compile`: the objects compiled for the code size are the
project's, so make compiles none of the model's measured files (issue 38)."""

from __future__ import annotations

import os
import time

import pytest
from support.models import MODELS_DIR

from aot.export import firmware_command, firmware_variables
from aot.compile import compile_model
from aot.errors import AotWarning
from aot.export import library_sources
from aot.firmware import build_project, create_project
from aot.firmware.build import _model_build
from aot.target import load_board

BOARD = "qemu/mps2-an386"
HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """hello compiled for the board with its code size measured into a cache:
    (artifact folder, cache folder, the measured sources as the project names them)."""
    cache = tmp_path_factory.mktemp("cache")
    model = compile_model(HELLO, BOARD, name="hello", cache_dir=cache)
    assert model.sizes.code and model.sizes.code > 0
    measured = [f"model/{p}" for p in library_sources(model.files, "hello")]
    return model.write(tmp_path_factory.mktemp("art") / "hello"), cache, measured


def _objects(project, sources):
    return {s: (project.path / "build" / "obj" / (s[:-2].replace("/", "_") + ".o")).read_bytes()
            for s in sources}


@pytest.mark.slow
def test_the_projects_make_compiles_with_the_code_sizes_command(compiled, tmp_path):
    artifact, _, measured = compiled
    project = create_project(artifact, BOARD, tmp_path / "p")
    command, sources = _model_build(project)
    assert command == firmware_command(firmware_variables(load_board(BOARD)))
    assert command == firmware_command(project.data)  # what project.json says
    assert set(measured) < set(sources)  # and the RPC descriptor
    assert not any("AOT_BUILD_ID" in f or "AOT_BOARD_TAG" in f for f in command.flags)


def test_build_after_compile_compiles_none_of_the_measured_files(compiled, tmp_path):
    artifact, cache, measured = compiled
    project = create_project(artifact, BOARD, tmp_path / "p")
    result = build_project(project, jobs=2, cache_dir=cache)
    assert not set(measured) & set(result.compiled)
    assert "model/codegen/hello_rpc.c" in result.compiled
    assert sorted(result.reused) == sorted(f"build/obj/{s[:-2].replace('/', '_')}.o"
                                           for s in measured)
    # The objects are the ones make compiles itself, byte for byte, and so is the firmware.
    fresh = create_project(artifact, BOARD, tmp_path / "fresh")
    plain = build_project(fresh, jobs=2)
    assert set(measured) <= set(plain.compiled) and plain.reused == []
    assert _objects(project, measured) == _objects(fresh, measured)
    assert result.elf.read_bytes() == plain.elf.read_bytes()
    # make sees the placed objects as up to date: nothing to compile again.
    again = build_project(project, jobs=2, cache_dir=cache)
    assert again.compiled == [] and again.reused == []


@pytest.mark.slow
def test_a_changed_flag_forces_a_recompile(compiled, tmp_path):
    artifact, cache, measured = compiled
    project = create_project(artifact, BOARD, tmp_path / "p")
    makefile = project.path / "Makefile"
    makefile.write_text(makefile.read_text().replace("AOT_OPT_FLAGS := -O2",
                                                     "AOT_OPT_FLAGS := -Os"))
    result = build_project(project, jobs=2, cache_dir=cache)
    assert result.reused == [] and set(measured) <= set(result.compiled)


@pytest.mark.slow
def test_a_changed_source_is_compiled_the_others_reused(compiled, tmp_path):
    artifact, cache, measured = compiled
    project = create_project(artifact, BOARD, tmp_path / "p")
    changed = project.path / measured[-1]
    changed.write_text(changed.read_text() + "\n/* edited */\n")
    result = build_project(project, jobs=2, cache_dir=cache)
    assert measured[-1] in result.compiled
    assert not set(measured[:-1]) & set(result.compiled)
    assert len(result.reused) == len(measured) - 1


@pytest.mark.slow
def test_make_recompiles_a_placed_object_whose_header_changed(compiled, tmp_path):
    artifact, cache, measured = compiled
    project = create_project(artifact, BOARD, tmp_path / "p")
    assert build_project(project, jobs=2, cache_dir=cache).reused
    header = project.path / "model" / "codegen" / "aot_dense.h"  # its dense kernels read it
    obj = project.path / "build" / "obj"
    readers = {s for s in measured  # the placed dependency files name the header
               if "aot_dense.h" in (obj / (s[:-2].replace("/", "_") + ".d")).read_text()}
    later = time.time() + 2
    os.utime(header, (later, later))
    result = build_project(project, jobs=2, cache_dir=cache)
    assert readers and set(measured) & set(result.compiled) == readers
    assert result.reused == []


@pytest.mark.slow
def test_a_damaged_cached_object_is_compiled_again_with_a_note(compiled, tmp_path):
    artifact, cache, measured = compiled
    damaged = tmp_path / "cache"
    (damaged / "size").mkdir(parents=True)
    for obj in (cache / "size").iterdir():
        data = obj.read_bytes()
        (damaged / "size" / obj.name).write_bytes(data[:20] if obj.suffix == ".o" else data)
    project = create_project(artifact, BOARD, tmp_path / "p")
    with pytest.warns(AotWarning, match=r"cached object .* is damaged"):
        result = build_project(project, jobs=2, cache_dir=damaged)
    assert result.reused == [] and set(measured) <= set(result.compiled)


@pytest.mark.slow
def test_an_unreadable_cache_is_bypassed_with_a_note(compiled, tmp_path):
    artifact, _, measured = compiled
    blocker = tmp_path / "cache"
    blocker.mkdir()
    (blocker / "size").write_text("not a folder")
    project = create_project(artifact, BOARD, tmp_path / "p")
    with pytest.warns(AotWarning, match=r"object cache .* cannot be used"):
        result = build_project(project, jobs=2, cache_dir=blocker)
    assert result.reused == [] and set(measured) <= set(result.compiled)


@pytest.mark.slow
def test_restored_runtime_objects_follow_their_headers(compiled, tmp_path):
    """The runtime's cached objects come back with their dependency files too."""
    artifact, _, _ = compiled
    cache = tmp_path / "cache"
    build_project(create_project(artifact, BOARD, tmp_path / "a"), jobs=2, cache_dir=cache)
    project = create_project(artifact, BOARD, tmp_path / "b")
    first = build_project(project, jobs=2, cache_dir=cache)
    assert "runtime/src/frame.c" not in first.compiled
    assert (project.path / "build" / "obj" / "runtime_src_frame.d").is_file()
    header = project.path / "runtime" / "include" / "aot" / "frame.h"
    later = time.time() + 2
    os.utime(header, (later, later))
    assert "runtime/src/frame.c" in build_project(project, jobs=2, cache_dir=cache).compiled
