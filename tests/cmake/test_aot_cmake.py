"""aot's CMake package (aot/cmake): a firmware project of its own, outside this
tree, built with find_package(aot) and aot_add_model by CMake with Ninja and
with Make, cross-compiled for qemu/mps2-an386, run on QEMU and compared with
TFLM; then rebuilt after nothing, a touched model, new weights and new options.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from aot.commands.config import cmake_dir, toolchain_file
from aot.target import load_board
from aot.frontend import load_model
from aot.reference import run as reference_run
from support.net_firmware import (PROJECT as FIXTURE, ROOT, aot_program, compiled_objects,
                                  net_model, run_on_qemu)

GENERATORS = {"ninja": "Ninja", "make": "Unix Makefiles"}

needs_cmake = pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")


def configure(build: Path, generator: str, model: Path, aot: Path, *extra: str,
              source: Path = FIXTURE) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["cmake", "-S", str(source), "-B", str(build), "-G", generator,
         f"-Daot_DIR={cmake_dir()}", f"-DAOT_EXECUTABLE={aot}",
         f"-DCMAKE_TOOLCHAIN_FILE={toolchain_file(load_board('qemu/mps2-an386'))}",
         f"-DNET_MODEL={model}", *extra],
        capture_output=True, text=True)


def build(build_dir: Path) -> str:
    """Build verbosely enough to see what was compiled; the output of the build."""
    done = subprocess.run(["cmake", "--build", str(build_dir), "--", "-v"] if
                          (build_dir / "build.ninja").exists() else
                          ["cmake", "--build", str(build_dir), "--", "VERBOSE=1"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@needs_cmake
@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.parametrize("generator", sorted(GENERATORS))
def test_firmware_project_builds_runs_bit_exact_and_rebuilds_only_what_changed(
        generator, tmp_path, tflm):  # noqa: F811
    if generator == "ninja" and shutil.which("ninja") is None:
        pytest.skip("needs ninja")
    aot = aot_program(tmp_path)
    model = tmp_path / "net.tflite"
    first = net_model(seed=1)
    model.write_bytes(first)
    out = tmp_path / "build"
    done = configure(out, GENERATORS[generator], model, aot)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "-- aot: compiled" in done.stdout
    objects = compiled_objects(build(out))
    assert {"main.c", "net.c", "startup.c", "port.c"} <= objects
    elf = out / "firmware.elf"
    x = np.random.default_rng(7).integers(-128, 128, (1, 8, 8, 3)).astype(np.int8)
    np.testing.assert_array_equal(run_on_qemu(elf, x), tflm.run(first, [[x]])[0][0].ravel())

    # Nothing changed: nothing is compiled or linked.
    assert compiled_objects(build(out)) == set()
    # A touched model re-runs the configure step, whose stamp sees the same bytes.
    os.utime(model)  # now (a time in the future would keep Ninja regenerating)
    again = build(out)
    assert compiled_objects(again) == set()
    # New weights: only the kernels whose constants changed are compiled again.
    second = net_model(seed=2)
    model.write_bytes(second)
    rebuilt = compiled_objects(build(out))
    assert rebuilt and all(re.fullmatch(r"net_kernels_\d+\.c", f) for f in rebuilt), rebuilt
    np.testing.assert_array_equal(run_on_qemu(elf, x), tflm.run(second, [[x]])[0][0].ravel())
    # New options: reconfiguring with them compiles the model again; main.c is
    # compiled again exactly when the header it includes changed.
    header = out / "aot" / "net" / "include" / "net.h"
    before = header.read_bytes()
    done = configure(out, GENERATORS[generator], model, aot, "-DNET_OPTIONS=--no-inplace")
    assert done.returncode == 0 and "-- aot: compiled" in done.stdout, done.stderr
    rebuilt = compiled_objects(build(out))
    assert rebuilt and ("main.c" in rebuilt) == (header.read_bytes() != before)
    np.testing.assert_array_equal(run_on_qemu(elf, x), tflm.run(second, [[x]])[0][0].ravel())


def _project(tmp_path: Path, call: str) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "main.c").write_text("int main(void) { return 0; }\n")
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.19)\nproject(p C)\nfind_package(aot REQUIRED)\n"
        f"add_executable(app main.c)\n{call}\n")
    return src


@needs_cmake
@pytest.mark.parametrize("call, message", [
    ("aot_add_model(app BOARD qemu/mps2-an386)", "aot_add_model(app): MODEL <file> is missing"),
    ("aot_add_model(app MODEL missing.tflite BOARD qemu/mps2-an386)",
     "aot_add_model(app): the model file {src}/missing.tflite does not exist"),
    ("aot_add_model(app MODEL {model})", "aot_add_model(app): BOARD <tag> is missing"),
    ("aot_add_model(app MODEL {model} BOARD host/native TARGET c)",
     "aot_add_model(app): give BOARD or TARGET, not both"),
    ("aot_add_model(nothing MODEL {model} BOARD qemu/mps2-an386)",
     "aot_add_model(nothing): 'nothing' is not a target"),
    ("aot_add_model(app MODEL {model} BOARD qemu/mps2-an386 FAST)",
     "aot_add_model(app): unexpected arguments 'FAST'"),
    ("aot_add_model(app MODEL {model} BOARD acme/nothing)",
     "aot_add_model(app): aot compile: error: unknown board tag 'acme/nothing'"),
    ("aot_add_model(app MODEL {big} BOARD qemu/microbit)",
     "aot_add_model(app): aot compile: error: model 'mlperf_ic_resnet8' needs 32768 bytes of "
     "RAM (workspace 32768, state 0, inputs/outputs 0) but qemu/microbit has 12288"),
    ("aot_add_model(app MODEL main.c BOARD qemu/mps2-an386)",
     "aot_add_model(app): aot compile: error: {src}/main.c: unknown model format"),
    ("aot_add_model(app MODEL {model} BOARD qemu/mps2-an386)",
     "aot_add_model(app): qemu/mps2-an386 needs its cross compiler (arm-none-eabi-gcc)"),
])
@pytest.mark.one_fast
def test_bad_calls_fail_at_configure_time_with_the_compilers_message(call, message, tmp_path):
    model = tmp_path / "net.tflite"
    model.write_bytes(net_model(seed=1))
    big = ROOT.parent / "shared" / "models" / "mlperf_ic_resnet8.tflite"
    src = _project(tmp_path, call.format(model=model, big=big))
    done = subprocess.run(["cmake", "-S", str(src), "-B", str(tmp_path / "b"),
                           f"-Daot_DIR={cmake_dir()}", f"-DAOT_EXECUTABLE={aot_program(tmp_path)}"],
                          capture_output=True, text=True)
    assert done.returncode != 0
    text = re.sub(r"\s*\n\s*", " ", done.stderr)
    assert message.format(src=src) in text, done.stderr
    assert text.count("CMake Error") == 1, done.stderr


@needs_cmake
def test_another_aot_on_the_path_is_refused(tmp_path):
    fake = tmp_path / "aot"
    fake.write_text("#!/bin/sh\necho aot 9.9\n")
    fake.chmod(0o755)
    src = _project(tmp_path, "aot_add_model(app MODEL main.c BOARD host/native)")
    done = subprocess.run(["cmake", "-S", str(src), "-B", str(tmp_path / "b"),
                           f"-Daot_DIR={cmake_dir()}", f"-DAOT_EXECUTABLE={fake}"],
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert f"{fake} is 'aot 9.9', but this CMake package" in re.sub(r"\s*\n\s*", " ",
                                                                    done.stderr)


@needs_cmake
@pytest.mark.parametrize("request_version, found", [("0.1", True), ("0.2", False),
                                                    ("1.0", False)])
def test_find_package_checks_the_version(request_version, found, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(
        f"cmake_minimum_required(VERSION 3.19)\nproject(p NONE)\n"
        f"find_package(aot {request_version})\nmessage(STATUS \"found=${{aot_FOUND}} "
        "version=${aot_VERSION}\")\n")
    done = subprocess.run(["cmake", "-S", str(src), "-B", str(tmp_path / "b"),
                           f"-Daot_DIR={cmake_dir()}"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"found={'1' if found else '0'}" in done.stdout


@needs_cmake
@pytest.mark.slow
def test_included_from_a_subdirectory_and_called_from_above_with_a_target_string(tmp_path):
    """As a Zephyr module does: aot.cmake included in a subdirectory, the
    application calling aot_add_model from its own; TARGET instead of BOARD,
    with the RPC descriptor."""
    src = tmp_path / "app"
    (src / "module").mkdir(parents=True)
    (src / "module" / "CMakeLists.txt").write_text(f'include("{cmake_dir()}/aot.cmake")\n')
    model = ROOT.parent / "shared" / "models" / "tflm_hello_world_int8.tflite"
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.19)\nproject(app C)\nadd_subdirectory(module)\n"
        "add_executable(app main.c)\n"
        f'aot_add_model(app MODEL {model} TARGET "c" NAME hello RPC)\n')
    (src / "main.c").write_text(
        '#include <stdio.h>\n#include "hello.h"\n#include "aot/model.h"\n'
        "extern const aot_model_t aot_rpc_model;\n"
        "int main(void) {\n  int8_t x = 17, y;\n"
        "  struct hello_inputs in = {&x};\n  struct hello_outputs out = {&y};\n"
        '  if (hello_run(&in, &out) != 0) return 1;\n  printf("%d\\n", y);\n'
        "  return aot_rpc_model.num_tensors > 0 ? 0 : 2;\n}\n")
    build = tmp_path / "build"
    for argv in (["cmake", "-S", str(src), "-B", str(build),
                  f"-DAOT_EXECUTABLE={aot_program(tmp_path)}"],
                 ["cmake", "--build", str(build)]):
        done = subprocess.run(argv, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    app = subprocess.run([str(build / "app")], capture_output=True, text=True)
    assert app.returncode == 0, app.stderr
    want = reference_run(load_model(model), [np.array([[17]], np.int8)])[0]
    assert int(app.stdout) == int(want.ravel()[0])


@needs_cmake
@pytest.mark.slow
@pytest.mark.qemu
def test_kernels_from_the_llvm_codegen_are_linked_as_objects(tmp_path, tflm):  # noqa: F811
    model = tmp_path / "net.tflite"
    model.write_bytes(net_model(seed=3))
    out = tmp_path / "build"
    done = configure(out, "Ninja" if shutil.which("ninja") else "Unix Makefiles", model,
                     aot_program(tmp_path), "-DNET_OPTIONS=--codegen;llvm")
    assert done.returncode == 0, done.stdout + done.stderr
    output = build(out)
    assert "net_kernels_0.o" in output and "net_kernels_0.c" not in output
    x = np.random.default_rng(5).integers(-128, 128, (1, 8, 8, 3)).astype(np.int8)
    np.testing.assert_array_equal(run_on_qemu(out / "firmware.elf", x),
                                  tflm.run(net_model(seed=3), [[x]])[0][0].ravel())


@needs_cmake
@pytest.mark.slow
def test_an_external_codegen_library_is_compiled_in_place(tmp_path):
    """aot_add_model with TARGET "c -libs=cmsis-nn": the CMSIS-NN sources the
    artifact lists are compiled from the shared tree (host compiler, portable C)."""
    from support.models import CMSIS_NN_DIR

    if not CMSIS_NN_DIR.is_dir():
        pytest.skip(f"no CMSIS-NN source tree at {CMSIS_NN_DIR}")
    src = tmp_path / "app"
    src.mkdir()
    model = ROOT.parent / "shared" / "models" / "tflm_hello_world_int8.tflite"
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.19)\nproject(app C)\n"
        f'include("{cmake_dir()}/aot.cmake")\nadd_executable(app main.c)\n'
        f'aot_add_model(app MODEL {model} TARGET "c -libs=cmsis-nn" NAME hello '
        f"OPTIONS --cmsis-nn {CMSIS_NN_DIR})\n")
    (src / "main.c").write_text(
        '#include <stdio.h>\n#include "hello.h"\n'
        "int main(void) {\n  int8_t x = 17, y;\n"
        "  struct hello_inputs in = {&x};\n  struct hello_outputs out = {&y};\n"
        '  if (hello_run(&in, &out) != 0) return 1;\n  printf("%d\\n", y);\n  return 0;\n}\n')
    build = tmp_path / "build"
    for argv in (["cmake", "-S", str(src), "-B", str(build),
                  f"-DAOT_EXECUTABLE={aot_program(tmp_path)}"],
                 ["cmake", "--build", str(build), "--", "VERBOSE=1"]):
        done = subprocess.run(argv, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    assert "arm_fully_connected_s8.c" in done.stdout
    app = subprocess.run([str(build / "app")], capture_output=True, text=True)
    assert app.returncode == 0, app.stderr
    want = reference_run(load_model(model), [np.array([[17]], np.int8)])[0]
    assert int(app.stdout) == int(want.ravel()[0])
