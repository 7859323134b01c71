"""The two drivers of the kernel engine: ``lower`` and ``build``.

``lower(s, args)`` : Schedule -> PrimFunc (bound inference, loop nests,
loop passes); ``build(s, args, target)`` : Schedule -> module (lower, then
code generation by the target's kind: C for ``c``, LLVM IR for ``llvm``).
Read top to bottom, they are the whole recipe.
"""

from __future__ import annotations

from aot.codegen.c import build_module, canonical_target
from aot.errors import BuildError
from aot.te.lower import lower as _lower
from aot.tir.stmt import PrimFunc


def lower(sch, args, name: str = "default_function", passes=None, disabled=(), dump=None):
    """Lower a schedule to a :class:`aot.tir.PrimFunc` with the loop passes
    of :data:`aot.tir.passes.DEFAULT_PIPELINE` (minus ``disabled``);
    ``dump(pass_name, func)`` is called after each step."""
    return _lower(sch, args, name=name, passes=passes, disabled=disabled, dump=dump)


def build(sch, args=None, target="c", name: str = "default_function", disabled=()):
    """Generate code for a schedule (or a PrimFunc, or a list of PrimFuncs).

    ``target`` is a string (``"c"``, ``"c -mcpu=cortex-m4"``, ``"llvm"``) or
    an :class:`aot.target.Target`; its kind picks the backend.  ``c`` returns
    a :class:`aot.codegen.CModule` (C99), ``llvm`` an
    :class:`aot.codegen.llvm.LLVMModule` (LLVM IR, compiled in-process by
    MCJIT); both have ``.source``, ``.save(path)`` and, for this machine, a
    call operator running the kernel on numpy arrays (docs/codegen.md).
    """
    if isinstance(sch, PrimFunc):
        funcs = [sch]
    elif isinstance(sch, (list, tuple)) and all(isinstance(f, PrimFunc) for f in sch):
        funcs = list(sch)
    else:
        if args is None:
            raise BuildError("build(schedule, args, ...): the argument tensors are required")
        funcs = [lower(sch, args, name=name, disabled=disabled)]
    _, tobj = canonical_target(target)
    if tobj.kind == "llvm":
        from aot.codegen.llvm import build_llvm_module  # llvmlite: on first use
        return build_llvm_module(funcs, tobj)
    return build_module(funcs, tobj)
