"""The support headers' C helpers as LLVM bitcode: one source, two printers.

The kernels call ``static inline`` C helpers of the support headers
(``aot/kernels/include/`` and ``aot/kernels/<op>/include/``: the fixed-point
arithmetic, the int8 dot-product rows, softmax's exp and reciprocal).  The
C printer's kernels include those headers; the LLVM printer's kernels call
the same functions, and here they come from the same headers compiled to
LLVM bitcode by clang when the package is built
(:func:`aot.kernels.bitcode.build`, run by ``python -m aot.kernels.bitcode``),
shipped as package data (``aot/codegen/bitcode/<variant>.bc``).  At run time no C compiler is
needed: :func:`helper_ir` reads the bitcode with llvmlite's LLVM (bitcode
is read by every later LLVM, so the shipped files outlive a clang or
llvmlite upgrade), and :mod:`aot.codegen.llvm_jit` links it into the
kernels' module, where LLVM inlines the helpers and specialises them for
the constants of each call as gcc does in the C path.

Why bitcode rather than helpers written twice or in loop IR: the headers
are the C path's real code (portable, DSP and Helium paths picked by the
preprocessor), 4,000 lines whose bit-exactness with TFLM is tested through
the C path; a second source had to be kept equal by tests
(``llvm_fixedpoint.py`` did that for nine helpers).  See docs/codegen.md.

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
#: machine's architecture (:func:`host_variant`).
VARIANTS = {v.name: v for v in (
    Variant("x86_64", "x86_64-unknown-linux-gnu"),
    Variant("aarch64", "aarch64-unknown-linux-gnu"),
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


# The lines of clang's output that would bind the helpers to clang's view of
# the machine or keep unused helpers alive in every kernel module.
_DROP = re.compile(r'^(target (datalayout|triple) = .*|@llvm\.(compiler\.)?used = .*)$',
                   re.M)
_MACHINE_ATTRS = re.compile(r' "(target-cpu|target-features|tune-cpu)"="[^"]*"')


@functools.cache
def helper_ir(variant: str) -> str:
    """The helpers of ``variant`` as LLVM IR text for llvmlite's LLVM: every
    helper a ``linkonce_odr`` definition (linked where a kernel calls it,
    dropped elsewhere), without clang's CPU attributes (the kernels' target
    machine decides)."""
    import llvmlite.binding as llvm
    data = shipped(f"{variant}.bc").read_bytes()
    text = str(llvm.parse_bitcode(data))
    text = _DROP.sub("", text)
    text = _MACHINE_ATTRS.sub("", text)
    return re.sub(r"^define internal ", "define linkonce_odr ", text, flags=re.M)


@functools.cache
def helper_types(variant: str) -> dict[str, str]:
    """Every helper of ``variant``: name -> its LLVM function type (``i32 (i32, i32)``)."""
    import llvmlite.binding as llvm
    mod = llvm.parse_assembly(helper_ir(variant))
    return {f.name: str(f.global_value_type) for f in mod.functions if not f.is_declaration}
