"""Flash and RAM use of firmware, split into model code, constants and runtime.

The split comes from the GNU ld map file (``-Wl,-Map``), which names the
object file of every input section that survived ``--gc-sections``:

* flash: ``model_code`` (``.text*`` of the model's objects, with the
  tables the compiler made for that code: jump tables, string literals),
  ``constants`` (the constant arrays the generated C defines: the same
  bytes ``aot compile`` reports as constants, :func:`constant_section`),
  ``runtime`` (the rest: the runtime, the RPC descriptor, the C library,
  vectors, alignment fill, initial values of ``.data``);
* RAM: ``workspace`` (the model's own RAM: planned workspace and state),
  ``io`` (the RPC descriptor's input and output buffers), ``stack`` (the
  reserved ``.stack`` section), ``runtime`` (everything else).

Model objects are recognized by the name ``runtime.mk`` gives them
(``model_codegen_<file>.o``; an external codegen's library, compiled from
its absolute path, ``_<path>.o``), prebuilt ones (the kernels of the ``llvm``
codegen) by their path in the project (``model/codegen/``); the descriptor
is ``<name>_rpc.o``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_OUTPUT = re.compile(r"^(\.\S+)(?:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)(.*))?$")
_INPUT = re.compile(r"^ (\S+)(?:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s*(.*))?$")
_CONTINUED = re.compile(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s*(.*)$")
_ZEROED = (".bss", ".sbss", ".tbss", ".stack", ".noinit", ".heap")
# Sections that take no memory on the device (debug info, build attributes).
_NOT_LOADED = (".debug", ".comment", ".ARM.attributes", ".riscv.attributes",
               ".gnu.attributes", ".stab", ".note")


@dataclass(frozen=True)
class FirmwareSizes:
    """Bytes of flash and RAM by part (see the module docstring)."""

    model_code: int
    constants: int
    runtime_flash: int
    workspace: int
    io: int
    stack: int
    runtime_ram: int

    @property
    def flash(self) -> int:
        return self.model_code + self.constants + self.runtime_flash

    @property
    def ram(self) -> int:
        return self.workspace + self.io + self.stack + self.runtime_ram

    def to_json(self) -> dict:
        return {"flash": {"total": self.flash, "model_code": self.model_code,
                          "constants": self.constants, "runtime": self.runtime_flash},
                "ram": {"total": self.ram, "workspace": self.workspace, "io": self.io,
                        "stack": self.stack, "runtime": self.runtime_ram}}

    def __str__(self) -> str:
        return (f"flash {self.flash} bytes (model code {self.model_code}, constants "
                f"{self.constants}, runtime {self.runtime_flash}); RAM {self.ram} bytes "
                f"(workspace {self.workspace}, i/o {self.io}, stack {self.stack}, "
                f"runtime {self.runtime_ram})")


def constant_section(section: str, name: str) -> bool:
    """Whether a non-code input section of a model object holds the model's
    constants: the arrays the generated C of model ``name`` defines
    (``.rodata.<name>_k0_c0``, and the ones copied to RAM at start-up,
    ``.data.aot_const.<name>`` and ``.aot_const.<name>.<region>``), or a
    section named after no symbol (``.rodata``: built without
    ``-fdata-sections``, the constants cannot be told from the compiler's
    tables).  Other named sections are the compiler's own data for the code
    (GCC's ``.rodata.barrel.0`` of a shift table, ``.rodata.str1.4``
    literals, ``.rodata.cst16`` pools) and count as model code."""
    kind, _, symbol = section.lstrip(".").partition(".")
    if kind == "aot_const" or symbol.startswith("aot_const.") or not symbol:
        return True
    return symbol.startswith(f"{name}_")


def _owner(obj: str, name: str) -> str:
    path = obj.split("(")[0]
    base = Path(path).name
    if base.startswith("model_codegen_"):
        return "io" if base == f"model_codegen_{name}_rpc.o" else "model"
    if path.startswith("model/codegen/"):  # prebuilt objects (kernels from LLVM)
        return "model"
    if base.startswith("_"):
        # runtime.mk names an object after its source's path with "/" as "_": only the
        # libraries of external codegens (-libs) are compiled from absolute paths.
        return "model"
    return "runtime"


def parse_map(text: str, name: str, ram_origin: int, ram_end: int) -> FirmwareSizes:
    """Sizes from a GNU ld map file of firmware whose model prefix is ``name``.

    ``ram_origin``/``ram_end`` tell RAM from flash addresses; an output
    section with a load address (``.data``) counts in both.
    """
    totals = dict.fromkeys(("model_code", "constants", "runtime_flash", "workspace", "io",
                            "stack", "runtime_ram"), 0)
    lines = text.split("\n")
    try:
        start = next(i for i, line in enumerate(lines)
                     if line.startswith("Linker script and memory map"))
    except StopIteration:
        raise ValueError("not a GNU ld map file (no memory map section)") from None
    section, in_ram, loaded = None, False, False
    pending = None

    def add(sec_name: str, size: int, obj: str) -> None:
        if size == 0 or section in (None, ".stack"):
            return
        owner = _owner(obj, name)
        if in_ram:
            key = {"model": "workspace", "io": "io"}.get(owner, "runtime_ram")
            totals[key] += size
        if not in_ram or loaded:
            if owner == "model":
                code = (sec_name.startswith((".text", ".aot_ram_text"))
                        or not constant_section(sec_name, name))
                totals["model_code" if code else "constants"] += size
            else:
                totals["runtime_flash"] += size

    for i, line in enumerate(lines[start + 1:], start + 1):
        if not line.strip():
            continue
        if line[0] not in " \t":
            m = _OUTPUT.match(line)
            pending = None
            if m is None:
                section = None
                continue
            section = None if m.group(1).startswith(_NOT_LOADED) else m.group(1)
            addr, size, rest = m.group(2), m.group(3), m.group(4) or ""
            if addr is None and i + 1 < len(lines):
                cont = _CONTINUED.match(lines[i + 1])
                if cont:
                    addr, size, rest = cont.groups()
            if section == ".stack" and size is not None:
                # Reserved by the linker script: no input sections inside.
                totals["stack"] += int(size, 16)
            in_ram = addr is not None and ram_origin <= int(addr, 16) < ram_end
            # ld prints a load address for NOLOAD sections too: only initialized
            # data has an image in flash.
            loaded = (section is not None and "load address" in rest
                      and not section.startswith(_ZEROED))
            continue
        if pending is not None:
            cont = _CONTINUED.match(line)
            if cont:
                add(pending, int(cont.group(2), 16), cont.group(3))
            pending = None
            continue
        m = _INPUT.match(line)
        if m is None or m.group(1).startswith("*("):
            continue
        if m.group(2) is None:
            pending = m.group(1)
        elif m.group(1) == "*fill*":
            add(".fill", int(m.group(3), 16), "")
        else:
            add(m.group(1), int(m.group(3), 16), m.group(4))
    return FirmwareSizes(**totals)


def read_sizes(map_file: Path, name: str, ram_origin: int, ram_length: int) -> FirmwareSizes:
    """:func:`parse_map` of a map file on disk."""
    return parse_map(Path(map_file).read_text(errors="replace"), name, ram_origin,
                     ram_origin + ram_length)
