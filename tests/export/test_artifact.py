"""The artifact: its layout, metadata, tar form, and builds with Make and CMake alone."""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile

import pytest
from support.models import MODELS_DIR

from aot.compile import compile_model
from aot.export import ExportError, read_metadata, runtime_files

HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"


@pytest.fixture(scope="module")
def compiled():
    return compile_model(HELLO, "qemu/mps2-an386", name="hello")


def test_layout(compiled, tmp_path):
    out = compiled.write(tmp_path / "art")
    names = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert {"metadata.json", "CMakeLists.txt", "hello.mk", "include/hello.h",
            "codegen/hello.c", "codegen/hello_rpc.c"} <= names
    kernels = sorted(n for n in names if n.startswith("codegen/hello_kernels_"))
    assert len(kernels) == len(compiled.kernels) == 3
    # The RPC firmware's runtime: headers, sources, Makefile fragment, the board's port
    # and the cortex-m startup that port pulls in; no other port.
    assert {"runtime/include/aot/model.h", "runtime/src/rpc_server.c", "runtime/runtime.mk",
            "runtime/ports/mps2/port.mk", "runtime/ports/cortex-m/startup.c"} <= names
    assert not any(n.startswith("runtime/ports/sifive_e") for n in names)


def test_the_make_fragment_for_a_board_sets_each_variable_on_its_own_line(compiled, tmp_path):
    out = compiled.write(tmp_path / "art")
    lines = (out / "hello.mk").read_text().splitlines()
    starts = [line.split()[0] for line in lines if ":=" in line or "?=" in line]
    for name in ("HELLO_BOARD_LDFLAGS", "AOT_RUNTIME_DIR", "AOT_PORT", "AOT_RAM_ORIGIN"):
        assert name in starts, f"{name} does not start a line of hello.mk"


def test_metadata(compiled, tmp_path):
    meta = read_metadata(compiled.write(tmp_path / "art"))
    assert meta["board"] == "qemu/mps2-an386"
    assert meta["target"] == str(compiled.target)
    assert meta["aot_version"]
    (inp,) = meta["inputs"]
    assert inp["name"] == "serving_default_dense_input:0"
    assert inp["shape"] == [1, 1] and inp["dtype"] == "int8" and inp["bytes"] == 1
    assert inp["quantization"]["zero_point"] is not None
    sizes = meta["sizes"]
    assert sizes["workspace"] == compiled.sizes.workspace
    assert sizes["constants"] == sum(k["constant_bytes"] for k in meta["kernels"]) > 0
    assert sizes["code"] > 0
    assert meta["memory_plan"]["workspace_bytes"] == compiled.plan.workspace_bytes
    assert [k["ops"] for k in meta["kernels"]] == [["dense"]] * 3
    json.dumps(meta)


def test_tar_holds_the_same_tree(compiled, tmp_path):
    tar_path = compiled.write(tmp_path / "art", tar=True)
    assert tar_path.name == "art.tar"
    with tarfile.open(tar_path) as archive:
        members = {m.name for m in archive.getmembers()}
        assert all(m.mtime == 0 and m.uid == 0 for m in archive.getmembers())
    on_disk = {f"hello/{p.relative_to(tmp_path / 'art')}"
               for p in (tmp_path / "art").rglob("*") if p.is_file()}
    assert members == on_disk
    assert read_metadata(tar_path)["name"] == "hello"


def test_same_compilation_gives_the_same_archive(compiled, tmp_path):
    again = compile_model(HELLO, "qemu/mps2-an386", name="hello")
    first = compiled.write(tmp_path / "a" / "art", tar=True)
    second = again.write(tmp_path / "b" / "art", tar=True)
    assert first.read_bytes() == second.read_bytes()


def test_rewriting_removes_stale_sources(compiled, tmp_path):
    out = tmp_path / "art"
    compiled.write(out)
    (out / "codegen" / "stale.c").write_text("#error stale\n")
    compiled.write(out)
    assert not (out / "codegen" / "stale.c").exists()


def test_a_folder_holding_other_files_is_refused(compiled, tmp_path):
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "board.h").write_text("/* the user's */\n")
    with pytest.raises(ExportError, match="not empty and holds no aot artifact"):
        compiled.write(tmp_path)
    assert (tmp_path / "include" / "board.h").exists()


def test_runtime_files_follow_the_port():
    host = runtime_files("host")
    assert "runtime/ports/host/port.c" in host
    assert not any("cortex-m" in k for k in host)
    assert not any(k.startswith("runtime/ports/") for k in runtime_files(None))


_APP = r"""
#include <stdio.h>
#include "hello.h"
int main(void)
{
    int8_t x[HELLO_INPUT_SERVING_DEFAULT_DENSE_INPUT_0_BYTES] = {0};
    int8_t y[HELLO_OUTPUT_STATEFULPARTITIONEDCALL_0_BYTES];
    struct hello_inputs in = {x};
    struct hello_outputs out = {y};
    int32_t status = hello_run(&in, &out);
    printf("%d %d\n", (int)status, (int)y[0]);
    return (int)status;
}
"""


@pytest.fixture(scope="module")
def host_artifact(tmp_path_factory):
    out = tmp_path_factory.mktemp("host") / "art"
    return compile_model(HELLO, "host/native", name="hello").write(out)


