"""``aot compile --project esp-idf|pico-sdk``: the artifact laid out for a vendor SDK.

Neither SDK can be downloaded here, so the layouts are checked for structure
and against the SDKs' documented rules (ESP-IDF's component CMakeLists.txt),
and built by plain CMake with stand-ins for the SDKs' own functions
(``idf_component_register``; ``pico_sdk_init`` and ``pico_stdlib`` with the
SDK's prototypes), cross-compiled with the boards' toolchains.  That proves the
files name sources that exist and compile warning-free for the board's CPU with
the record's flags; it does not prove that the real SDKs accept them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from aot import __version__
from aot.cli import main
from support.models import MODELS_DIR

MODEL = MODELS_DIR / "tflm_hello_world_int8.tflite"
needs_cmake = pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")


def _compile(tmp_path, board: str, kind: str, *extra: str) -> Path:
    out = tmp_path / kind
    assert main(["compile", str(MODEL), "--board", board, "--project", kind, "--name", "hello",
                 "-o", str(out), *extra]) == 0
    return out


def _cmake(src: Path, build: Path, *defs: str, target: str) -> subprocess.CompletedProcess:
    done = subprocess.run(["cmake", "-S", str(src), "-B", str(build), *defs],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return subprocess.run(["cmake", "--build", str(build), "--target", target, "--", "VERBOSE=1"],
                          capture_output=True, text=True)


def test_esp_idf_component_registers_every_library_source(tmp_path, capsys):
    out = _compile(tmp_path, "espressif/esp32c3-devkitm", "esp-idf")
    assert f"into {out}" in capsys.readouterr().out
    manifest = yaml.safe_load((out / "idf_component.yml").read_text())
    assert manifest["version"] == __version__.replace(".dev", "-dev")
    assert manifest["targets"] == ["esp32c3"]
    assert manifest["dependencies"] == {"idf": ">=5.0"}
    text = (out / "CMakeLists.txt").read_text()
    call = re.search(r"idf_component_register\((.*?)\n\)", text, re.S).group(1)
    srcs = re.findall(r'"(model/codegen/[^"]+\.c)"', call)
    assert srcs == ["model/codegen/hello.c"] + [f"model/codegen/hello_kernels_{i}.c"
                                                for i in range(len(srcs) - 1)]
    assert all((out / s).is_file() for s in srcs)
    assert 'INCLUDE_DIRS "model/include"' in call
    assert (out / "model" / "include" / "hello.h").is_file()


@needs_cmake
@pytest.mark.skipif(shutil.which("riscv64-unknown-elf-gcc") is None,
                    reason="needs riscv64-unknown-elf-gcc")
@pytest.mark.slow
def test_esp_idf_component_sources_cross_compile_for_the_esp32c3(tmp_path):
    out = _compile(tmp_path, "espressif/esp32c3-devkitm", "esp-idf")
    stand_in = tmp_path / "idf"
    stand_in.mkdir()
    (stand_in / "CMakeLists.txt").write_text(f"""\
cmake_minimum_required(VERSION 3.16)
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
project(stand_in C)
# What ESP-IDF's build gives a component: idf_component_register and COMPONENT_LIB.
function(idf_component_register)
  cmake_parse_arguments(A "" "" "SRCS;INCLUDE_DIRS;REQUIRES;PRIV_REQUIRES" ${{ARGN}})
  add_library(component STATIC ${{A_SRCS}})
  target_include_directories(component PUBLIC ${{A_INCLUDE_DIRS}})
  target_compile_options(component PRIVATE -march=rv32imc -mabi=ilp32
    --specs=picolibc.specs -Wall -Werror)
  set(COMPONENT_LIB component PARENT_SCOPE)
