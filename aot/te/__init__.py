"""Tensor expressions: describe what a kernel computes, not how.

The API follows TVM's ``te`` module::

    A = te.placeholder((n,), "float32", name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B.op)

Arithmetic semantics (C99 with wrap-around for narrow integers, ``/`` as
truncating division, ``//`` and ``%`` as floor division and modulo) are
stated in :mod:`aot.tir.expr`.
"""

from aot.te.intrin import TensorIntrin, decl_tensor_intrin  # noqa: F401
from aot.te.ops import (  # noqa: F401
    CommReducer, abs, all, any, call_extern, call_pure, ceil, clamp, comm_reducer, cos, erf, exp,
    expm1, fmod, floor, if_then_else, log, max, max_value, min, min_value, q_multiply_shift, round,
    saturate_cast, sin, sqrt, sum, tanh, var,
)
from aot.te.schedule import (  # noqa: F401
    Fuse, Schedule, ScheduleError, Split, Stage, create_schedule,
)
from aot.te.tensor import (  # noqa: F401
    ComputeOp, IterVar, Operation, PlaceholderOp, Range, TEError, Tensor, compute,
    placeholder, reduce_axis, thread_axis,
)
from aot.tir.expr import (  # noqa: F401
    cast, const, floordiv, floormod, likely, truncdiv, truncmod,
)