def test_make_fragment_builds_a_static_library(host_artifact, tmp_path):
    (tmp_path / "main.c").write_text(_APP)
    (tmp_path / "Makefile").write_text(
        f"HELLO_DIR := {host_artifact}\ninclude $(HELLO_DIR)/hello.mk\n"
        "app: main.c $(HELLO_LIB)\n"
        "\t$(CC) -std=c99 $(HELLO_CFLAGS) main.c $(HELLO_LIB) -lm -o $@\n")
    proc = subprocess.run(["make", "-s", "app", "CC=gcc", "CFLAGS=-Wall -Wextra -Werror"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "build" / "hello" / "libhello.a").exists()
    run = subprocess.run([str(tmp_path / "app")], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.startswith("0 ")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cmake") is None, reason="no cmake")
def test_cmake_builds_the_library(host_artifact, tmp_path):
    (tmp_path / "main.c").write_text(_APP)
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.13)\nproject(app C)\n"
        f"add_subdirectory({host_artifact} hello)\n"
        "add_executable(app main.c)\ntarget_link_libraries(app PRIVATE hello)\n")
    build = tmp_path / "build"
    for cmd in (["cmake", "-S", str(tmp_path), "-B", str(build)],
                ["cmake", "--build", str(build)]):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    run = subprocess.run([str(build / "app")], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.startswith("0 ")


def test_the_make_fragment_compiles_with_the_records_flags_and_cflags_win(compiled, tmp_path):
    out = compiled.write(tmp_path / "art")
    (tmp_path / "Makefile").write_text(f"HELLO_DIR := {out}\ninclude $(HELLO_DIR)/hello.mk\n")
    for cflags, want in [("", " -O2 "), ("-Os", " -Os")]:
        proc = subprocess.run(["make", "-n", "-B", "build/hello/codegen/hello.o",
                               "CC=arm-none-eabi-gcc", f"CFLAGS={cflags}"],
                              cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        (line,) = [ln for ln in proc.stdout.splitlines() if "hello.c" in ln]
        assert " -O2 " in line and " -mcpu=cortex-m4 " in line and " -ffunction-sections" in line
        # CFLAGS come after the record's optimisation: gcc takes the last -O.
        assert line.rindex(want) >= line.index(" -O2 "), line


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("arm-none-eabi-gcc") is None,
                    reason="needs cmake and arm-none-eabi-gcc")
@pytest.mark.parametrize("extra, want, unwanted", [
    ((), " -O2", None), (("-DCMAKE_BUILD_TYPE=MinSizeRel",), " -Os", " -O2")])
@pytest.mark.one_fast
def test_the_cmake_library_compiles_with_the_records_flags_unless_a_build_type(
        compiled, tmp_path, extra, want, unwanted):
    from aot.commands.config import toolchain_file

    out = compiled.write(tmp_path / "art")
    (tmp_path / "main.c").write_text("int main(void) { return 0; }\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.13)\nproject(app C)\n"
        f"add_subdirectory({out} hello)\n"
        "add_executable(app main.c)\ntarget_link_libraries(app PRIVATE hello)\n")
    build = tmp_path / "build"
    proc = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(build), "-G", "Unix Makefiles",
                           f"-DCMAKE_TOOLCHAIN_FILE={toolchain_file(compiled.board)}",
                           "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", *extra],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    commands = json.loads((build / "compile_commands.json").read_text())
    (command,) = [c["command"] for c in commands if c["file"].endswith("/hello.c")]
    assert want in command and "-mfpu=fpv4-sp-d16" in command and "-fdata-sections" in command
    if unwanted:
        assert unwanted not in command
    link = (build / "CMakeFiles" / "app.dir" / "link.txt").read_text()
    assert "-Wl,--gc-sections" in link


def test_a_records_opt_flags_reach_every_build_file(tmp_path):
    """toolchain.opt_flags of a board record (here -Os) is what metadata.json,
    P.mk, the CMakeLists.txt and aot project's build files give the model."""
    from aot.export import build_settings, cmake_lists, make_fragment
    from aot.firmware.project import _settings, makefile
    from aot.target import BOARDS_DIR, BoardError, load_board_file

    text = (BOARDS_DIR / "qemu" / "mps2-an386.toml").read_text()
    record = tmp_path / "mps2-an386.toml"
    record.write_text(text.replace("[toolchain]\n", '[toolchain]\nopt_flags = ["-Os"]\n', 1))
    board = load_board_file(record)
    assert board.toolchain.opt_flags == ("-Os",)
    build = build_settings("hello", {"codegen/hello.c": ""}, board)
    assert build["opt_flags"] == ["-Os"]
    assert "HELLO_OPT_FLAGS ?= -Os\n" in make_fragment("hello", build)
    assert '"$<$<STREQUAL:$<CONFIG>,>:-Os>"' in cmake_lists("hello", build)
    settings = _settings(board, "mps2", {"name": "hello", "model": {"name": "hello"}},
                         ["model/codegen/hello.c"], [])
    assert "AOT_OPT_FLAGS := -Os\n" in makefile(settings)
    with pytest.raises(BoardError, match="opt_flags"):
        bad = tmp_path / "bad.toml"
        bad.write_text(text.replace("[toolchain]\n", '[toolchain]\nopt_flags = "-Os"\n', 1))
        load_board_file(bad)
