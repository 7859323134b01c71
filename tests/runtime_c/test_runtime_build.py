"""The C runtime builds warning-free on every toolchain and checks descriptors."""

import subprocess
from pathlib import Path

import numpy as np
import pytest
from support.firmware import fw

RUNTIME = fw.ROOT / "runtime_c"
SOURCES = sorted((RUNTIME / "src").glob("*.c"))
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-c",
          f"-I{RUNTIME / 'include'}"]

ARM = "arm-none-eabi-gcc"
TOOLCHAINS = {
    "host": ("gcc", [], ["host"]),
    "cortex-m3": (ARM, ["-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"], ["cortex-m", "mps2"]),
    "cortex-m4f": (ARM, ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
                   ["cortex-m", "mps2"]),
    "cortex-m7": (ARM, ["-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16"],
                  ["cortex-m", "mps2", "stm32"]),
    "cortex-m55": (ARM, ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"], ["cortex-m", "mps2"]),
    "rv32imac": ("riscv64-unknown-elf-gcc",
                 ["-march=rv32imac", "-mabi=ilp32", "-Wa,-march=rv32imac_zicsr",
                  "--specs=picolibc.specs"], ["sifive_e"]),
}


@pytest.mark.parametrize("name", TOOLCHAINS)
def test_runtime_and_port_compile_with_all_warnings_as_errors(name, tmp_path):
    cc, flags, ports = TOOLCHAINS[name]
    if not fw.have(cc):
        pytest.skip(f"{cc} is not installed")
    port_sources = [src for port in ports for src in sorted((RUNTIME / "ports" / port).glob("*.c"))]
    for i, src in enumerate(SOURCES + port_sources):
        subprocess.run([cc, *STRICT, *flags, str(src), "-o", str(tmp_path / f"{i}.o")],
                       check=True)


@pytest.mark.skipif(not fw.have(ARM), reason="arm-none-eabi-gcc is not installed")
def test_stm32_port_links_with_vectors_at_the_start_of_flash(tmp_path):
    """Real-board port: built and linked, not run (no hardware in CI)."""
    elf = fw.build(tmp_path, "stm32", ARM, "-mcpu=cortex-m7 -mfloat-abi=hard -mfpu=fpv5-d16",
                   board_tag="st/nucleo-f746zg")
    headers = subprocess.run(["arm-none-eabi-objdump", "-h", str(elf)], check=True,
                             capture_output=True, text=True).stdout
    vectors = next(line.split() for line in headers.splitlines() if ".isr_vector" in line)
    assert vectors[3] == "08000000"


def test_runtime_needs_no_heap(tmp_path):
    """No malloc/free/calloc/realloc referenced by any runtime object."""
    objs = []
    for src in SOURCES:
        obj = tmp_path / (src.stem + ".o")
        subprocess.run(["gcc", *STRICT, str(src), "-o", str(obj)], check=True)
        objs.append(str(obj))
    undefined = subprocess.run(["nm", "-u", *objs], check=True, capture_output=True,
                               text=True).stdout.split()
    assert not {"malloc", "free", "calloc", "realloc"} & set(undefined)


def test_model_check_rejects_every_broken_descriptor(tmp_path):
    exe = tmp_path / "model_check"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{RUNTIME / 'include'}",
                    str(fw.HERE / "model_check.c"), str(RUNTIME / "src" / "model.c"),
                    "-o", str(exe)], check=True)
    result = subprocess.run([str(exe)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_fixture_firmware_builds_through_runtime_mk(host_firmware: Path):
    assert host_firmware.is_file()


def cmake_build(tmp_path, port, *extra):
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(fw.HERE), "-B", str(build), f"-DAOT_PORT={port}",
                    "-DAOT_BOARD_TAG=test/cmake", *extra], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build)], check=True, capture_output=True)
    return build


@pytest.mark.skipif(not fw.have("cmake"), reason="cmake is not installed")
def test_cmake_snippet_builds_working_host_firmware(tmp_path):
    from aot.rpc import PipeTransport, connect

    build = cmake_build(tmp_path, "host")
    with connect(PipeTransport([str(build / "fixture")])) as client:
        assert (client.info().build_id, client.info().board_tag) == ("cmake-1", "test/cmake")
        x = np.full((1, 64), -5, np.int8)
        client.write_tensor("input", x)
        client.run(1)
        np.testing.assert_array_equal(client.read_tensor("output"), fw.reference(x)[1])


@pytest.mark.skipif(not fw.have("cmake", ARM), reason="cmake or arm-none-eabi-gcc missing")
def test_cmake_snippet_cross_builds_for_mps2(tmp_path):
    build = cmake_build(tmp_path, "mps2", "-DCMAKE_SYSTEM_NAME=Generic",
                        f"-DCMAKE_C_COMPILER={ARM}", f"-DCMAKE_ASM_COMPILER={ARM}",
                        "-DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY",
                        "-DAOT_ARCH_FLAGS=-mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16")
    assert (build / "fixture.elf").is_file()
