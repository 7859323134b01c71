"""The loop IR: expressions, statements, buffers, PrimFunc, lowering and passes.

``aot.tir.lower(schedule, args)`` (also ``aot.lower``) turns a schedule into
a :class:`PrimFunc`; :data:`aot.tir.passes.PASSES` lists the loop passes by
their stable names.
"""

from aot.tir.expr import (  # noqa: F401
    AccessPtr, Binary, Broadcast, Call, Cast, FloatImm, IntImm, Load, Not, PrimExpr,
    Ramp, Select, StringImm, Var, cast, const, floordiv, floormod, likely, truncdiv,
    truncmod,
)
from aot.tir.stmt import (  # noqa: F401
    Allocate, Buffer, Evaluate, For, IfThenElse, PrimFunc, SeqStmt, Stmt, Store, decl_buffer,
)
from aot.tir import ir_builder  # noqa: F401


def call_extern(dtype, name, *args):
    """See :func:`aot.te.call_extern`."""
    from aot.te.ops import call_extern as _call
    return _call(dtype, name, *args)


def call_pure(dtype, name, *args):
    """See :func:`aot.te.call_pure`."""
    from aot.te.ops import call_pure as _call
    return _call(dtype, name, *args)


def lower(sch, args, name="default_function", **kwargs):
    from aot.tir.lower import lower as _lower
    return _lower(sch, args, name=name, **kwargs)
