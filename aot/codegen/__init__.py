"""Code generation, by target kind: PrimFunc -> C text (c.py, kernel.py) or
LLVM IR compiled in-process by MCJIT (llvm.py); docs/codegen.md."""

from aot.codegen.c import BuildError, CModule, build_module, compile_host, generate_c, prototype  # noqa: F401


def __getattr__(name: str):
    # The LLVM backend loads llvmlite: imported when first asked for, so that C
    # compilation and the command line start without it.
    if name in ("LLVMModule", "build_llvm_module"):
        from aot.codegen import llvm
        return getattr(llvm, name)
    raise AttributeError(f"module 'aot.codegen' has no attribute {name!r}")
