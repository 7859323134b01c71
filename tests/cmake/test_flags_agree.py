"""Every integration compiles the model with the board record's flags
(build.opt_flags, cpu_flags, cflags, ldflags of metadata.json), so the KWS
model's code is the same size whichever way it is built: the artifact's P.mk
in a Makefile, aot_add_model in CMake without a CMAKE_BUILD_TYPE, and
`aot build`.  And a build that chose its own optimisation keeps it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from aot.commands.config import cmake_dir, toolchain_file
from aot.target import load_board
from support.models import MODELS_DIR
from support.net_firmware import aot_program, net_model

BOARD = "qemu/mps2-an386"
KWS = MODELS_DIR / "mlperf_kws_dscnn.tflite"

needs_tools = pytest.mark.skipif(
    any(shutil.which(t) is None for t in ("cmake", "make", "arm-none-eabi-gcc")),
    reason="needs cmake, make and arm-none-eabi-gcc")

MAIN = """\
#include "aot/platform.h"
#include "kws.h"

static int8_t x[KWS_INPUT_INPUT_1_BYTES];
static int8_t y[KWS_OUTPUT_IDENTITY_BYTES];

int main(void)
{
    aot_port_init();
    struct kws_inputs in = {x};
    struct kws_outputs out = {y};
    int32_t status = kws_run(&in, &out);
    aot_port_write((const uint8_t *)y, sizeof y);
    return (int)status;
}
"""

# The Make integration of docs/integration.md: the artifact's kws.mk and the
# runtime's board.mk; main.c and the port compiled with the flags they name.
MAKEFILE = """\
CC := arm-none-eabi-gcc
AR := arm-none-eabi-ar
KWS_DIR := build/aot/kws
KWS_BUILD_DIR := build/obj/kws
.DEFAULT_GOAL := build/app.elf

$(KWS_DIR)/kws.mk: $(MODEL)
\t$(AOT) compile $(MODEL) --board {board} --name kws -o $(KWS_DIR)
include $(KWS_DIR)/kws.mk
-include $(AOT_RUNTIME_DIR)/board.mk

APP_CFLAGS := $(KWS_OPT_FLAGS) $(KWS_CPU_FLAGS) $(KWS_BOARD_CFLAGS) $(AOT_PORT_CFLAGS) \\
  $(AOT_PORT_INCLUDES) $(KWS_CFLAGS)
APP_OBJS := $(patsubst %.c,build/obj/app/%.o,$(notdir main.c $(AOT_PORT_SRCS)))
vpath %.c $(sort $(dir $(AOT_PORT_SRCS)))
build/obj/app/%.o: %.c
\t@mkdir -p $(dir $@)
\t$(CC) $(APP_CFLAGS) -c $< -o $@
build/app.elf: $(APP_OBJS) $(KWS_LIB) $(AOT_LDSCRIPT)
\t$(CC) $(KWS_CPU_FLAGS) $(AOT_PORT_CFLAGS) $(APP_OBJS) $(KWS_LIB) $(AOT_LDSCRIPT_FLAGS) \\
\t  $(AOT_PORT_LDFLAGS) $(KWS_BOARD_LDFLAGS) -lm -Wl,-Map=build/app.map -o $@
""".format(board=BOARD)

CMAKELISTS = f"""\
cmake_minimum_required(VERSION 3.19)
project(app C)
find_package(aot 0.1 REQUIRED)
add_executable(app main.c)
aot_add_model(app MODEL {KWS} BOARD {BOARD} NAME kws BOARD_SUPPORT)
target_link_options(app PRIVATE -Wl,-Map=app.map)
"""

# An input section of a GNU ld map: " .text.f  0xADDR  0xSIZE object", the
# name alone on its line when it is long.
_SECTION = re.compile(r"^ (\.(?:text|rodata)\S*)\s*\n?\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+)$",
                      re.M)
# The model library's objects however each build names them (kws.c, kws_kernels_<i>.c).
_MODEL_OBJECT = re.compile(r"kws(_kernels_\d+)?\.(c\.obj|o)\)?$")


def model_bytes(map_file: Path) -> dict[str, int]:
    """Bytes of the model's code (.text*) and constants (.rodata*) linked, from a map."""
    found = {"code": 0, "constants": 0}
    for name, size, obj in _SECTION.findall(map_file.read_text()):
        if _MODEL_OBJECT.search(obj):
            found["code" if name.startswith(".text") else "constants"] += int(size, 16)
    return found


