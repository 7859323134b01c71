"""The two drivers of the kernel engine: ``lower`` and ``build``.

``lower(s, args)`` : Schedule -> PrimFunc (bound inference, loop nests,
loop passes); ``build(s, args, target)`` : Schedule -> CModule (lower, then
C code generation).  Read top to bottom, they are the whole recipe.
"""

from __future__ import annotations

from aot.codegen.c import build_module
from aot.errors import BuildError
from aot.te.lower import lower as _lower
from aot.tir.stmt import PrimFunc


def lower(sch, args, name: str = "default_function", passes=None, disabled=(), dump=None):
    """Lower a schedule to a :class:`aot.tir.PrimFunc` with the loop passes
    of :data:`aot.tir.passes.DEFAULT_PIPELINE` (minus ``disabled``);
    ``dump(pass_name, func)`` is called after each step."""
    return _lower(sch, args, name=name, passes=passes, disabled=disabled, dump=dump)


def build(sch, args=None, target="c", name: str = "default_function", disabled=()):
    """Generate C for a schedule (or a PrimFunc, or a list of PrimFuncs).

    ``target`` is a string (``"c"``, ``"c -mcpu=cortex-m4"``) or an
    :class:`aot.target.Target`.  Returns a :class:`aot.codegen.CModule`
    with ``.source``, ``.save(path)``, and, for the host target, a call
    operator running the kernel on numpy arrays.
    """
    if isinstance(sch, PrimFunc):
        funcs = [sch]
    elif isinstance(sch, (list, tuple)) and all(isinstance(f, PrimFunc) for f in sch):
        funcs = list(sch)
    else:
        if args is None:
            raise BuildError("build(schedule, args, ...): the argument tensors are required")
        funcs = [lower(sch, args, name=name, disabled=disabled)]
    return build_module(funcs, target)
