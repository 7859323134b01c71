"""Flashable images, parsed back from outside: the Pico's UF2 and boot2, the ESP32-C3's app image.

Nothing here ran on a board: the checks are what the boot ROMs (and the
ESP-IDF boot loader) check, computed independently of aot.firmware.images.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import struct
import subprocess
from contextlib import redirect_stdout

import pytest
from support.models import MODELS_DIR

from aot.compile import compile_model
from aot.errors import BuildError
from aot.firmware import build_project, create_project
from aot.firmware.images import image_path, uf2
from aot.target import load_board

HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"
RP2040_FAMILY = 0xE48BFF56
XIP_BASE = 0x10000000


def _built(tag, tmp_path_factory, object_cache):
    board = load_board(tag)
    if shutil.which(board.toolchain.tool("gcc")) is None:
        pytest.skip(f"{board.toolchain.tool('gcc')} is not installed")
    root = tmp_path_factory.mktemp(tag.replace("/", "_"))
    compiled = compile_model(HELLO, tag, name="hello", measure_code=False)
    project = create_project(compiled.write(root / "art"), tag, root / "proj")
    return build_project(project, cache_dir=object_cache, jobs=2)


@pytest.fixture(scope="module")
def pico(tmp_path_factory, object_cache):
    return _built("raspberrypi/pico", tmp_path_factory, object_cache)


@pytest.fixture(scope="module")
def esp32c3(tmp_path_factory, object_cache):
    return _built("espressif/esp32c3-devkitm", tmp_path_factory, object_cache)


def crc32_mpeg2(data: bytes) -> int:
    """CRC-32 as the RP2040 boot ROM checks boot2 (datasheet 2.8.1.3.1): polynomial
    0x04C11DB7 shifted in MSB first, initial value 0xFFFFFFFF, no reflection, no final XOR."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else crc << 1
            crc &= 0xFFFFFFFF
    return crc


def test_the_crc_is_crc32_mpeg2():
    # The catalogue's check value of CRC-32/MPEG-2 over "123456789".
    assert crc32_mpeg2(b"123456789") == 0x0376E6E7


def parse_uf2(data: bytes) -> dict[int, bytes]:
    """Address -> payload, checking every field of every block as the boot ROM reads it."""
    assert len(data) % 512 == 0 and data
    blocks = [data[i:i + 512] for i in range(0, len(data), 512)]
    pages = {}
    for n, block in enumerate(blocks):
        (magic0, magic1, flags, addr, size, block_no, num_blocks,
         family) = struct.unpack_from("<8I", block)
        assert (magic0, magic1) == (0x0A324655, 0x9E5D5157)
        assert struct.unpack_from("<I", block, 508)[0] == 0x0AB16F30
        assert block[:4] == b"UF2\n"
        assert flags == 0x00002000  # familyID present, nothing else
        assert family == RP2040_FAMILY
        assert size == 256 and addr % 256 == 0
        assert (block_no, num_blocks) == (n, len(blocks))
        assert block[32 + 256:508] == bytes(508 - 288)  # unused data bytes are zero
        assert addr not in pages
        pages[addr] = block[32:32 + 256]
    return pages


def flat_binary(elf, objcopy: str, tmp_path) -> bytes:
    """The ELF's load image, by the toolchain's objcopy (not by aot)."""
    out = tmp_path / "flat.bin"
    subprocess.run([objcopy, "-O", "binary", str(elf), str(out)], check=True)
    return out.read_bytes()


@pytest.mark.slow
def test_pico_uf2_blocks_carry_the_whole_image_from_0x10000000(pico, tmp_path):
    board = load_board("raspberrypi/pico")
    assert pico.image == image_path(pico.project) and pico.image.suffix == ".uf2"
    pages = parse_uf2(pico.image.read_bytes())
    assert min(pages) == XIP_BASE
    assert max(pages) + 256 <= board.memory.flash.end
    flat = flat_binary(pico.elf, board.toolchain.tool("objcopy"), tmp_path)
    image = bytearray(max(pages) + 256 - XIP_BASE)
    for addr, payload in pages.items():
        image[addr - XIP_BASE:addr - XIP_BASE + 256] = payload
    assert bytes(image[:len(flat)]) == flat
    assert not any(image[len(flat):])