def text_size(elf: Path) -> int:
    out = subprocess.run(["arm-none-eabi-size", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    return int(out.splitlines()[1].split()[0])


def run(argv, cwd=None):
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, " ".join(map(str, argv)) + "\n" + done.stdout + done.stderr
    return done.stdout


@needs_tools
@pytest.mark.slow
def test_kws_model_code_agrees_across_make_cmake_and_aot_build(tmp_path):
    aot = aot_program(tmp_path)
    make_dir, cmake_src = tmp_path / "make", tmp_path / "cmake"
    for d in (make_dir, cmake_src):
        d.mkdir()
        (d / "main.c").write_text(MAIN)
    (make_dir / "Makefile").write_text(MAKEFILE)
    run(["make", f"AOT={aot}", f"MODEL={KWS}"], cwd=make_dir)

    (cmake_src / "CMakeLists.txt").write_text(CMAKELISTS)
    build = tmp_path / "cmake-build"
    run(["cmake", "-S", cmake_src, "-B", build, f"-Daot_DIR={cmake_dir()}",
         f"-DAOT_EXECUTABLE={aot}", f"-DCMAKE_TOOLCHAIN_FILE={toolchain_file(load_board(BOARD))}"])
    run(["cmake", "--build", build])

    art, proj = tmp_path / "art", tmp_path / "proj"
    run([aot, "compile", KWS, "--board", BOARD, "--name", "kws", "-o", art])
    run([aot, "project", "create", "--artifact", art, "--board", BOARD, "-o", proj])
    run([aot, "build", proj])

    sizes = {"make": model_bytes(make_dir / "build" / "app.map"),
             "cmake": model_bytes(build / "app.map"),
             "aot build": model_bytes(proj / "build" / "firmware.map")}
    print(json.dumps(sizes))
    for part in ("code", "constants"):
        values = [s[part] for s in sizes.values()]
        assert min(values) > 0 and max(values) <= 1.05 * min(values), (part, sizes)
    # The same main.c and port through Make and CMake: the whole images agree too.
    make_text = text_size(make_dir / "build" / "app.elf")
    cmake_text = text_size(build / "app.elf")
    assert abs(make_text - cmake_text) <= 0.05 * min(make_text, cmake_text), (make_text,
                                                                              cmake_text)


def _compile_commands(tmp_path: Path, *extra: str) -> dict[str, str]:
    """Configure a small BOARD_SUPPORT project; each source's compile command."""
    model = tmp_path / "net.tflite"
    model.write_bytes(net_model(seed=1))
    src = tmp_path / "src"
    src.mkdir()
    (src / "main.c").write_text("int main(void) { return 0; }\n")
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.19)\nproject(app C)\nfind_package(aot REQUIRED)\n"
        f"add_executable(app main.c)\n"
        f"aot_add_model(app MODEL {model} BOARD {BOARD} NAME net BOARD_SUPPORT)\n")
    build = tmp_path / "build"
    run(["cmake", "-S", src, "-B", build, "-G", "Unix Makefiles", f"-Daot_DIR={cmake_dir()}",
         f"-DAOT_EXECUTABLE={aot_program(tmp_path)}",
         f"-DCMAKE_TOOLCHAIN_FILE={toolchain_file(load_board(BOARD))}",
         "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", *extra])
    commands = json.loads((build / "compile_commands.json").read_text())
    return {Path(c["file"]).name: c["command"] for c in commands}


@needs_tools
@pytest.mark.parametrize("extra, want, unwanted", [
    ((), " -O2", None),
    (("-DCMAKE_BUILD_TYPE=MinSizeRel",), " -Os", " -O2"),
    (("-DCMAKE_C_FLAGS=-O1",), " -O1", " -O2"),
])
@pytest.mark.one_fast
def test_the_boards_optimisation_unless_the_build_chose_one(tmp_path, extra, want, unwanted):
    commands = _compile_commands(tmp_path, *extra)
    for source in ("main.c", "net.c", "net_kernels_0.c", "startup.c", "syscalls.c"):
        command = commands[source]
        assert want in command and "-mcpu=cortex-m4" in command, command
        assert "-ffunction-sections" in command, command
        if unwanted:
            assert unwanted not in command, command


def test_runtime_mk_defaults_to_the_one_default_optimisation():
    """runtime.mk used alone (no board record) needs a default of its own; it
    must be aot.target.DEFAULT_OPT_FLAGS, the default of every record."""
    from aot.export import RUNTIME_DIR
    from aot.target import DEFAULT_OPT_FLAGS

    (default,) = re.findall(r"^AOT_OPT_FLAGS \?= (.*)$", (RUNTIME_DIR / "runtime.mk").read_text(),
                            re.M)
    assert default.split() == list(DEFAULT_OPT_FLAGS)
