"""Operators of tensor expressions: reductions, selection, casts, calls."""

from __future__ import annotations

import builtins

from aot.te.tensor import IterVar, TEError, _as_expr
from aot.tir import expr as E
from aot.tir.expr import call_extern, call_pure  # noqa: F401  (part of the te API)


class CommReducer:
    """A commutative, associative reduction ``combine(x, y)`` with an
    ``identity(dtype)`` element.  Call it like ``sum``:
    ``reducer(expr, axis=k, where=cond, init=None)``."""

    def __init__(self, fcombine, fidentity, name):
        self.fcombine, self.fidentity, self.name = fcombine, fidentity, name

    def combine(self, x, y):
        return E.convert(self.fcombine(x, y))

    def identity(self, dtype: str) -> E.PrimExpr:
        return E.convert(self.fidentity(dtype), dtype)

    def __call__(self, expr, axis, where=None, init=None):
        axes = axis if isinstance(axis, (list, tuple)) else [axis]
        for a in axes:
            if not isinstance(a, IterVar) or a.iter_type != "reduce":
                raise TEError(f"{self.name}: axis must be made by reduce_axis, got {a!r}")
        expr = E.convert(expr)
        if where is not None:
            where = E.convert(where)
            if where.dtype != "bool":
                raise TEError(f"{self.name}: where= must be a condition, got {where.dtype}")
        if init is not None:
            init = E.convert(init, expr.dtype)
        return E.Reduce(self, expr, axes, where, init)

    def __repr__(self):
        return f"CommReducer({self.name})"


def comm_reducer(fcombine, fidentity, name: str = "reduce") -> CommReducer:
    """Declare a new reduction, e.g. a product::

        prod = comm_reducer(lambda x, y: x * y, lambda t: const(1, t), "prod")
    """
    return CommReducer(fcombine, fidentity, name)


def min_value(dtype: str) -> E.PrimExpr:
    """The smallest value of ``dtype`` (the most negative finite float)."""
    if E.is_float(dtype):
        return E.FloatImm(dtype, -3.4028234663852886e38)
    return E.IntImm(dtype, E.int_range(dtype)[0])


def max_value(dtype: str) -> E.PrimExpr:
    if E.is_float(dtype):
        return E.FloatImm(dtype, 3.4028234663852886e38)
    return E.IntImm(dtype, E.int_range(dtype)[1])


sum = comm_reducer(lambda x, y: x + y, lambda t: E.const(0, t), "sum")  # noqa: A001
max = comm_reducer(lambda x, y: E.max_(x, y), min_value, "max")  # noqa: A001
min = comm_reducer(lambda x, y: E.min_(x, y), max_value, "min")  # noqa: A001


def if_then_else(cond, t, f) -> E.PrimExpr:
    """``cond ? t : f``.  Generated C uses ``?:``, which evaluates only the
    chosen branch, so a branch may read out of bounds where the condition is
    false (padding); the vectorizer keeps such loops scalar."""
    cond = E.convert(cond)
    if E.element(cond.dtype) != "bool":
        raise TEError(f"if_then_else: the condition must be bool, got {cond.dtype}")
    t = _as_expr(t) if not isinstance(t, (int, float)) else t
    f = _as_expr(f) if not isinstance(f, (int, float)) else f
    if not isinstance(t, E.PrimExpr):
        t = E.convert(t, f.dtype if isinstance(f, E.PrimExpr) else None)
    if not isinstance(f, E.PrimExpr):
        f = E.convert(f, t.dtype)
    if t.dtype != f.dtype:
        raise TEError(f"if_then_else: branches have dtypes {t.dtype} and {f.dtype}")
    return E.Select(cond, t, f)


def all(*conds):  # noqa: A001
    """Logical and of conditions."""
    out = E.convert(True)
    for c in conds:
        out = E.binary("and", out, E.convert(c))
    return out


def any(*conds):  # noqa: A001
    out = E.convert(False)
    for c in conds:
        out = E.binary("or", out, E.convert(c))
    return out


def clamp(x, lo, hi) -> E.PrimExpr:
    """``min(max(x, lo), hi)``."""
    x = _as_expr(x)
    return E.min_(E.max_(x, E.convert(lo, x.dtype)), E.convert(hi, x.dtype))


