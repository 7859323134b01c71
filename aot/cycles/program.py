"""The firmware's code as the cost model sees it: basic blocks of decoded instructions.

:class:`Program` reads an ELF file (pyelftools: executable sections and
function symbols) and decodes the translation blocks QEMU reports with
capstone.  A block starts at the address QEMU executed and runs to the first
instruction that ends a QEMU translation block on Arm M-profile: one that
may write the PC (branches, ``POP {pc}``, ``LDR pc``, table branches,
low-overhead loop ends), an exception or wait instruction, the end of QEMU's
1 KiB guest page (a 32-bit instruction that would cross it starts the next
block), or the block's instruction limit (QEMU gives it in the logged
``cflags``).  The trace
reader checks this rule against the trace itself: a block that does not end
in a branch must be followed by the block at its fall-through address.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path

import capstone
from capstone import arm as cs_arm
from elftools.elf.elffile import ELFFile

from aot.cycles.errors import CycleModelError
from aot.cycles.isa import classify

#: QEMU ends a translation block after these, besides writes to the PC.
_ENDS_BLOCK = {"svc", "bkpt", "wfi", "wfe", "udf", "isb", "cpsid", "cpsie", "msr"}
#: QEMU's guest page on Arm M-profile cores: a block never runs past one.
PAGE = 1024
#: Low-overhead loop instructions (Armv8.1-M) that branch without naming the PC
#: (DLS and DLSTP only set the loop count up: QEMU runs on past them).
_LOOP_BRANCHES = {"le", "letp", "wls", "wlstp"}


@dataclass(frozen=True)
class Insn:
    """One decoded instruction with what the timing rules need."""

    address: int
    size: int                      # 2 or 4 bytes
    name: str                      # capstone's instruction name, no condition or width
    text: str                      # disassembly, for reports and errors
    cls: str                       # timing class (aot.cycles.isa)
    reads: frozenset[str]          # registers read
    writes: frozenset[str]         # registers written
    address_regs: frozenset[str]   # base and index registers of a memory operand
    words: int                     # 32-bit words moved by a load/store multiple
    register_offset: bool          # a memory operand with an index register
    target: int | None = None      # where a direct branch goes when taken

    @property
    def writes_pc(self) -> bool:
        return "pc" in self.writes

    @property
    def ends_block(self) -> bool:
        return (self.writes_pc or self.cls.startswith("branch") or self.name in _ENDS_BLOCK
                or self.name in _LOOP_BRANCHES)


@dataclass(frozen=True)
class Block:
    """The instructions QEMU executes from ``address`` in one translation block."""

    address: int
    insns: tuple[Insn, ...]

    @property
    def end(self) -> int:
        """The fall-through address: just after the last instruction."""
        last = self.insns[-1]
        return last.address + last.size


class Program:
    """Executable code and function symbols of one firmware ELF file."""

    def __init__(self, elf: str | Path):
        self.path = Path(elf)
        try:
            with open(self.path, "rb") as f:
                elffile = ELFFile(f)
                if elffile["e_machine"] != "EM_ARM":
                    raise CycleModelError(f"{self.path} is not an Arm ELF file "
                                          f"({elffile['e_machine']}): the cycle models are "
                                          "for Cortex-M code")
                self._code = [(s["sh_addr"], s.data()) for s in elffile.iter_sections()
                              if s["sh_flags"] & 0x4 and s["sh_type"] == "SHT_PROGBITS"]
                symtab = elffile.get_section_by_name(".symtab")
                funcs = [] if symtab is None else [
                    (s["st_value"] & ~1, s["st_size"], s.name) for s in symtab.iter_symbols()
                    if s["st_info"]["type"] == "STT_FUNC" and s.name]
        except OSError as err:
            raise CycleModelError(f"cannot read {self.path}: {err.strerror or err}") from None
        funcs.sort()
        self._starts = [a for a, _, _ in funcs]
        self._funcs = funcs
        self._by_name = {name: a for a, _, name in funcs}
        # V8: Armv8-M and Armv8.1-M (Helium, low-overhead loops) encodings too.
        self._cs = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB
                               | capstone.CS_MODE_MCLASS | capstone.CS_MODE_V8)
        self._cs.detail = True
        self._blocks: dict[tuple[int, int, int | None], Block] = {}

    def address_of(self, name: str) -> int:
        """The (Thumb bit cleared) address of function ``name``."""
        try:
            return self._by_name[name]
        except KeyError:
            raise CycleModelError(f"{self.path} has no function {name!r}") from None

    def extent(self, name: str) -> tuple[int, int]:
        """``(address, size in bytes)`` of function ``name``."""
        address = self.address_of(name)
        for start, size, fn in self._funcs:
            if start == address and fn == name:
                return start, max(size, 2)
        raise CycleModelError(f"{self.path} has no function {name!r}")  # unreachable

    def has_function(self, name: str) -> bool:
        return name in self._by_name

    def function_at(self, address: int) -> str | None:
        """The name of the function whose bytes hold ``address``."""
        i = bisect.bisect_right(self._starts, address) - 1
        if i < 0:
            return None
        start, size, name = self._funcs[i]
        return name if address < start + max(size, 2) else None

    def is_wide(self, address: int) -> bool:
        """Whether the instruction at ``address`` is a 32-bit Thumb instruction."""
        return _is_32bit(self._bytes(address, 2))

    def _bytes(self, address: int, count: int) -> bytes:
        for base, data in self._code:
            if base <= address < base + len(data):
                return data[address - base: address - base + count]
        raise CycleModelError(f"the trace executed 0x{address:08x}, which is not in the code "
                              f"of {self.path}: was the trace taken of another firmware?")

    def block(self, address: int, limit: int = 512, next_address: int | None = None) -> Block:
        """The translation block QEMU runs from ``address`` (at most ``limit`` instructions).

        With ``next_address`` (what ran next), a block whose static end cannot
        lead there (not its fall-through, not its direct branch's target) ends
        where its straight-line code reaches that address instead.
        """
        key = (address, limit, next_address)
        block = self._blocks.get(key)
        if block is None:
            block = self._decode_block(address, limit, None)
            last = block.insns[-1]
            reachable = (next_address is None or next_address == block.end
                         or (last.ends_block and (last.target is None
                                                  or last.target == next_address)))
            if not reachable and address < next_address < block.end:
                block = self._decode_block(address, limit, next_address)
            self._blocks[key] = block
        return block

    def _decode_block(self, address: int, limit: int, next_address: int | None) -> Block:
        insns: list[Insn] = []
        pos = address
        page_end = (address & ~(PAGE - 1)) + PAGE
        while len(insns) < limit and pos < page_end and (not insns or pos != next_address):
            if insns and pos == page_end - 2 and _is_32bit(self._bytes(pos, 2)):
                break  # QEMU starts a new block with an instruction that crosses the page
            code = self._bytes(pos, 4)
            decoded = next(self._cs.disasm(code, pos, 1), None)
            if decoded is None:
                raise CycleModelError(
                    f"cannot decode the instruction at 0x{pos:08x} of {self.path} "
                    f"(bytes {code.hex()}) with capstone {capstone.__version__}; Helium (MVE) "
                    "code needs capstone 6 or later")
            insn = _insn(decoded)
            insns.append(insn)
            pos += insn.size
            if insn.ends_block:
                break
        return Block(address, tuple(insns))


#: Capstone 6 names the special registers by number.
_ALIASES = {"r13": "sp", "r14": "lr", "r15": "pc"}


def _reg(i, reg: int) -> str:
    name = i.reg_name(reg)
    return _ALIASES.get(name, name)


def _is_32bit(halfword: bytes) -> bool:
    """Whether the Thumb instruction starting with ``halfword`` is 32 bits wide."""
    return (halfword[1] >> 3) in (0b11101, 0b11110, 0b11111)


def _insn(i) -> Insn:
    read, written = i.regs_access()
    reads = frozenset(_reg(i, r) for r in read)
    writes = frozenset(_reg(i, r) for r in written)
    address_regs: set[str] = set()
    register_offset = False
    list_regs = 0
    for op in i.operands:
        if op.type == cs_arm.ARM_OP_MEM:
            if op.mem.base:
                address_regs.add(_reg(i, op.mem.base))
            if op.mem.index:
                address_regs.add(_reg(i, op.mem.index))
                register_offset = True
        elif op.type == cs_arm.ARM_OP_REG:
            list_regs += 2 if _reg(i, op.reg).startswith("d") else 1
    name = i.insn_name()
    cls = classify(name, i.op_str)
    target = None
    if cls in ("branch", "branch_call", "branch_loop") and i.operands:
        last = i.operands[-1]
        target = last.imm if last.type == cs_arm.ARM_OP_IMM else None
    words = 0
    if cls in ("ldm", "stm", "vldm", "vstm"):
        # PUSH/POP/VPUSH/VPOP list only registers; LDM/STM/VLDM/VSTM name the base first.
        words = list_regs - (0 if name in ("push", "pop", "vpush", "vpop") else 1)
    return Insn(address=i.address, size=i.size, name=name,
                text=f"{i.mnemonic} {i.op_str}".strip(), cls=cls, reads=reads, writes=writes,
                address_regs=frozenset(address_regs), words=max(words, 1),
                register_offset=register_offset, target=target)
