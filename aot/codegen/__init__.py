"""Code generation, by target kind: PrimFunc -> C text (c.py, kernel.py) or
LLVM IR compiled in-process by MCJIT (llvm.py); docs/codegen.md.

The names below are loaded on first use: importing one module of the package
(``aot.codegen.cc``, ``aot.codegen.jinja``) loads neither the C printer (the loop
IR, numpy) nor the LLVM backend (llvmlite)."""

_C_NAMES = ("BuildError", "CModule", "build_module", "compile_host", "generate_c", "prototype")
_LLVM_NAMES = ("LLVMModule", "build_llvm_module")


def __getattr__(name: str):
    if name in _C_NAMES:
        from aot.codegen import c
        return getattr(c, name)
    if name in _LLVM_NAMES:
        from aot.codegen import llvm
        return getattr(llvm, name)
    raise AttributeError(f"module 'aot.codegen' has no attribute {name!r}")