def test_pico_boot2_has_the_crc_the_boot_rom_checks_and_enters_the_vectors(pico):
    pages = parse_uf2(pico.image.read_bytes())
    boot2 = pages[XIP_BASE]
    assert struct.unpack_from("<I", boot2, 252)[0] == crc32_mpeg2(boot2[:252])
    # XIP set up as the datasheet's SSI registers want it: quad frame format, 32-bit
    # frames, EEPROM-read mode (CTRLR0); no instruction, 24-bit address + mode bits A0h
    # on four lines, 4 dummy clocks (SPI_CTRLR0); `movs r1, #2; str r1, [r3, #0x14]`:
    # BAUDR = 2, SCK = clk_sys / 2.  tests/runtime_c/test_rp2040_boot2.py runs it.
    assert struct.pack("<I", (2 << 21) | (31 << 16) | (3 << 8)) in boot2[:252]
    assert struct.pack("<I", (0xA0 << 24) | (4 << 11) | (8 << 2) | 2) in boot2[:252]
    assert bytes.fromhex("0221 5961") in boot2[:252]
    # The image's vector table at flash + 0x100: stack pointer in RAM, Thumb reset handler.
    vectors = pages[XIP_BASE + 0x100]
    sp, reset = struct.unpack_from("<2I", vectors)
    board = load_board("raspberrypi/pico")
    assert board.memory.ram.origin < sp <= board.memory.ram.end
    assert reset & 1 and XIP_BASE + 0x100 < reset < board.memory.flash.end


def test_uf2_refuses_bytes_outside_flash():
    with pytest.raises(BuildError, match="outside flash"):
        uf2([(0x20000000, b"\1\2")], RP2040_FAMILY, XIP_BASE, XIP_BASE + 0x200000)
    # A partly covered page is padded with zeros, an untouched one gets no block.
    pages = parse_uf2(uf2([(XIP_BASE + 4, b"\xaa"), (XIP_BASE + 0x1000, b"\xbb")],
                          RP2040_FAMILY, XIP_BASE, XIP_BASE + 0x200000))
    assert sorted(pages) == [XIP_BASE, XIP_BASE + 0x1000]
    assert pages[XIP_BASE] == bytes(4) + b"\xaa" + bytes(251)


def _elf_entry_and_sections(elf: bytes) -> tuple[int, dict[int, bytes]]:
    """The entry point and the contents of the allocated PROGBITS sections, read by hand."""
    entry, = struct.unpack_from("<I", elf, 24)
    shoff, = struct.unpack_from("<I", elf, 32)
    shentsize, shnum = struct.unpack_from("<HH", elf, 46)
    found = {}
    for i in range(shnum):
        _name, kind, flags, addr, offset, size = struct.unpack_from(
            "<6I", elf, shoff + i * shentsize)
        if kind == 1 and flags & 2 and size:  # SHT_PROGBITS, SHF_ALLOC
            found[addr] = elf[offset:offset + size]
    return entry, found


@pytest.mark.slow
def test_esp32c3_image_reads_back_with_esptool(esp32c3):
    from esptool.bin_image import LoadFirmwareImage
    from esptool.cmds import image_info
    from esptool.targets import CHIP_DEFS

    board = load_board("espressif/esp32c3-devkitm")
    spec = board.image
    assert esp32c3.image == image_path(esp32c3.project) and esp32c3.image.suffix == ".bin"
    data = esp32c3.image.read_bytes()
    image = LoadFirmwareImage("esp32c3", data)
    rom = CHIP_DEFS["esp32c3"]
    assert image.chip_id == rom.IMAGE_CHIP_ID
    assert image.flash_mode == {"qio": 0, "qout": 1, "dio": 2, "dout": 3}[spec.flash_mode]
    assert image.flash_size_freq == (rom.FLASH_SIZES[spec.flash_size]
                                     | rom.FLASH_FREQUENCY[spec.flash_freq])
    assert image.checksum == image.calculate_checksum()
    assert image.stored_digest == hashlib.sha256(data[:image.data_length]).digest()
    entry, sections = _elf_entry_and_sections(esp32c3.elf.read_bytes())
    assert image.entrypoint == entry
    by_addr = {s.addr: bytes(s.data) for s in image.segments if s.addr}
    for addr, content in sections.items():
        assert by_addr[addr][:len(content)] == content, hex(addr)
    # Flash-mapped segments sit at flash offsets congruent to their addresses modulo the
    # 64 KiB MMU page once the image is written at the record's offset.
    for seg in image.segments:
        if rom.IROM_MAP_START <= seg.addr < rom.IROM_MAP_END or \
                rom.DROM_MAP_START <= seg.addr < rom.DROM_MAP_END:
            assert (spec.offset + seg.file_offs + 8) % 0x10000 == seg.addr % 0x10000
    # The ESP-IDF boot loader reads the app descriptor at the start of the first segment,
    # which must be DROM: magic word, no eFuse revision bounds, 64 KiB MMU pages (2^16).
    first = image.segments[0]
    assert rom.DROM_MAP_START <= first.addr < rom.DROM_MAP_END and first.file_offs == 0x18
    desc = bytes(first.data[:256])
    assert struct.unpack_from("<I", desc)[0] == 0xABCD5432
    assert struct.unpack_from("<HHB", desc, 176) == (0, 0xFFFF, 16)
    report = io.StringIO()
    with redirect_stdout(report):
        image_info(data, chip="esp32c3")
    text = report.getvalue()
    assert "ESP32-C3" in text and "(valid)" in text and "invalid" not in text.lower()
    assert "Project name: aot" in text and "MMU page size: 64 KB" in text
