"""Flashable images in the format each board's boot ROM (or boot loader) accepts.

:func:`write_image` runs after ``make`` and turns ``build/firmware.elf`` into
what the board's runner writes, as the board record's ``[image]`` says:

- ``elf``: the ELF itself; openocd and pyocd program it over SWD.
- ``uf2`` (RP2040): ``build/firmware.uf2``, 512-byte blocks of 256-byte
  payloads at 256-byte aligned flash addresses, each tagged with the
  record's family id, which the boot ROM's USB drive (BOOTSEL) writes to
  flash.  The first block carries boot2 (ports/rp2040/boot2.S), whose CRC
  the boot ROM checks before it runs it.
- ``esp`` (ESP32-C3): ``build/firmware.bin``, the ESP app image made by
  esptool's ``elf2image`` with the record's chip, flash mode, frequency and
  size: what an ESP-IDF second-stage boot loader loads from the app
  partition at ``image.offset`` (docs/hardware.md says why this layout).

The loadable bytes come from the ELF's program headers (``PT_LOAD`` with
file bytes, at their physical address: ``.data`` sits in flash there).
"""

from __future__ import annotations

import contextlib
import io
import struct
from pathlib import Path

from aot.errors import BuildError
from flash import FlashImage

UF2_MAGIC_START0 = 0x0A324655  # "UF2\n"
UF2_MAGIC_START1 = 0x9E5D5157
UF2_MAGIC_END = 0x0AB16F30
UF2_FLAG_FAMILY_ID = 0x00002000
UF2_BLOCK = 512
UF2_PAYLOAD = 256  # the RP2040 boot ROM takes 256-byte payloads only

_SUFFIX = {"elf": ".elf", "uf2": ".uf2", "esp": ".bin"}


def image_path(project) -> Path:
    """Where the build puts the project's flashable image."""
    fmt = project.board.image.format
    return project.elf if fmt == "elf" else project.elf.with_suffix(_SUFFIX[fmt])


def built_images(project) -> tuple[FlashImage, ...]:
    """Every file the project's build makes for flashing: the ELF always, and
    the image of the board record's ``[image]`` format beside it (at the
    record's flash offset where the format carries no addresses).  A runner
    takes the one it writes (:meth:`flash.Runner.choose_image`); the files
    need not exist yet (``aot flash --dry-run``)."""
    spec = project.board.image
    images = [FlashImage("elf", project.elf)]
    if spec.format != "elf":
        offset = spec.offset if spec.format == "esp" else None
        images.append(FlashImage(spec.format, image_path(project), offset))
    return tuple(images)


def load_segments(elf: bytes) -> list[tuple[int, bytes]]:
    """``(physical address, bytes)`` of every loadable segment with file bytes.

    Only 32-bit little-endian ELF files (every firmware aot builds).
    """
    if elf[:4] != b"\x7fELF" or elf[4] != 1 or elf[5] != 1:
        raise BuildError("not a 32-bit little-endian ELF file")
    phoff, = struct.unpack_from("<I", elf, 28)
    phentsize, phnum = struct.unpack_from("<HH", elf, 42)
    segments = []
    for i in range(phnum):
        p_type, offset, _vaddr, paddr, filesz = struct.unpack_from(
            "<5I", elf, phoff + i * phentsize)
        if p_type == 1 and filesz:  # PT_LOAD
            segments.append((paddr, elf[offset:offset + filesz]))
    return sorted(segments)


def uf2(segments: list[tuple[int, bytes]], family: int, flash_origin: int,
        flash_end: int) -> bytes:
    """The UF2 file of ``segments``: one block per 256-byte flash page they touch.

    Bytes of a touched page that no segment covers are 0; untouched pages get
    no block.  Every byte must lie in ``[flash_origin, flash_end)``.
    """
    pages: dict[int, bytearray] = {}
    for addr, data in segments:
        if addr < flash_origin or addr + len(data) > flash_end:
            raise BuildError(f"a loadable segment at 0x{addr:08x} ({len(data)} bytes) is outside "
                             f"flash 0x{flash_origin:08x}..0x{flash_end:08x}: a UF2 image "
                             "can only write flash")
        for i, byte in enumerate(data):
            page = (addr + i) & ~(UF2_PAYLOAD - 1)
            pages.setdefault(page, bytearray(UF2_PAYLOAD))[(addr + i) - page] = byte
    out = bytearray()
    for n, page in enumerate(sorted(pages)):
        header = struct.pack("<8I", UF2_MAGIC_START0, UF2_MAGIC_START1, UF2_FLAG_FAMILY_ID,
                             page, UF2_PAYLOAD, n, len(pages), family)
        block = header + pages[page]
        out += block + bytes(UF2_BLOCK - 4 - len(block)) + struct.pack("<I", UF2_MAGIC_END)
    return bytes(out)


def esp_app_image(elf: Path, chip: str, flash_mode: str, flash_freq: str,
                  flash_size: str) -> bytes:
    """The ESP app image of ``elf`` by esptool's elf2image (SHA-256 appended)."""
    try:
        from esptool.cmds import elf2image
    except ImportError:
        raise BuildError("esptool is not installed, so the ESP image cannot be made; "
                         "install it (pip install esptool)") from None
    chatter = io.StringIO()  # esptool reports progress on stdout; the build reports itself
    try:
        with contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
            image = elf2image(str(elf), chip, output=None, flash_mode=flash_mode,
                              flash_freq=flash_freq, flash_size=flash_size)
    except Exception as err:  # esptool raises its FatalError and plain errors alike
        raise BuildError(f"esptool elf2image failed on {elf}: {err}\n"
                         f"{chatter.getvalue().strip()}") from None
    return image


def write_image(project) -> Path:
    """Write the project's flashable image from its built ELF; return its path."""
    board = project.board
    spec = board.image
    path = image_path(project)
    if spec.format == "elf":
        return path
    if spec.format == "uf2":
        flash = board.memory.flash
        data = uf2(load_segments(project.elf.read_bytes()), spec.uf2_family, flash.origin,
                   flash.end)
    else:
        data = esp_app_image(project.elf, spec.esp_chip, spec.flash_mode, spec.flash_freq,
                             spec.flash_size)
    path.write_bytes(data)
    return path
