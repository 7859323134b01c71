"""The loop IR: expressions, statements, buffers, PrimFunc and the loop passes.

It is the bottom of the kernel engine: tensor expressions (:mod:`aot.te`)
are built from its expressions, schedules are lowered into it
(:func:`aot.te.lower.lower`, also ``aot.lower``), and :mod:`aot.codegen`
prints it.  It imports none of them.  :data:`aot.tir.passes.PASSES` lists
the loop passes by their stable names.
"""

from aot.tir.expr import (  # noqa: F401
    AccessPtr, Address, Binary, Broadcast, Call, Cast, FloatImm, FuncRef, IntImm, Load, Not,
    PrimExpr, Ramp, Select, StringImm, Var, call_extern, call_memory, call_pure, cast, const,
    floordiv, floormod, likely, truncdiv, truncmod,
)
from aot.tir.stmt import (  # noqa: F401
    Allocate, Buffer, Comment, Evaluate, For, IfThenElse, LetStmt, PrimFunc, Return, SeqStmt,
    Stmt, Store, decl_buffer,
)
from aot.tir import ir_builder  # noqa: F401
