"""The addresses a traced run fetches and reads: a QEMU plugin's log, placed by ELF section.

QEMU's ``-d exec`` log names the blocks executed but no data address.  The
plugin ``plugin/memtrace.c`` (built here with the host's C compiler; Debian's
QEMU 7.2 loads it with ``-plugin``) records every executed block and every
load and store, in order, inside the measured window (from the run
function's first block to the timer's stop function).

The emulated machine's memory map is not the real board's (the MPS2's code
sits at 0x0, the L4R5's flash at 0x08000000), so an address is placed by
what it is, not where it is: inside a read-only allocated section of the
firmware (code, ``.rodata``, the model's weights) it is flash; inside a
writable one (``.data``, ``.bss``, the workspace), or in the trace board's
RAM (the stack), SRAM; a section named after the board's TCM pool
(``.dtcm*``) is TCM.  Anything else is an error naming the address and the
kernel.  Instruction fetches are the flash reads a block needs: each
``width_bytes`` line it spans, in order (code placed in RAM is SRAM).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from aot.cycles.errors import CycleModelError
from aot.cycles.memory import FETCH, FLASH, MEMORIES, SRAM, TCM, Accesses, MemorySystem

#: The host C compiler that builds the plugin.
HOST_CC = "gcc"


def build_plugin(source: str, workdir: Path) -> Path:
    """The QEMU plugin ``plugin/SOURCE`` built into ``workdir`` (a shared library named by
    its source's hash, so a changed source is rebuilt)."""
    text = resources.files("aot.cycles").joinpath(f"plugin/{source}").read_bytes()
    stem = source.removesuffix(".c")
    lib = Path(workdir) / f"{stem}-{hashlib.sha256(text).hexdigest()[:12]}.so"
    if lib.exists():
        return lib
    if shutil.which(HOST_CC) is None:
        raise CycleModelError(f"the QEMU plugin {source} needs a host C compiler ({HOST_CC}); "
                              "install it (apt-get install gcc)")
    src = lib.with_suffix(".c")
    src.write_bytes(text)
    done = subprocess.run([HOST_CC, "-shared", "-fPIC", "-O2", "-o", str(lib), str(src)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise CycleModelError(f"building the QEMU plugin {source} failed: "
                              f"{done.stderr.strip()[-400:]}")
    return lib


def plugin_library(workdir: Path) -> Path:
    """The memory trace plugin built into ``workdir``."""
    return build_plugin("memtrace.c", workdir)


def plugin_args(library: Path, out: Path, start: int | Sequence[int],
                stop: int) -> tuple[str, ...]:
    """QEMU options loading the plugin for the windows ``[start, stop]``: ``start``
    one address, or several (a window opens at any of them: the candidates of a
    tuning image, :mod:`aot.cycles.calls`)."""
    starts = [start] if isinstance(start, int) else sorted(set(start))
    opens = "".join(f",start=0x{a:x}" for a in starts)
    return ("-plugin", f"{library},out={out}{opens},stop=0x{stop:x}")


@dataclass(frozen=True)
class Placement:
    """Address ranges of one firmware, sorted, with the memory each stands for."""

    starts: np.ndarray
    ends: np.ndarray
    memory: np.ndarray
    names: tuple[str, ...]

    @classmethod
    def of(cls, elf, ram: tuple[int, int], tcm_region: str | None) -> Placement:
        """``ram``: (origin, length) of the trace board's RAM, where the stack lives."""
        spans = []
        with open(elf, "rb") as f:
            for s in ELFFile(f).iter_sections():
                if not s["sh_flags"] & SH_FLAGS.SHF_ALLOC or not s["sh_size"]:
                    continue
                writable = bool(s["sh_flags"] & SH_FLAGS.SHF_WRITE)
                if tcm_region and s.name.lstrip(".").startswith(tcm_region):
                    mem = TCM
                elif writable:  # .data, .bss, code copied to RAM
                    mem = SRAM
                else:
                    mem = FLASH
                spans.append((s["sh_addr"], s["sh_addr"] + s["sh_size"], mem, s.name))
        spans.sort()
        # the rest of the trace board's RAM (stack, heap): SRAM, behind the sections
        spans.append((ram[0], ram[0] + ram[1], SRAM, "RAM (stack)"))
        starts = np.array([s[0] for s in spans], dtype=np.int64)
        order = np.argsort(starts, kind="stable")
        spans = [spans[i] for i in order]
        return cls(np.array([s[0] for s in spans], dtype=np.int64),
                   np.array([s[1] for s in spans], dtype=np.int64),
                   np.array([s[2] for s in spans], dtype=np.int8),
                   tuple(s[3] for s in spans))

    def place(self, address: np.ndarray) -> np.ndarray:
        """The memory of each address; -1 where none holds it.  A section inside the
        RAM span (``.bss``) wins over the span: the last start at or below wins,
        and the RAM span is checked where no section holds the address."""
        idx = np.searchsorted(self.starts, address, side="right") - 1
        ok = idx >= 0
        out = np.full(address.shape, -1, dtype=np.int8)
        inside = ok & (address < self.ends[np.clip(idx, 0, None)])
        out[inside] = self.memory[idx[inside]]
        ram = [k for k, n in enumerate(self.names) if n == "RAM (stack)"][0]
        rest = (out < 0) & (address >= self.starts[ram]) & (address < self.ends[ram])
        out[rest] = SRAM
        return out


def read_log(path: Path) -> np.ndarray:
    """The plugin's records as an (n, 2) array of uint32."""
    raw = np.fromfile(path, dtype="<u4")
    if raw.size % 2:
        raw = raw[:-1]  # QEMU stopped mid-record: the window is incomplete anyway
    return raw.reshape(-1, 2)


def accesses(records: np.ndarray, rows: np.ndarray, placement: Placement,
             memory: MemorySystem, row_names: list[str]) -> list[tuple[int, Accesses]]:
    """Split the records into ``(row, Accesses)`` chunks in execution order.

    ``rows`` gives the row (kernel) index of each block record; a data record
    belongs to the block before it.  Fetches become one access per flash
    line of ``memory.flash_width`` bytes the block spans."""
    tag = records[:, 1] & 3
    is_block = tag == 0
    if not len(records):
        return []
    if not is_block[0]:
        raise CycleModelError("the memory trace does not start with a block record")
    block_index = np.cumsum(is_block) - 1
    row_of = rows[block_index]
    addr = records[:, 0].astype(np.int64)
    shift = memory.flash_width.bit_length() - 1
    size = (records[:, 1] >> 2).astype(np.int64)
    first_line = addr >> shift
    last_line = (addr + np.maximum(size, 1) - 1) >> shift
    count = np.where(is_block, last_line - first_line + 1, 1)
    rep = np.repeat(np.arange(len(records)), count)
    offset = np.arange(len(rep)) - np.repeat(np.cumsum(count) - count, count)
    ev_block = is_block[rep]
    ev_addr = np.where(ev_block, (first_line[rep] + offset) << shift, addr[rep])
    ev_kind = np.where(ev_block, FETCH, tag[rep]).astype(np.int8)
    where = placement.place(addr)
    bad = np.flatnonzero(where < 0)
    if bad.size:
        k = int(bad[0])
        raise CycleModelError(
            f"the trace {'executes' if is_block[k] else 'accesses'} 0x{int(addr[k]):08x} in "
            f"{row_names[int(row_of[k])]}, outside every section of the firmware and the "
            f"trace board's RAM: no memory of {memory.board} is known for it")
    ev_mem = where[rep]
    ev_row = row_of[rep]
    cuts = np.flatnonzero(np.diff(ev_row)) + 1
    bounds = [0, *cuts.tolist(), len(ev_row)]
    return [(int(ev_row[a]), Accesses(ev_kind[a:b], ev_mem[a:b], ev_addr[a:b]))
            for a, b in zip(bounds, bounds[1:])]


__all__ = ["MEMORIES", "Placement", "accesses", "plugin_args", "plugin_library", "read_log"]
