"""Object files for microcontrollers from the LLVM backend's IR.

Two things live here, each once:

* :func:`cross_machine`: what LLVM is told about a Cortex-M target (the
  triple, the CPU, the features, the float ABI), derived from the target's
  facts (``-mcpu``, ``-mfpu``, ``-mfloat-abi``, ``-mattr``;
  :mod:`aot.target.facts`), the same facts the C path's compiler flags and
  the kernel library's strategies come from;
* :func:`emit_object`: one unit's IR optimised and compiled to an ELF
  object for that machine.

The float ABI.  llvmlite cannot set LLVM's ``FloatABIType``, so LLVM
compiles for the soft-float procedure call standard and marks the object
so; ``ld`` then refuses to link it into ``-mfloat-abi=hard`` firmware.  On a
hard-float target the emitter therefore gives every function that can pass
a float across an object boundary (the kernels' externals, libm) the
``arm_aapcs_vfpcc`` convention (:attr:`CrossMachine.calling_convention`),
calls the libm functions itself where LLVM would otherwise emit a libcall
with the soft convention (``floorf``, ``roundf``: :attr:`CrossMachine.libm_rounding`),
and :func:`mark_hard_float` records ``Tag_ABI_VFP_args`` (VFP registers) in
the object's ``.ARM.attributes``, which is then true.

Arm M-profile cores and 32-bit RISC-V cores with the soft-float ABI
(``ilp32``: rv32i/e with M, A, C) are served; other machines are refused by
name.  On RISC-V nothing needs marking: ``ilp32`` is LLVM's default ABI for
a core without F/D, which gives the object the e_flags GCC's ``-mabi=ilp32``
objects have (no float ABI bits, RVC when C is there), and ``ld`` merges the
``.riscv.attributes`` of both compilers.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import llvmlite.binding as llvm

from aot.codegen import llvm_helpers
from aot.errors import BuildError

#: The FPUs of the Arm cores aot knows (-mfpu, GCC's names) as LLVM features.
_FPU_FEATURES = {
    "fpv4-sp-d16": ("+vfp4d16sp",),
    "fpv5-sp-d16": ("+fp-armv8d16sp",),
    "fpv5-d16": ("+fp-armv8d16",),
    "fp-armv8-fullfp16-d16": ("+fp-armv8d16", "+fullfp16"),
}


@dataclass(frozen=True)
class CrossMachine:
    """LLVM's view of a microcontroller target: ``triple``, ``cpu`` and
    ``features`` for its target machine, and how functions pass floats."""

    triple: str
    cpu: str
    features: tuple[str, ...]
    hard_float: bool

    @property
    def calling_convention(self) -> str:
        """The convention of functions that may pass floats (AAPCS-VFP on hard float)."""
        return "arm_aapcs_vfpcc" if self.hard_float else ""

    @property
    def libm_rounding(self) -> bool:
        """Whether ``floor``/``round`` are calls of libm's ``floorf``/``roundf``
        made by the emitter (with the right convention) rather than LLVM intrinsics
        that a core without VRINT would turn into soft-float libcalls."""
        return self.hard_float

    def describe(self) -> str:
        return f"{self.triple} -mcpu={self.cpu} {','.join(self.features)}"


def cross_machine(target) -> CrossMachine:
    """The :class:`CrossMachine` of an ``llvm`` target for an Arm M-profile core
    (``llvm -mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16``) or a 32-bit
    RISC-V core without FPU (``llvm -march=rv32imac -mabi=ilp32``), or a
    :class:`BuildError` naming what is not supported yet."""
    facts = target.facts
    if facts.family == "riscv" and (facts.isa or "").startswith(("rv32i", "rv32e")):
        return _riscv_machine(target)
    if facts.family != "arm" or not (facts.isa or "").startswith("thumbv"):
        raise BuildError(
            f"not supported yet: llvm objects for {facts.isa or 'an unknown processor'} "
            f"({str(target)!r}); the llvm codegen makes objects for Arm Cortex-M cores "
            "(-mcpu=cortex-m4, cortex-m55...) and 32-bit RISC-V cores without FPU "
            "(-march=rv32imac -mabi=ilp32). Use the 'c' target for this processor")
    if target.attrs.get("mabi"):
        raise BuildError(f"-mabi={target.attrs['mabi']} is a RISC-V option; the Arm float "
                         "ABI is -mfloat-abi")
    cpu = (target.attrs.get("mcpu") or "").split("+", 1)[0].lower()
    features = ["+thumb-mode", "+dsp" if facts.has_dsp else "-dsp"]
    if facts.has_mve:
        features.append("+mve.fp" if facts.fpu is not None else "+mve")
    elif facts.isa.startswith("thumbv8.1m"):
        features += ["-mve", "-mve.fp"]
    if facts.fpu is None:
        features.append("-fpregs")
    else:
        try:
            features += _FPU_FEATURES[facts.fpu]
        except KeyError:
            raise BuildError(f"not supported yet by the llvm codegen: -mfpu={facts.fpu} "
                             f"(known: {', '.join(_FPU_FEATURES)}, none)") from None
    features += [f for f in target.attrs.get("mattr") or () if f not in features]
    return CrossMachine(facts.triple, cpu, tuple(features), facts.float_abi == "hard")


#: RISC-V extensions (letters of -march after rv32i/e) LLVM is told about.
_RISCV_EXTENSIONS = "mac"


def _riscv_machine(target) -> CrossMachine:
    """A 32-bit RISC-V core: its base and standard extensions from ``-march``,
    linker relaxation on (as GCC's objects), the ``ilp32``/``ilp32e`` ABI.

    llvmlite cannot set LLVM's ABI name, so only the ABI LLVM picks by itself
    for a core without F/D is served; ``-mabi`` must say that one."""
    facts = target.facts
    isa = facts.isa
    letters = isa[5:]
    unknown = sorted(set(letters) - set(_RISCV_EXTENSIONS))
    if facts.fpu is not None or unknown:
        raise BuildError(
            f"not supported yet: llvm objects for {isa} ({str(target)!r}): the llvm codegen "
            f"serves the RISC-V extensions {', '.join(_RISCV_EXTENSIONS.upper())} and the "
            "soft-float ABI (llvmlite cannot set LLVM's float ABI); use the 'c' target for "
            "this processor")
    abi = "ilp32e" if isa.startswith("rv32e") else "ilp32"
    mabi = target.attrs.get("mabi")
    if mabi not in (None, abi):
        raise BuildError(f"not supported yet by the llvm codegen: -mabi={mabi} for {isa} "
                         f"(it makes {abi} objects)")
    features = ["+e"] if isa.startswith("rv32e") else []
    features += [f"+{x}" if x in letters else f"-{x}" for x in _RISCV_EXTENSIONS]
    features.append("+relax")
    features += [f for f in target.attrs.get("mattr") or () if f not in features]
    return CrossMachine(facts.triple, "generic-rv32", tuple(features), False)


def target_machine(machine: CrossMachine, opt: int):
    """An LLVM target machine for ``machine``: static relocation, small code model."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    try:
        t = llvm.Target.from_triple(machine.triple)
    except RuntimeError as err:
        raise BuildError(f"LLVM has no target for {machine.triple}: {err}") from None
    return t.create_target_machine(cpu=machine.cpu, features=",".join(machine.features),
                                   opt=opt, reloc="static", codemodel="small")


def emit_object(text: str, machine: CrossMachine, opt: int, *, rename=None,
                helpers: str | None = None) -> bytes:
    """The IR ``text`` of one unit optimised at ``opt`` and compiled to an ELF
    object for ``machine``, with the support headers' helpers it calls from
    the bitcode variant ``helpers`` (:mod:`aot.codegen.llvm_helpers`) linked
    in; ``rename`` maps other functions it calls to the symbols that define
    them.  LLVM's own failures propagate as ``RuntimeError`` (the caller
    names the kernel and keeps the IR)."""
    tm = target_machine(machine, opt)
    mod = llvm.parse_assembly(text)
    if helpers is not None:
        defined = llvm_helpers.helper_types(helpers)
        if any(f.is_declaration and f.name in defined for f in mod.functions):
            mod.link_in(llvm.parse_assembly(llvm_helpers.helper_ir(helpers)))
    mod.triple = machine.triple
    mod.data_layout = str(tm.target_data)
    for old, new in (rename or {}).items():
        fn = next((f for f in mod.functions if f.name == old), None)
        if fn is not None:
            fn.name = new
    pto = llvm.create_pipeline_tuning_options(speed_level=opt)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    obj = tm.emit_object(mod)
    if machine.triple.startswith("thumb"):
        obj = rename_undefined(obj, RTABI_NAMES)
    return mark_hard_float(obj) if machine.hard_float else obj


def text_bytes(obj: bytes) -> int:
    """Bytes of machine code (``.text*`` sections) of an object."""
    ref = llvm.ObjectFileRef.from_data(obj)
    return sum(s.size() for s in ref.sections() if s.is_text())


# -- Run-time helper names --------------------------------------------------------------
#: LLVM's names of the soft-float helpers -> the Arm run-time ABI's (RTABI) names of the
#: same functions (same arguments, same results).  LLVM (as llvmlite drives it) calls the
#: GNU names, which libgcc defines beside the RTABI ones on Armv7-M but not on Armv6-M
#: (whose libgcc has only ``__aeabi_fmul``...); gcc calls the RTABI names on every core.
#: The GNU comparisons (``__eqsf2``...) return other values than the RTABI ones, exist in
#: every libgcc and are kept.
RTABI_NAMES = {
    "__addsf3": "__aeabi_fadd", "__subsf3": "__aeabi_fsub", "__mulsf3": "__aeabi_fmul",
    "__divsf3": "__aeabi_fdiv", "__fixsfsi": "__aeabi_f2iz", "__fixunssfsi": "__aeabi_f2uiz",
    "__floatsisf": "__aeabi_i2f", "__floatunsisf": "__aeabi_ui2f",
    "__unordsf2": "__aeabi_fcmpun",
    "__adddf3": "__aeabi_dadd", "__subdf3": "__aeabi_dsub", "__muldf3": "__aeabi_dmul",
    "__divdf3": "__aeabi_ddiv", "__fixdfsi": "__aeabi_d2iz", "__fixunsdfsi": "__aeabi_d2uiz",
    "__floatsidf": "__aeabi_i2d", "__floatunsidf": "__aeabi_ui2d",
    "__extendsfdf2": "__aeabi_f2d", "__truncdfsf2": "__aeabi_d2f",
    "__unorddf2": "__aeabi_dcmpun",
}

_SHT_SYMTAB = 2


def rename_undefined(obj: bytes, names: dict[str, str]) -> bytes:
    """``obj`` (a little-endian ELF32 object) with its undefined symbols named
    as ``names`` says.

    Relocations refer to symbols by index, so renaming a symbol is pointing
    its ``st_name`` at a new string: the new names are appended to a copy of
    the string table written at the end of the file (as :func:`mark_hard_float`
    writes its section), so nothing else moves."""
    if obj[:6] != b"\x7fELF\x01\x01":
        raise BuildError("rename_undefined: not a little-endian ELF32 object")
    shoff, = struct.unpack_from("<I", obj, 0x20)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x2E)
    headers = [shoff + i * shentsize for i in range(shnum)]
    symtab = next((h for h in headers if struct.unpack_from("<I", obj, h + 4)[0] == _SHT_SYMTAB),
                  None)
    if symtab is None:
        return obj
    sym_off, sym_size, link = struct.unpack_from("<III", obj, symtab + 16)
    strtab = headers[link]
    str_off, str_size = struct.unpack_from("<II", obj, strtab + 16)
    strings = bytearray(obj[str_off:str_off + str_size])
    out = bytearray(obj)
    renamed = False
    for sym in range(sym_off, sym_off + sym_size, 16):
        st_name, = struct.unpack_from("<I", obj, sym)
        st_shndx, = struct.unpack_from("<H", obj, sym + 14)
        if st_shndx != 0 or st_name == 0:
            continue
        name = obj[str_off + st_name:obj.index(0, str_off + st_name)].decode()
        if name in names:
            struct.pack_into("<I", out, sym, len(strings))
            strings += names[name].encode() + b"\0"
            renamed = True
    if not renamed:
        return obj
    struct.pack_into("<II", out, strtab + 16, len(out), len(strings))
    return bytes(out + strings)


