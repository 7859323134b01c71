"""The C runtime builds warning-free on every toolchain and checks descriptors."""

import re
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from support.firmware import fw
from support.models import MODELS_DIR

from aot.export import board_defines
from aot.resources import runtime_dir
from aot.target import load_board

RUNTIME = runtime_dir()
SOURCES = sorted((RUNTIME / "src").glob("*.c"))
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-c",
          f"-I{RUNTIME / 'include'}"]

ARM = "arm-none-eabi-gcc"
RISCV = "riscv64-unknown-elf-gcc"
TOOLCHAINS = {
    "host": ("gcc", [], ["host"]),
    "cortex-m3": (ARM, ["-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"], ["cortex-m", "mps2"]),
    "cortex-m0plus": (ARM, ["-mcpu=cortex-m0plus", "-mthumb", "-mfloat-abi=soft"],
                      ["cortex-m", "rp2040", "nrf51"]),
    "cortex-m0": (ARM, ["-mcpu=cortex-m0", "-mthumb", "-mfloat-abi=soft",
                        *board_defines(load_board("qemu/microbit"))], ["nrf51"]),
    "cortex-m4f": (ARM, ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
                   ["cortex-m", "mps2", "nrf52", "stm32"]),
    # stm32 as the NUCLEO-L4R5ZI project compiles it (LPUART1, VDDIO2).
    "cortex-m4f-l4r5zi": (ARM, ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard",
                                "-mfpu=fpv4-sp-d16",
                                *board_defines(load_board("st/nucleo-l4r5zi"))], ["stm32"]),
    # stm32 as the qemu/netduinoplus2 project compiles it (F4 USART, TIM2 timer).
    "cortex-m4f-netduinoplus2": (ARM, ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard",
                                       "-mfpu=fpv4-sp-d16",
                                       *board_defines(load_board("qemu/netduinoplus2"))],
                                 ["stm32"]),
    "cortex-m7": (ARM, ["-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16"],
                  ["cortex-m", "mps2", "stm32"]),
    "cortex-m55": (ARM, ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"], ["cortex-m", "mps2"]),
    "rv32imac": (RISCV,
                 ["-march=rv32imac", "-mabi=ilp32", "-Wa,-march=rv32imac_zicsr",
                  "--specs=picolibc.specs"], ["sifive_e"]),
    "rv32imc": (RISCV, ["-march=rv32imc", "-mabi=ilp32", "--specs=picolibc.specs"], ["esp32c3"]),
}


@pytest.mark.parametrize("name", TOOLCHAINS)
@pytest.mark.one_fast
def test_runtime_and_port_compile_with_all_warnings_as_errors(name, tmp_path):
    cc, flags, ports = TOOLCHAINS[name]
    if not fw.have(cc):
        pytest.skip(f"{cc} is not installed")
    port_sources = [src for port in ports for src in sorted((RUNTIME / "ports" / port).glob("*.c"))]
    for i, src in enumerate(SOURCES + port_sources):
        subprocess.run([cc, *STRICT, *flags, str(src), "-o", str(tmp_path / f"{i}.o")],
                       check=True)


@pytest.mark.skipif(not fw.have(ARM), reason="arm-none-eabi-gcc is not installed")
@pytest.mark.slow
def test_stm32_port_links_with_vectors_at_the_start_of_flash(tmp_path):
    """Real-board port: built and linked, not run (no hardware in CI)."""
    elf = fw.build(tmp_path, "stm32", ARM, "-mcpu=cortex-m7 -mfloat-abi=hard -mfpu=fpv5-d16",
                   board_tag="st/nucleo-f746zg")
    headers = subprocess.run(["arm-none-eabi-objdump", "-h", str(elf)], check=True,
                             capture_output=True, text=True).stdout
    vectors = next(line.split() for line in headers.splitlines() if ".isr_vector" in line)
    assert vectors[3] == "08000000"


def build_for_board(out_dir: Path, tag: str) -> Path:
    """The fixture firmware built as an aot project for ``tag`` builds it: the board's
    toolchain, CPU flags, memory map and board defines, through runtime.mk."""
    return fw.build_from_record(out_dir, tag)


def sections(elf: Path, prefix: str) -> dict[str, tuple[int, int]]:
    """Section name -> (address, size) from objdump -h."""
    out = subprocess.run([prefix + "objdump", "-h", str(elf)], check=True, capture_output=True,
                         text=True).stdout
    found = {}
    for line in out.splitlines():
        cols = line.split()
        if len(cols) >= 7 and cols[0].isdigit():
            found[cols[1]] = (int(cols[3], 16), int(cols[2], 16))
    return found


