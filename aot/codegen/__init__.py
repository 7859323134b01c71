"""Code generation, by target kind: PrimFunc -> C text (c.py, kernel.py) or
LLVM IR compiled in-process by MCJIT (llvm.py); docs/codegen.md.

The names below are loaded on first use: importing one module of the package
(``aot.codegen.cc``, ``aot.codegen.jinja``) loads neither the C printer (the loop
IR, numpy) nor the LLVM backend (llvmlite)."""

_EXPORTS = {"BuildError": "c", "CModule": "c", "build_module": "c", "compile_host": "c",
            "generate_c": "c", "prototype": "c", "LLVMModule": "llvm",
            "build_llvm_module": "llvm"}


def __getattr__(name: str):
    if name in _EXPORTS:
        import importlib
        return getattr(importlib.import_module(f"aot.codegen.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'aot.codegen' has no attribute {name!r}")