endfunction()
add_subdirectory({out} component)
""")
    done = _cmake(stand_in, tmp_path / "b", target="component")
    assert done.returncode == 0, done.stdout + done.stderr
    kernels = [line for line in done.stdout.splitlines()
               if re.search(r" -c \S+hello_kernels_\d+\.c", line)]
    assert kernels
    # The record's optimisation and cflags (ESP-IDF sets no CMAKE_BUILD_TYPE).
    assert all(" -O2 " in line and " -ffunction-sections " in line for line in kernels), kernels


#: The arguments ESP-IDF's idf_component_register takes (ESP-IDF 5 build system
#: reference, "Component Requirements" and "idf_component_register").
IDF_REGISTER_ARGS = {"SRCS", "SRC_DIRS", "EXCLUDE_SRCS", "INCLUDE_DIRS", "PRIV_INCLUDE_DIRS",
                     "REQUIRES", "PRIV_REQUIRES", "LDFRAGMENTS", "REQUIRED_IDF_TARGETS",
                     "EMBED_FILES", "EMBED_TXTFILES", "KCONFIG", "KCONFIG_PROJBUILD",
                     "WHOLE_ARCHIVE"}


def _commands(cmake_text: str) -> list[tuple[str, str]]:
    """(command, arguments) of each CMake command call, comments removed."""
    text = re.sub(r"#[^\n]*", "", cmake_text)
    return [(m.group(1).lower(), m.group(2))
            for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(((?:[^()]|\([^()]*\))*)\)", text)]


def test_esp_idf_component_file_follows_the_documented_rules(tmp_path):
    """What ESP-IDF documents for a component's CMakeLists.txt, since no ESP-IDF
    build can run here: idf_component_register first and once, with its own
    arguments only; no project() or library of its own; ${COMPONENT_LIB} only
    after the registration created it; the manifest's fields."""
    out = _compile(tmp_path, "espressif/esp32c3-devkitm", "esp-idf")
    commands = _commands((out / "CMakeLists.txt").read_text())
    names = [c for c, _ in commands]
    assert names[0] == "idf_component_register" and names.count("idf_component_register") == 1
    assert not {"project", "cmake_minimum_required", "add_library", "add_executable"} & set(names)
    words = commands[0][1].split()
    keywords = {w for w in words if re.fullmatch(r"[A-Z_]+", w)}
    assert keywords <= IDF_REGISTER_ARGS and {"SRCS", "INCLUDE_DIRS"} <= keywords
    for path in (w.strip('"') for w in words if w not in keywords):
        assert (out / path).exists(), path
    # Everything after the registration acts on the library it made.
    for name, args in commands[1:]:
        if name.startswith("target_"):
            assert args.split()[0] == "${COMPONENT_LIB}", (name, args)
    manifest = yaml.safe_load((out / "idf_component.yml").read_text())
    assert set(manifest) <= {"version", "description", "url", "targets", "dependencies",
                             "maintainers", "tags", "files", "license", "repository"}
    assert re.fullmatch(r"\d+\.\d+\.\d+(-[\w.]+)?", manifest["version"])


def test_pico_sdk_application_runs_the_model_from_its_main(tmp_path):
    out = _compile(tmp_path, "raspberrypi/pico", "pico-sdk")
    text = (out / "CMakeLists.txt").read_text()
    lines = [line.strip() for line in text.splitlines() if line and not line.startswith("#")]
    order = [next(i for i, line in enumerate(lines) if line.startswith(w))
             for w in ("include(pico_sdk_import.cmake)", "project(", "pico_sdk_init()",
                       "add_executable(hello_app", "pico_add_extra_outputs(hello_app)")]
    assert order == sorted(order)
    assert "target_link_libraries(hello_app PRIVATE pico_stdlib m)" in text
    main_c = (out / "main.c").read_text()
    assert '#include "hello.h"' in main_c and "hello_run(&in, &out)" in main_c
    assert ".serving_default_dense_input_0 = input_0," in main_c
    assert (out / "model" / "metadata.json").is_file()


