"""Code generation: PrimFunc -> C text (c.py); the LLVM path comes later."""

from aot.codegen.c import BuildError, CModule, build_module, compile_host, generate_c, prototype  # noqa: F401