# -- .ARM.attributes -------------------------------------------------------------------
_SHT_ARM_ATTRIBUTES = 0x70000003
_TAG_FILE = 1
_TAG_ABI_VFP_ARGS = 28  # value 1: arguments in VFP registers (AAPCS-VFP)


def mark_hard_float(obj: bytes) -> bytes:
    """``obj`` (a little-endian ELF32 object) with ``Tag_ABI_VFP_args`` = VFP
    registers added to the ``aeabi`` file attributes.

    The new attributes section is written at the end of the file and its
    header pointed there (a relocatable object does not need its sections
    in order), so nothing else moves.
    """
    if obj[:6] != b"\x7fELF\x01\x01":
        raise BuildError("mark_hard_float: not a little-endian ELF32 object")
    shoff, = struct.unpack_from("<I", obj, 0x20)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x2E)
    for i in range(shnum):
        header = shoff + i * shentsize
        sh_type, = struct.unpack_from("<I", obj, header + 4)
        if sh_type != _SHT_ARM_ATTRIBUTES:
            continue
        offset, size = struct.unpack_from("<II", obj, header + 16)
        section = _with_vfp_args(obj[offset:offset + size])
        out = bytearray(obj)
        struct.pack_into("<II", out, header + 16, len(out), len(section))
        return bytes(out + section)
    raise BuildError("the object has no .ARM.attributes section to mark as hard-float")


