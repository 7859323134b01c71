"""The support headers' C helpers as LLVM bitcode: one source, two printers.

The kernels call ``static inline`` C helpers of the support headers
(``aot/kernels/include/`` and ``aot/kernels/<op>/include/``: the fixed-point
arithmetic, the int8 dot-product rows, softmax's exp and reciprocal).  The
C printer's kernels include those headers; the LLVM printer's kernels call
the same functions, and here they come from the same headers compiled to
LLVM bitcode by clang when the package is built
(:func:`aot.kernels.bitcode.build`, run by ``python -m aot.kernels.bitcode``),
shipped as package data (``aot/codegen/bitcode/<variant>.bc``).  At run
time no C compiler is needed: :func:`helper_ir` reads the bitcode with
llvmlite's LLVM (bitcode is read by every later LLVM, so the shipped files
outlive a clang or llvmlite upgrade), and the JIT
(:mod:`aot.codegen.llvm_jit`) and the objects
(:func:`aot.codegen.llvm_object.emit_object`) link it into the kernels'
module, where LLVM inlines the helpers and specialises them for the
constants of each call as gcc does in the C path (objects for DSP and
Helium cores keep gcc's row helpers: :func:`gcc_rows`).

Why bitcode rather than helpers written twice or in loop IR: the headers
are the C path's real code (portable, DSP and Helium paths picked by the
preprocessor), 4,500 lines whose bit-exactness with TFLM is tested through
the C path; a second source had to be kept equal by tests (nine
fixed-point helpers and the depthwise row were IR twins before).  See
docs/codegen.md.

``manifest.json`` records a digest of the headers and of the build
recipe; :func:`aot.kernels.bitcode.stale` compares it with the headers in
the tree, and a test fails when a header changed without the bitcode being
rebuilt.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources

from aot.errors import BuildError


@dataclass(frozen=True)
class Variant:
    """One bitcode file: the clang ``triple`` and extra ``flags`` it is built
    with (the preprocessor of that core picks the headers' paths)."""

    name: str
    triple: str
    flags: tuple[str, ...] = ()


#: The bitcode files shipped, by name.  The host JIT takes the one of this
#: machine's architecture (:func:`host_variant`), objects for a microcontroller
#: the one whose preprocessor paths its core takes (:func:`variant_of`): the
#: headers choose between portable C, the DSP extension's and Helium's code
#: (aot_kernel_target.h), so one Cortex-M core of each kind stands for all.
VARIANTS = {v.name: v for v in (
    Variant("x86_64", "x86_64-unknown-linux-gnu"),
    Variant("aarch64", "aarch64-unknown-linux-gnu"),
    Variant("arm", "thumbv6m-none-eabi", ("-mcpu=cortex-m0",)),
    Variant("arm-dsp", "thumbv7em-none-eabi", ("-mcpu=cortex-m4", "-mfloat-abi=soft")),
    # Helium needs the FP registers, so the hard-float ABI (no helper passes floats)
    Variant("arm-mve", "thumbv8.1m.main-none-eabihf", ("-mcpu=cortex-m55",
                                                       "-mfloat-abi=hard")),
    Variant("rv32", "riscv32-unknown-elf", ("-march=rv32imac", "-mabi=ilp32")),
)}

#: Where the bitcode is shipped (package data of aot.codegen), and its manifest.
FOLDER = "bitcode"
MANIFEST = "manifest.json"


def shipped(name: str):
    """The shipped file ``name`` of the bitcode folder (an importlib resource)."""
    return resources.files("aot.codegen").joinpath(FOLDER, name)


def host_variant() -> str:
    """The variant of this machine's architecture."""
    import llvmlite.binding as llvm
    arch = llvm.get_process_triple().split("-", 1)[0]
    if arch in ("arm64", "aarch64"):
        arch = "aarch64"
    if arch not in VARIANTS:
        raise BuildError(f"the llvm JIT has no helper bitcode for this machine ({arch}); "
                         f"it ships {', '.join(VARIANTS)}: use the 'c' target")
    return arch


def gcc_rows(variant: str) -> bool:
    """Whether objects for ``variant`` call the headers' row helpers (the
    ``AOT_INLINE`` ones: dot-product rows, fused epilogues, whole stateful
    kernels) through wrappers the board's gcc compiles, rather than from the
    bitcode.  On the DSP and Helium cores the headers' rows are hand-scheduled
    inline assembly under gcc, which llvmlite cannot assemble; their C forms
    compiled by LLVM measured 1.27x (AD) and 1.50x (KWS) the instructions on
    the Cortex-M4 (docs/codegen.md).  The small fixed-point helpers
    (``static inline``) come from the bitcode everywhere."""
    return variant in ("arm-dsp", "arm-mve")


@functools.cache
def row_helpers(variant: str) -> frozenset[str]:
    """The helpers of ``variant`` that the headers force inline (``AOT_INLINE``)."""
    import llvmlite.binding as llvm
    mod = llvm.parse_assembly(helper_ir(variant))
    return frozenset(f.name for f in mod.functions
                     if not f.is_declaration and any(b"alwaysinline" in a for a in f.attributes))


def variant_of(machine, *, no_mve: bool = False) -> str:
    """The variant for objects of ``machine`` (a
    :class:`~aot.codegen.llvm_object.CrossMachine`; None: this machine's JIT);
    ``no_mve`` keeps the DSP code on a Helium core (a tuned kernel's
    ``AOT_NO_MVE``)."""
    if machine is None:
        return host_variant()
    if machine.triple.startswith("riscv32"):
        return "rv32"
    if {"+mve", "+mve.fp"} & set(machine.features) and not no_mve:
        return "arm-mve"
    return "arm-dsp" if "+dsp" in machine.features else "arm"


# The lines of clang's output that would bind the helpers to clang's view of
# the machine or keep unused helpers alive in every kernel module.
_DROP = re.compile(r'^(target (datalayout|triple) = .*|@llvm\.(compiler\.)?used = .*)$',
                   re.M)
# clang's string attributes of functions and calls: the CPU, the float ABI
# (use-soft-float), frame pointers, no-builtins (from -ffreestanding).  The
# kernels' own target machine decides those; a helper whose attributes differ
# from its caller's is not inlined (LLVM's compatibility rules), and
# "nobuiltin" calls of memcpy would stay calls.
_CLANG_ATTRS = re.compile(r' ("[\w.-]+"="[^"]*"|"no-builtins"|nobuiltin)')


@functools.cache
def helper_ir(variant: str) -> str:
    """The helpers of ``variant`` as LLVM IR text for llvmlite's LLVM: every
    helper a ``linkonce_odr`` definition (linked where a kernel calls it,
    dropped elsewhere), without clang's string attributes (the kernels' target
    machine decides the CPU, float ABI and frame pointer)."""
    import llvmlite.binding as llvm
    data = shipped(f"{variant}.bc").read_bytes()
    text = str(llvm.parse_bitcode(data))
    text = _DROP.sub("", text)
    # (an attribute group may not be empty: what is left of one is nounwind,
    # true of every C function)
    text = re.sub(r"^attributes #\d+ = \{.*\}$",
                  lambda m: _CLANG_ATTRS.sub("", m.group(0)).replace("{ }", "{ nounwind }"),
                  text, flags=re.M)
    return re.sub(r"^define internal ", "define linkonce_odr ", text, flags=re.M)


@functools.cache
def helper_types(variant: str) -> dict[str, str]:
    """Every helper of ``variant``: name -> its LLVM function type (``i32 (i32, i32)``)."""
    import llvmlite.binding as llvm
    mod = llvm.parse_assembly(helper_ir(variant))
    return {f.name: str(f.global_value_type) for f in mod.functions if not f.is_declaration}