@needs_cmake
@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="needs arm-none-eabi-gcc")
@pytest.mark.slow
def test_pico_sdk_application_builds_against_the_sdks_declarations(tmp_path):
    out = _compile(tmp_path, "raspberrypi/pico", "pico-sdk")
    sdk = tmp_path / "sdk"
    (sdk / "include" / "pico").mkdir(parents=True)
    # The Pico SDK's prototypes of what main.c calls (pico/stdlib.h, pico/time.h, pico/stdio.h).
    (sdk / "include" / "pico" / "stdlib.h").write_text(
        "#include <stdbool.h>\n#include <stdint.h>\nbool stdio_init_all(void);\n"
        "uint64_t time_us_64(void);\nvoid sleep_ms(uint32_t ms);\n")
    (sdk / "stdlib.c").write_text(
        '#include "pico/stdlib.h"\nbool stdio_init_all(void) { return true; }\n'
        "uint64_t time_us_64(void) { return 0; }\nvoid sleep_ms(uint32_t ms) { (void)ms; }\n")
    (sdk / "pico_sdk_init.cmake").write_text(f"""\
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-m0plus -mthumb -Wall -Werror")
set(CMAKE_EXE_LINKER_FLAGS_INIT "--specs=nosys.specs")
macro(pico_sdk_init)
  add_library(pico_stdlib STATIC {sdk}/stdlib.c)
  target_include_directories(pico_stdlib PUBLIC {sdk}/include)
endmacro()
function(pico_enable_stdio_uart target on)
endfunction()
function(pico_enable_stdio_usb target on)
endfunction()
function(pico_add_extra_outputs target)
endfunction()
""")
    done = _cmake(out, tmp_path / "b", f"-DPICO_SDK_PATH={sdk}", target="hello_app")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "b" / "hello_app").is_file()
    # The record's cflags and, the stand-in setting no build type, its optimisation.
    kernels = [line for line in done.stdout.splitlines()
               if re.search(r" -c \S+hello_kernels_\d+\.c", line)]
    assert kernels
    assert all(" -O2 " in line and " -ffunction-sections " in line for line in kernels), kernels


@needs_cmake
def test_pico_sdk_application_without_the_sdk_says_where_to_point(tmp_path):
    out = _compile(tmp_path, "raspberrypi/pico", "pico-sdk")
    done = subprocess.run(["cmake", "-S", str(out), "-B", str(tmp_path / "b")],
                          capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin"})
    assert done.returncode != 0
    assert "the Pico SDK was not found: set PICO_SDK_PATH" in re.sub(r"\s+", " ", done.stderr)


@pytest.mark.parametrize("board, kind, message", [
    ("qemu/mps2-an386", "pico-sdk", "--project pico-sdk builds for boards of the runtime "
     "port(s) rp2040, not for qemu/mps2-an386"),
    ("raspberrypi/pico", "esp-idf", "--project esp-idf builds for boards of the runtime "
     "port(s) esp32c3, not for raspberrypi/pico"),
])
def test_an_sdk_for_another_board_is_refused(board, kind, message, tmp_path, capsys):
    assert main(["compile", str(MODEL), "--board", board, "--project", kind,
                 "-o", str(tmp_path / "p")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "p").exists()


def test_tar_and_project_together_are_refused(tmp_path, capsys):
    assert main(["compile", str(MODEL), "--board", "raspberrypi/pico", "--project", "pico-sdk",
                 "--tar", "-o", str(tmp_path / "p")]) == 2
    assert "--tar writes an artifact's archive" in capsys.readouterr().err


def test_a_folder_holding_something_else_is_not_overwritten(tmp_path, capsys):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "notes.txt").write_text("mine")
    assert main(["compile", str(MODEL), "--board", "raspberrypi/pico", "--project", "pico-sdk",
                 "-o", str(tmp_path / "p")]) == 2
    assert "is not empty and holds no aot pico-sdk project" in capsys.readouterr().err
    assert (tmp_path / "p" / "notes.txt").read_text() == "mine"


def test_sdk_layouts_refuse_external_codegens_rather_than_drop_their_library(tmp_path, capsys):
    from support.models import CMSIS_NN_DIR

    assert main(["compile", str(MODEL), "--board", "raspberrypi/pico", "--target",
                 "c -libs=cmsis-nn", "--cmsis-nn", str(CMSIS_NN_DIR), "--project", "pico-sdk",
                 "-o", str(tmp_path / "p")]) == 2
    assert "not supported yet: --project pico-sdk with layers handed to external codegens " \
           "(cmsis-nn" in capsys.readouterr().err