def _with_vfp_args(section: bytes) -> bytes:
    """The attributes section with Tag_ABI_VFP_args=1 appended to aeabi's File
    attributes (lengths updated; an existing value is left as it is)."""
    if section[:1] != b"A":
        raise BuildError("unknown .ARM.attributes format version")
    out, pos = bytearray(b"A"), 1
    while pos < len(section):
        length, = struct.unpack_from("<I", section, pos)
        sub = bytearray(section[pos:pos + length])
        pos += length
        vendor_end = sub.index(0, 4) + 1
        if bytes(sub[4:vendor_end - 1]) == b"aeabi" and sub[vendor_end] == _TAG_FILE:
            file_len, = struct.unpack_from("<I", sub, vendor_end + 1)
            body = sub[vendor_end + 5:vendor_end + file_len]
            if not _has_tag(body, _TAG_ABI_VFP_ARGS):
                insert = vendor_end + file_len
                sub[insert:insert] = bytes([_TAG_ABI_VFP_ARGS, 1])
                struct.pack_into("<I", sub, vendor_end + 1, file_len + 2)
                struct.pack_into("<I", sub, 0, len(sub))
        out += sub
    return bytes(out)


def _has_tag(body: bytes, wanted: int) -> bool:
    """Whether the aeabi attribute list ``body`` sets ``wanted`` (tags and
    values are ULEB128; odd tags above 32 and tags 4, 5, 67 are strings)."""
    pos = 0
    while pos < len(body):
        tag, pos = _uleb(body, pos)
        if tag == wanted:
            return True
        if tag in (4, 5, 67) or (tag > 32 and tag % 2):
            pos = body.index(0, pos) + 1
        else:
            _, pos = _uleb(body, pos)
    return False


def _uleb(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos
