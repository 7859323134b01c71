"""Code generation, by target kind: PrimFunc -> C text (c.py, kernel.py) or
LLVM IR compiled in-process by MCJIT (llvm.py); docs/codegen.md."""

from aot.codegen.c import BuildError, CModule, build_module, compile_host, generate_c, prototype  # noqa: F401
from aot.codegen.llvm import LLVMModule, build_llvm_module  # noqa: F401
