"""The size split read from a GNU ld map file (an excerpt of a real one, trimmed)."""

from __future__ import annotations

import pytest

from aot.firmware import parse_map
from aot.firmware.sizes import constant_section

MAP = """\
Memory Configuration

Name             Origin             Length             Attributes
FLASH            0x00000000         0x00400000         xr
RAM              0x20000000         0x00400000         xrw

Linker script and memory map

LOAD build/obj/runtime_src_frame.o

.isr_vector     0x00000000       0x40
 *(.isr_vector)
 .isr_vector    0x00000000       0x40 build/obj/runtime_ports_cortex-m_startup.o

.text           0x00000040      0x300
 *(.text .text.*)
 .text.aot_crc32
                0x00000040       0x60 build/obj/runtime_src_frame.o
                0x00000040                aot_crc32
 .text.m_run    0x000000a0      0x100 build/obj/model_codegen_m.o
 .text.m_k0     0x000001a0       0xa0 build/obj/model_codegen_m_kernels_0.o
 .text.m_rpc_run
                0x00000240       0x20 build/obj/model_codegen_m_rpc.o
 .text          0x00000260       0xe0 /usr/lib/libc_nano.a(lib_a-memcpy.o)

.rodata         0x00000340      0x210
 *(.rodata .rodata.*)
 .rodata.m_k0_c0
                0x00000340      0x200 build/obj/model_codegen_m_kernels_0.o
 *fill*         0x00000540        0x4\x20
 .rodata.aot_rpc_model
                0x00000544        0xc build/obj/model_codegen_m_rpc.o

.data           0x20000000        0x8 load address 0x00000550
 .data.counter  0x20000000        0x8 build/obj/runtime_ports_mps2_port.o

.bss            0x20000008      0x128 load address 0x00000558
 .bss.server    0x20000008      0x100 build/obj/runtime_src_rpc_main.o
 .bss.m_workspace
                0x20000108       0x20 build/obj/model_codegen_m.o
 .bss.m_rpc_input_0
                0x20000128        0x8 build/obj/model_codegen_m_rpc.o

.stack          0x20000130     0x2000
                0x20002130                . = (. + 0x2000)

.comment        0x00000000       0x26
 .comment       0x00000000       0x26 build/obj/model_codegen_m.o

.debug_info     0x00000000      0x500
 .debug_info    0x00000000      0x500 build/obj/model_codegen_m_kernels_0.o
"""


def test_split_into_model_code_constants_runtime_workspace_io_stack():
    s = parse_map(MAP, "m", 0x20000000, 0x20400000)
    assert s.model_code == 0x100 + 0xa0
    assert s.constants == 0x200
    # vectors, runtime and libc code, the descriptor, fill, .data's flash image
    assert s.runtime_flash == 0x40 + 0x60 + 0x20 + 0xe0 + 0x4 + 0xc + 0x8
    assert s.workspace == 0x20 and s.io == 0x8 and s.stack == 0x2000
    assert s.runtime_ram == 0x8 + 0x100
    assert s.flash == 0x40 + 0x300 + 0x210 + 0x8  # what `size` calls text + data
    assert s.to_json()["ram"]["total"] == s.ram


def test_not_a_map_file():
    with pytest.raises(ValueError, match="not a GNU ld map file"):
        parse_map("hello\n", "m", 0, 1)


def test_the_compilers_tables_count_as_code_and_the_named_arrays_as_constants():
    """KWS's softmax object carries GCC's 28-byte ``.rodata.barrel.0``: the firmware's
    constants are the arrays the generated C names, the sizes ``aot compile`` prints."""
    text = MAP.replace(
        " *fill*         0x00000540        0x4 \n",
        " .rodata.barrel.0\n                0x00000540        0x4 "
        "build/obj/model_codegen_m_kernels_0.o\n")
    s = parse_map(text, "m", 0x20000000, 0x20400000)
    assert s.constants == 0x200 and s.model_code == 0x100 + 0xa0 + 0x4


@pytest.mark.parametrize("section, constant", [
    (".rodata.m_k0_c0", True), (".data.aot_const.m", True), (".aot_const.m.dtcm", True),
    (".rodata", True), (".rodata.barrel.0", False), (".rodata.str1.4", False),
    (".rodata.cst16", False), (".rodata.mx_table", False)])
def test_which_model_sections_hold_constants(section, constant):
    assert constant_section(section, "m") is constant