def saturate_cast(dtype: str, x) -> E.PrimExpr:
    """Cast an integer to ``dtype``, clamping to its range instead of
    wrapping (floats are rounded toward zero first, as C casts do)."""
    x = _as_expr(x)
    lo, hi = E.int_range(dtype)
    if E.is_float(x.dtype):
        return E.cast(dtype, clamp(x, float(lo), float(hi)))
    xlo, xhi = E.int_range(x.dtype)
    if xlo >= lo and xhi <= hi:
        return E.cast(dtype, x)
    wide = x if E.bits(x.dtype) >= 32 else E.cast("int32", x)
    lo_c = E.convert(builtins.max(lo, E.int_range(wide.dtype)[0]), wide.dtype)
    hi_c = E.convert(builtins.min(hi, E.int_range(wide.dtype)[1]), wide.dtype)
    return E.cast(dtype, E.min_(E.max_(wide, lo_c), hi_c))


def q_multiply_shift(x, multiplier, shift) -> E.PrimExpr:
    """Requantize an int32 ``x`` by ``multiplier * 2**(shift - 31)`` exactly
    as TFLite's ``MultiplyByQuantizedMultiplier`` does (int8 kernels).

    ``x * 2**max(shift, 0)`` (int32), then ``SaturatingRoundingDoublingHighMul``
    with ``multiplier`` (the int64 product plus a nudge of ``2**30``, or
    ``1 - 2**30`` when negative, divided by ``2**31`` rounding toward zero;
    ``INT32_MIN * INT32_MIN`` saturates), then ``RoundingDivideByPOT`` by
    ``max(-shift, 0)`` (to nearest, ties away from zero).  ``multiplier``
    and ``shift`` are Python ints or int32 expressions (per-channel values).
    """
    x = _as_expr(x)
    if x.dtype != "int32":
        raise TEError(f"q_multiply_shift needs an int32 value, got {x.dtype}")
    mult = E.convert(multiplier, "int32") if isinstance(multiplier, int) else _as_expr(multiplier)
    if isinstance(shift, int):
        left, right = E.const(1 << builtins.max(shift, 0)), E.const(builtins.max(-shift, 0))
    else:
        shift = _as_expr(shift)
        zero = E.const(0)
        left = E.const(1) << E.max_(shift, zero)
        right = E.max_(zero - shift, zero)
    scaled = x * left
    ab = E.cast("int64", scaled) * E.cast("int64", mult)
    nudge = E.Select(ab >= E.const(0, "int64"), E.const(1 << 30, "int64"),
                     E.const(1 - (1 << 30), "int64"))
    high = E.truncdiv(ab + nudge, E.const(1 << 31, "int64"))
    if not (isinstance(mult, E.IntImm) and mult.value != -(1 << 31)):
        # Only INT32_MIN * INT32_MIN makes 2**62; testing the int64 product
        # keeps the select as wide as its result (vectorizable).
        high = E.Select(ab.equal(E.const(1 << 62, "int64")),
                        E.const((1 << 31) - 1, "int64"), high)
    high = E.cast("int32", high)
    mask = (E.const(1) << right) - 1
    threshold = (mask >> 1) + E.Select(high < 0, E.const(1), E.const(0))
    return (high >> right) + E.Select((high & mask) > threshold, E.const(1), E.const(0))


def abs(x):  # noqa: A001
    x = _as_expr(x)
    return E.Call(x.dtype, "abs", [x], "intrin")


def _float_intrin(name):
    def f(x):
        x = _as_expr(x)
        if not E.is_float(x.dtype):
            raise TEError(f"{name} needs a float32 argument, got {x.dtype}")
        return E.Call(x.dtype, name, [x], "intrin")
    f.__name__ = name
    f.__doc__ = f"C's ``{name}f`` on float32."
    return f


exp = _float_intrin("exp")
sqrt = _float_intrin("sqrt")
tanh = _float_intrin("tanh")
floor = _float_intrin("floor")
round = _float_intrin("round")  # noqa: A001
ceil = _float_intrin("ceil")
log = _float_intrin("log")
sin = _float_intrin("sin")
cos = _float_intrin("cos")
expm1 = _float_intrin("expm1")
erf = _float_intrin("erf")


def fmod(x, y):
    """C's ``fmodf`` on float32: ``x - trunc(x / y) * y``, exactly."""
    x, y = _as_expr(x), _as_expr(y)
    if not (E.is_float(x.dtype) and x.dtype == y.dtype):
        raise TEError(f"fmod needs two float32 arguments, got {x.dtype} and {y.dtype}")
    return E.Call(x.dtype, "fmod", [x, y], "intrin")


def var(name: str = "v", dtype: str = "int32") -> E.Var:
    return E.Var(name, dtype)