def section_bytes(elf: Path, prefix: str, name: str, tmp_path: Path) -> bytes:
    out = tmp_path / (name.strip(".") + ".bin")
    subprocess.run([prefix + "objcopy", "-O", "binary", "-j", name, str(elf), str(out)],
                   check=True)
    return out.read_bytes()


def entry_point(elf: Path, prefix: str) -> int:
    out = subprocess.run([prefix + "readelf", "-h", str(elf)], check=True, capture_output=True,
                         text=True).stdout
    return int(next(ln for ln in out.splitlines() if "Entry point" in ln).split()[-1], 16)


def crc32_mpeg2(data: bytes) -> int:
    """CRC-32 as the RP2040 boot ROM checks boot2: poly 0x04C11DB7, init ~0, no reflection."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7 if crc & 0x80000000 else crc << 1) & 0xFFFFFFFF
    return crc


def check_cortex_m_vectors(elf, board, table_at, tmp_path):
    secs = sections(elf, "arm-none-eabi-")
    assert secs[".isr_vector"][0] == table_at
    sp, reset = struct.unpack("<2I", section_bytes(elf, "arm-none-eabi-", ".isr_vector",
                                                   tmp_path)[:8])
    assert sp == board.memory.ram.end  # the stack starts at the top of the board's RAM
    flash = board.memory.flash
    assert reset & 1 and flash.origin <= reset < flash.end  # a Thumb address in flash
    assert entry_point(elf, "arm-none-eabi-") == reset


@pytest.mark.skipif(not fw.have(ARM), reason="arm-none-eabi-gcc is not installed")
@pytest.mark.parametrize("tag", ["st/nucleo-l4r5zi", "nordic/nrf52840dk"])
@pytest.mark.one_fast
def test_cortex_m_board_links_with_vectors_at_its_flash_origin(tag, tmp_path):
    """Real-board ports: built and linked as a project would, not run (no hardware in CI)."""
    board = load_board(tag)
    elf = build_for_board(tmp_path, tag)
    check_cortex_m_vectors(elf, board, board.memory.flash.origin, tmp_path)


@pytest.mark.skipif(not fw.have(ARM), reason="arm-none-eabi-gcc is not installed")
@pytest.mark.slow
def test_pico_links_boot2_with_a_valid_crc_then_the_vectors(tmp_path):
    board = load_board("raspberrypi/pico")
    elf = build_for_board(tmp_path, board.tag)
    assert sections(elf, "arm-none-eabi-")[".boot2"] == (0x10000000, 256)
    boot2 = section_bytes(elf, "arm-none-eabi-", ".boot2", tmp_path)
    crc = crc32_mpeg2(boot2[:252])
    assert struct.unpack("<I", boot2[252:])[0] == crc, (
        f"boot2's CRC word is stale: set AOT_BOOT2_CRC to {crc:#010x} in ports/rp2040/boot2.S")
    # boot2 enters the image through the vector table it expects at flash + 0x100.
    assert struct.pack("<I", 0x10000100) in boot2[:252]
    check_cortex_m_vectors(elf, board, 0x10000100, tmp_path)


@pytest.mark.skipif(not fw.have(RISCV), reason="riscv64-unknown-elf-gcc is not installed")
def test_esp32c3_links_code_in_irom_and_constants_in_drom_past_the_code(tmp_path):
    board = load_board("espressif/esp32c3-devkitm")
    elf = build_for_board(tmp_path, board.tag)
    secs = sections(elf, "riscv64-unknown-elf-")
    irom = board.memory.flash
    text, text_size = secs[".text"]
    assert irom.origin <= text and text + text_size <= irom.end
    assert entry_point(elf, "riscv64-unknown-elf-") == text  # crt0's _start comes first
    # DROM (0x3C000000) and IROM share the MMU: the constants' 64 KiB pages follow the code's.
    rodata = secs[".rodata"][0]
    drom = irom.origin - 0x06000000
    assert drom <= rodata < drom + irom.length
    assert (rodata - drom) // 0x10000 > (text + text_size - 1 - irom.origin) // 0x10000
    ram = board.memory.ram
    assert ram.origin <= secs[".bss"][0] < ram.end


@pytest.mark.skipif(not fw.have(ARM), reason="arm-none-eabi-gcc is not installed")
@pytest.mark.slow
def test_l4r5zi_build_uses_its_own_console_not_the_f746_defaults(tmp_path):
    board = load_board("st/nucleo-l4r5zi")
    assert "-DAOT_CONSOLE_BASE=0x40008000u" in board_defines(board)
    port_c = RUNTIME / "ports" / "stm32" / "port.c"
    # The addresses the port compiles in for the project's flags.
    macros = subprocess.run([ARM, "-E", "-dM", f"-I{RUNTIME / 'include'}", "-mcpu=cortex-m4",
                             "-mthumb", *board_defines(board), str(port_c)], check=True,
                            capture_output=True, text=True).stdout
    defined = dict(line.split()[1:3] for line in macros.splitlines()
                   if line.startswith("#define AOT_") and len(line.split()) >= 3)
    assert defined["AOT_USART_BASE"] == "0x40008000u"  # LPUART1, not USART3 (0x40004800)
    assert defined["AOT_GPIO_BASE"] == "0x48001800u"  # GPIOG, not GPIOD (0x40020C00)
    assert defined["AOT_RCC_GPIO_EN_REG"] == "0x4002104Cu"  # RCC_AHB2ENR of the L4
    assert defined["AOT_PWR_IOSV_REG"] == "0x40007004u"  # VDDIO2 for port G
    elf = build_for_board(tmp_path, board.tag)
    image = section_bytes(elf, "arm-none-eabi-", ".text", tmp_path)
    words = {struct.unpack_from("<I", image, i)[0] for i in range(0, len(image) - 3, 2)}
    assert 0x40008000 in words  # the linked image loads LPUART1's base
    # A console the port cannot set up is a build error, never the F746's pins.
    for defines in (["-DAOT_BOARD_ST_NUCLEO_L4R5ZI=1", "-DAOT_CONSOLE_BASE=0x40004800u"],
                    ["-DAOT_BOARD_ACME_UNKNOWN=1", "-DAOT_CONSOLE_BASE=0x40008000u"]):
        proc = subprocess.run([ARM, *STRICT, "-mcpu=cortex-m4", "-mthumb", *defines, str(port_c),
                               "-o", str(tmp_path / "bad.o")], capture_output=True, text=True)
        assert proc.returncode == 1 and "#error" in proc.stderr


def test_board_defines_carry_the_records_facts():
    assert board_defines(load_board("host/native")) == []
    assert board_defines(load_board("raspberrypi/pico")) == [
        "-DAOT_BOARD_FACTS=1", "-DAOT_BOARD_RASPBERRYPI_PICO=1", "-DAOT_CONSOLE_BASE=0x40034000u",
        "-DAOT_CONSOLE_BAUD=115200u", "-DAOT_CONSOLE_KIND_PL011=1", "-DAOT_CPU_HZ=125000000u",
        "-DAOT_TIMER_KIND_SYSTICK=1", "-DAOT_BOARD_CORES=2", "-DAOT_CORES_START_RP2040_FIFO=1",
        "-DAOT_CORES_SYSCTL_BASE=0xd0000000u", "-DAOT_CORES_IDENTITY_BASE=0xd0000000u",
        "-DAOT_CORES_STACK_BYTES=8192"]
    # Emulated boards too: the UART, the clock and SysTick's instructions per
    # tick as NUM / DEN for the vernier (31.25 = 125 / 4).
    assert board_defines(load_board("qemu/mps3-an547")) == [
        "-DAOT_BOARD_FACTS=1", "-DAOT_BOARD_QEMU_MPS3_AN547=1", "-DAOT_CONSOLE_BASE=0x59303000u",
        "-DAOT_CONSOLE_BAUD=115200u", "-DAOT_CONSOLE_KIND_CMSDK_UART=1",
        "-DAOT_CPU_HZ=32000000u", "-DAOT_TIMER_KIND_SYSTICK=1", "-DAOT_TICK_INSNS_NUM=125",
        "-DAOT_TICK_INSNS_DEN=4"]
    assert board_defines(load_board("qemu/netduinoplus2"))[-2:] == [
        "-DAOT_CPU_HZ=168000000u", "-DAOT_TIMER_KIND_STM32_TIM2=1"]


def test_a_tick_ratio_the_vernier_cannot_use_is_refused(tmp_path):
    text = (load_board("qemu/mps2-an386").path.read_text()
            .replace("icount_instructions_per_tick = 40", "icount_instructions_per_tick = 41.3"))
    (tmp_path / "qemu").mkdir()
    (tmp_path / "qemu" / "mps2-an386.toml").write_text(text)
    from aot.export import ExportError
    from aot.target import load_board_file
    board = load_board_file(tmp_path / "qemu" / "mps2-an386.toml")
    with pytest.raises(ExportError, match=r"mps2-an386.toml: field "
                       r"'timer.icount_instructions_per_tick' = 41.3 .*power of two"):
        board_defines(board)


@pytest.mark.parametrize("tag", ["nordic/nrf52840dk", "raspberrypi/pico",
                                 "espressif/esp32c3-devkitm"])
@pytest.mark.one_fast
def test_project_for_new_board_builds_end_to_end(tag, tmp_path):
    from aot.compile import compile_model
    from aot.firmware import build_project, create_project

    board = load_board(tag)
    if not fw.have(board.toolchain.tool("gcc")):
        pytest.skip(f"{board.toolchain.tool('gcc')} is not installed")
    compiled = compile_model(MODELS_DIR / "tflm_hello_world_int8.tflite", tag,
                             measure_code=False)
    project = create_project(compiled.write(tmp_path / "a"), tag, tmp_path / "p")
    result = build_project(project, jobs=2)
    assert result.elf.is_file() and result.sizes is not None
    assert result.sizes.flash > 0


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
@pytest.mark.slow
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
@pytest.mark.slow
def test_cmake_snippet_cross_builds_for_mps2(tmp_path):
    build = cmake_build(tmp_path, "mps2", "-DCMAKE_SYSTEM_NAME=Generic",
                        f"-DCMAKE_C_COMPILER={ARM}", f"-DCMAKE_ASM_COMPILER={ARM}",
                        "-DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY",
                        "-DAOT_ARCH_FLAGS=-mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16")
    assert (build / "fixture.elf").is_file()


@pytest.mark.skipif(not fw.have(ARM), reason="arm-none-eabi-gcc is not installed")
@pytest.mark.slow
def test_the_stm32_port_times_with_the_timer_its_record_names(tmp_path):
    """One port, two timers chosen by [timer].kind: CYCCNT on the NUCLEO, TIM2 under QEMU."""
    dwt, tim2 = "0xe0001000", "0x40000000"  # the register blocks (CYCCNT, CNT at offsets)
    for tag, uses, not_uses in [("st/nucleo-f746zg", dwt, tim2),
                                ("qemu/netduinoplus2", tim2, dwt)]:
        elf = build_for_board(tmp_path / tag.replace("/", "_"), tag)
        # Literal-pool words and immediates both show as 0x... in the disassembly.
        text = subprocess.run(["arm-none-eabi-objdump", "-d", str(elf)], check=True,
                              capture_output=True, text=True).stdout.lower()
        # The timer hooks and what they call (the stm32 port also reads CYCCNT
        # for its clock measurement at boot, whatever the timer).
        bodies = {m.group(1): m.group(2) for m in re.finditer(
            r"^[0-9a-f]+ <([\w.]+)>:\n(.*?)(?=\n\n|\Z)", text, re.M | re.S)}
        hooks = ""
        for name in ("aot_port_timer_start", "aot_port_timer_stop"):
            body = bodies[name]
            callees = re.findall(r"\bbl\s+[0-9a-f]+ <([\w.]+)>", body)
            hooks += body + "".join(bodies.get(c, "") for c in callees)
        assert uses in hooks and not_uses not in hooks, tag


@pytest.mark.parametrize("tag, source", [
    ("st/nucleo-f746zg", "cortex-m/dwt.c"), ("qemu/mps2-an386", "cortex-m/icount.c"),
    ("raspberrypi/pico", "rp2040/port.c"), ("qemu/sifive-e", "sifive_e/port.c"),
    ("espressif/esp32c3-devkitm", "esp32c3/port.c")])
def test_a_port_refuses_a_timer_kind_it_does_not_implement(tag, source, tmp_path):
    board = load_board(tag)
    cc = board.toolchain.tool("gcc")
    if not fw.have(cc):
        pytest.skip(f"{cc} is not installed")
    defines = board_defines(board)
    kind = next(d for d in defines if d.startswith("-DAOT_TIMER_KIND_"))
    for flags, ok in [(defines, True),
                      ([d for d in defines if d != kind] + ["-DAOT_TIMER_KIND_OTHER=1"], False)]:
        libc = ["--specs=picolibc.specs"] if board.target.family == "riscv" else []
        proc = subprocess.run([cc, *STRICT, *board.toolchain.cpu_flags, *libc, *flags,
                               str(RUNTIME / "ports" / source), "-o", str(tmp_path / "t.o")],
                              capture_output=True, text=True)
        assert (proc.returncode == 0) == ok, proc.stderr
        assert ok or "names another timer" in proc.stderr
