"""Expressions of the loop IR, shared by tensor expressions and loops.

Every node is immutable and typed.  A dtype is a string: ``bool``,
``int8``, ``uint8``, ``int16``, ``int32``, ``int64``, ``float32`` or
``handle`` (a pointer), optionally with a lane count for vectors
(``float32x4``).

Arithmetic follows C99 on the element type, with one difference stated
here once: the result of an operation on ``int8``/``uint8``/``int16`` has
that narrow type (it wraps to it), whereas C would promote to ``int``.

* ``a + b``, ``a - b``, ``a * b``: wrap-around for narrow types; overflow of
  ``int32``/``int64`` is undefined, as in C.
* ``a / b`` on integers is :func:`truncdiv` (rounds toward zero, as C99),
  on ``float32`` the IEEE quotient.
* ``a // b`` is :func:`floordiv` and ``a % b`` is :func:`floormod` (Python
  semantics: the remainder has the sign of the divisor).  :func:`truncmod`
  is C's ``%`` (the remainder has the sign of the dividend).
* ``a << n`` and ``a >> n``: as in C; ``>>`` of a negative signed value is
  an arithmetic shift (what GCC and Clang do); shifting by the width or more
  is undefined.
* Mixing dtypes is an error: cast explicitly with ``x.astype("int32")``.
  Python numbers take the dtype of the other operand.

``str()`` of an expression is its text form (:class:`ExprPrinter`, at the end
of this module).
"""

from __future__ import annotations

import re

import numpy as np

from aot.errors import AotError

SCALAR_DTYPES = ("bool", "int8", "uint8", "int16", "int32", "int64", "float32", "handle")

_BITS = {"bool": 1, "int8": 8, "uint8": 8, "int16": 16, "int32": 32, "int64": 64,
         "float32": 32, "handle": 64}
_DTYPE_RE = re.compile(r"^(.+)x([0-9]+)$")  # element dtype, lanes


class TypeError_(AotError):
    """An expression mixes dtypes or uses an unknown one."""


def split_dtype(dtype: str) -> tuple[str, int]:
    """Return ``(element dtype, lanes)`` of ``"float32x4"`` or ``"int8"``."""
    if dtype in SCALAR_DTYPES:
        return dtype, 1
    m = _DTYPE_RE.match(dtype)
    if not m or m.group(1) not in SCALAR_DTYPES:
        raise TypeError_(f"unknown dtype {dtype!r}: use one of {', '.join(SCALAR_DTYPES)}")
    return m.group(1), int(m.group(2))


def with_lanes(dtype: str, lanes: int) -> str:
    elem, _ = split_dtype(dtype)
    return elem if lanes == 1 else f"{elem}x{lanes}"


def element(dtype: str) -> str:
    return split_dtype(dtype)[0]


def lanes_of(dtype: str) -> int:
    return split_dtype(dtype)[1]


def bits(dtype: str) -> int:
    return _BITS[element(dtype)]


def is_int(dtype: str) -> bool:
    return element(dtype) in ("int8", "uint8", "int16", "int32", "int64")


def is_float(dtype: str) -> bool:
    return element(dtype) == "float32"


def is_signed(dtype: str) -> bool:
    return element(dtype) in ("int8", "int16", "int32", "int64")


def int_range(dtype: str) -> tuple[int, int]:
    """The representable range ``(lo, hi)`` of an integer dtype."""
    b = bits(dtype)
    if element(dtype) == "bool":
        return 0, 1
    if is_signed(dtype):
        return -(1 << (b - 1)), (1 << (b - 1)) - 1
    return 0, (1 << b) - 1


class PrimExpr:
    """Base class of expressions; operators build new expressions.

    Equality (``==``) is identity so that nodes can key dictionaries; build a
    comparison with :meth:`equal` / :meth:`not_equal`.

    A node never changes after it is built, so what an analysis derives from
    it stays true as long as the node lives: the simplifier keeps a node's
    structural key and linear form in the slots ``_struct_key`` and
    ``_linear`` (:mod:`aot.tir.simplify`), filled on first use, instead of
    deriving them again from the whole subtree each time it is asked.
    """

    __slots__ = ("dtype", "_struct_key", "_linear")

    def _bin(self, op, other, reverse=False):
        a, b = (other, self) if reverse else (self, other)
        return binary(op, a, b)

    def __add__(self, o): return self._bin("add", o)
    def __radd__(self, o): return self._bin("add", o, True)
    def __sub__(self, o): return self._bin("sub", o)
    def __rsub__(self, o): return self._bin("sub", o, True)
    def __mul__(self, o): return self._bin("mul", o)
    def __rmul__(self, o): return self._bin("mul", o, True)
    def __truediv__(self, o): return self._bin("div", o)
    def __rtruediv__(self, o): return self._bin("div", o, True)
    def __floordiv__(self, o): return self._bin("floordiv", o)
    def __rfloordiv__(self, o): return self._bin("floordiv", o, True)
    def __mod__(self, o): return self._bin("floormod", o)
    def __rmod__(self, o): return self._bin("floormod", o, True)
    def __lshift__(self, o): return self._bin("shl", o)
    def __rshift__(self, o): return self._bin("shr", o)
    def __and__(self, o): return self._bin("bitand" if self.dtype != "bool" else "and", o)
    def __or__(self, o): return self._bin("bitor" if self.dtype != "bool" else "or", o)
    def __xor__(self, o): return self._bin("bitxor", o)
    def __lt__(self, o): return self._bin("lt", o)
    def __le__(self, o): return self._bin("le", o)
    def __gt__(self, o): return self._bin("gt", o)
    def __ge__(self, o): return self._bin("ge", o)

    def __neg__(self):
        return binary("sub", const(0, self.dtype), self)

    def __invert__(self):
        if self.dtype == "bool":
            return Not(self)
        return binary("bitxor", self, const(-1, self.dtype))

    def __bool__(self):
        raise TypeError_(
            "an expression has no truth value while the program is being built: "
            "use aot.te.if_then_else or all()/any() instead of Python 'if'/'and'")

    __hash__ = object.__hash__

    def equal(self, other):
        return binary("eq", self, other)

    def not_equal(self, other):
        return binary("ne", self, other)

    def astype(self, dtype: str) -> PrimExpr:
        return cast(dtype, self)

    def __repr__(self):
        return expr_str(self)

    __str__ = __repr__


class IntImm(PrimExpr):
    __slots__ = ("value",)

    def __init__(self, dtype: str, value: int):
        self.dtype = dtype
        self.value = int(value)


class FloatImm(PrimExpr):
    __slots__ = ("value",)

    def __init__(self, dtype: str, value: float):
        self.dtype = dtype
        self.value = float(value)


class StringImm(PrimExpr):
    __slots__ = ("value",)

    def __init__(self, value: str):
        self.dtype = "handle"
        self.value = value


class FuncRef(PrimExpr):
    """The address of the function ``name`` (a ``handle``): a task handed to
    another core (``aot_core_submit``, :mod:`aot.executor.codegen`)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.dtype = "handle"
        self.name = name


class Var(PrimExpr):
    """A scalar variable: a loop index, a size or a symbolic stride."""

    __slots__ = ("name",)

    def __init__(self, name: str = "v", dtype: str = "int32"):
        self.name = name
        self.dtype = dtype


# op -> printed symbol; comparisons produce bool.
BINARY_OPS = {
    "add": "+", "sub": "-", "mul": "*", "div": "/", "mod": "%",
    "floordiv": "//", "floormod": "%%", "min": "min", "max": "max",
    "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
    "and": "&&", "or": "||", "shl": "<<", "shr": ">>",
    "bitand": "&", "bitor": "|", "bitxor": "^",
}
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")


class Binary(PrimExpr):
    """``op(a, b)`` where op is a key of :data:`BINARY_OPS`.

    ``div``/``mod`` are C's truncating operators, ``floordiv``/``floormod``
    round toward minus infinity.
    """

    __slots__ = ("op", "a", "b")

    def __init__(self, op: str, a: PrimExpr, b: PrimExpr):
        self.op = op
        self.a = a
        self.b = b
        if op in COMPARISONS or op in ("and", "or"):
            self.dtype = with_lanes("bool", lanes_of(a.dtype))
        else:
            self.dtype = a.dtype


class Not(PrimExpr):
    __slots__ = ("a",)

    def __init__(self, a: PrimExpr):
        self.a = a
        self.dtype = a.dtype


class Select(PrimExpr):
    """``cond ? t : f``; only the chosen branch is evaluated (C's ``?:``)."""

    __slots__ = ("cond", "t", "f")

    def __init__(self, cond, t, f):
        self.cond, self.t, self.f = cond, t, f
        self.dtype = t.dtype


class Cast(PrimExpr):
    """Conversion as in C: float to int truncates toward zero (undefined
    out of range); int to narrower int wraps."""

    __slots__ = ("value",)

    def __init__(self, dtype: str, value: PrimExpr):
        self.dtype = dtype
        self.value = value


class Call(PrimExpr):
    """A function call.  ``kind`` is ``extern`` (a C function the user
    declares, may have side effects), ``pure`` (a C function without side
    effects) or ``intrin`` (a builtin of this compiler: ``likely``,
    ``abs``, ``sqrt``, ``exp``)."""

    __slots__ = ("name", "args", "kind")

    def __init__(self, dtype: str, name: str, args, kind: str):
        self.dtype = dtype
        self.name = name
        self.args = tuple(args)
        self.kind = kind


class Load(PrimExpr):
    """Read ``buffer`` at a flat element ``index`` (a Ramp for vectors)."""

    __slots__ = ("buffer", "index")

    def __init__(self, dtype: str, buffer, index: PrimExpr):
        self.dtype = dtype
        self.buffer = buffer
        self.index = index


class Ramp(PrimExpr):
    """The vector ``base, base+stride, ..., base+(lanes-1)*stride``."""

    __slots__ = ("base", "stride", "lanes")

    def __init__(self, base, stride, lanes: int):
        self.base, self.stride, self.lanes = base, stride, lanes
        self.dtype = with_lanes(base.dtype, lanes)


class Broadcast(PrimExpr):
    __slots__ = ("value", "lanes")

    def __init__(self, value, lanes: int):
        self.value, self.lanes = value, lanes
        self.dtype = with_lanes(value.dtype, lanes)


class AccessPtr(PrimExpr):
    """Address of element ``offset`` of ``buffer`` (``&buf[elem_offset+offset]``),
    for passing a buffer region to an extern function."""

    __slots__ = ("buffer", "offset", "mode")

    def __init__(self, buffer, offset: PrimExpr, mode: str):
        self.dtype = "handle"
        self.buffer, self.offset, self.mode = buffer, offset, mode


class Address(PrimExpr):
    """The address ``offset`` bytes past the start of ``buffer``'s data, as a
    pointer to ``pointee`` elements (a scalar dtype): how an entry function
    passes a tensor that lives inside a byte array (the workspace) or moves a
    pointer by whole rows.  ``mode`` is ``r`` (a pointer to const), ``w`` or
    ``rw``, as for :class:`AccessPtr`."""

    __slots__ = ("buffer", "offset", "pointee", "mode")

    def __init__(self, buffer, offset: PrimExpr, pointee: str, mode: str):
        if pointee not in SCALAR_DTYPES or pointee == "handle":
            raise TypeError_(f"an address points to elements of a scalar dtype, not {pointee!r}")
        if mode not in ("r", "w", "rw"):
            raise TypeError_(f"an address's mode is 'r', 'w' or 'rw', not {mode!r}")
        offset = convert(offset)
        if not is_int(offset.dtype):
            raise TypeError_(f"an address's byte offset is an integer, not {offset.dtype}")
        self.dtype = "handle"
        self.buffer, self.offset, self.pointee, self.mode = buffer, offset, pointee, mode


class ProducerLoad(PrimExpr):
    """Read a tensor at multi-dimensional indices (tensor expressions only)."""

    __slots__ = ("tensor", "indices")

    def __init__(self, tensor, indices):
        self.tensor = tensor
        self.indices = tuple(indices)
        self.dtype = tensor.dtype


class Reduce(PrimExpr):
    """A commutative reduction of ``source`` over ``axis`` (IterVars),
    skipping points where ``condition`` is false."""

    __slots__ = ("combiner", "source", "axis", "condition", "init")

    def __init__(self, combiner, source, axis, condition, init=None):
        self.combiner = combiner
        self.source = source
        self.axis = tuple(axis)
        self.condition = condition
        self.init = init
        self.dtype = source.dtype


def const(value, dtype: str | None = None) -> PrimExpr:
    """A constant; ints default to int32, floats to float32."""
    if dtype is None:
        dtype = "bool" if isinstance(value, bool) else (
            "int32" if isinstance(value, int) else "float32")
    split_dtype(dtype)
    if is_float(dtype):
        return FloatImm(dtype, float(value))
    if isinstance(value, float) and not float(value).is_integer():
        raise TypeError_(f"cannot use the float {value} as a {dtype} constant: cast explicitly")
    return IntImm(dtype, int(value))


def convert(value, like: str | None = None) -> PrimExpr:
    """Turn a Python number into a constant of dtype ``like``."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(getattr(value, "var", None), Var):  # an IterVar stands for its variable
        return value.var
    if isinstance(value, (bool, int, float)):
        if like is not None:
            elem = element(like)
            if isinstance(value, float) and not is_float(elem) and not float(value).is_integer():
                raise TypeError_(f"cannot mix the float {value} with a {like} expression")
            c = const(value, elem)
            return c if lanes_of(like) == 1 else Broadcast(c, lanes_of(like))
        return const(value)
    if hasattr(value, "dtype") and hasattr(value, "item"):  # numpy scalar
        return const(value.item(), str(value.dtype))
    raise TypeError_(f"cannot use {value!r} ({type(value).__name__}) in an expression")


def binary(op: str, a, b) -> PrimExpr:
    if not isinstance(a, PrimExpr):
        a = convert(a, b.dtype if isinstance(b, PrimExpr) else None)
    if not isinstance(b, PrimExpr):
        b = convert(b, a.dtype)
    if op in ("shl", "shr"):
        if not (is_int(a.dtype) and is_int(b.dtype)):
            raise TypeError_(f"shift needs integers, got {a.dtype} and {b.dtype}")
        if b.dtype != a.dtype:
            b = cast(a.dtype, b)
    elif a.dtype != b.dtype:
        raise TypeError_(
            f"operands of {BINARY_OPS[op]!r} have different dtypes ({a.dtype} and "
            f"{b.dtype}): cast one of them with .astype(...)")
    if op in ("div", "mod", "floordiv", "floormod") and isinstance(b, IntImm) and b.value == 0:
        raise TypeError_("division by the constant zero")
    if op in ("mod", "floordiv", "floormod", "bitand", "bitor", "bitxor") and is_float(a.dtype):
        raise TypeError_(f"{op} needs integer operands, got {a.dtype}")
    if op in ("and", "or") and element(a.dtype) != "bool":
        raise TypeError_(f"logical {op} needs bool operands, got {a.dtype}")
    return Binary(op, a, b)


def cast(dtype: str, value) -> PrimExpr:
    value = convert(value)
    split_dtype(dtype)
    if value.dtype == dtype:
        return value
    return Cast(dtype, value)


def truncdiv(a, b):
    """Integer division rounding toward zero (C99 ``/``)."""
    return binary("div", a, b)


def truncmod(a, b):
    """Remainder of :func:`truncdiv`, sign of the dividend (C99 ``%``)."""
    return binary("mod", a, b)


def floordiv(a, b):
    """Integer division rounding toward minus infinity (Python ``//``)."""
    return binary("floordiv", a, b)


def floormod(a, b):
    """``a - floordiv(a, b) * b``: the sign of the divisor (Python ``%``)."""
    return binary("floormod", a, b)


def min_(a, b):
    return binary("min", a, b)


def max_(a, b):
    return binary("max", a, b)


def likely(cond: PrimExpr) -> PrimExpr:
    """Mark a condition as almost always true (a loop-partitioning hint)."""
    return Call("bool", "likely", [cond], "intrin")


def is_const_int(e, value=None) -> bool:
    return isinstance(e, IntImm) and (value is None or e.value == value)


def call_extern(dtype: str, name: str, *args) -> PrimExpr:
    """Call the C function ``name``; the generated file must see its
    declaration (use ``Stage.pragma(axis, "import_c", code)`` or a header)."""
    return Call(dtype, name, [_as_arg(a) for a in args], "extern")


def call_pure(dtype: str, name: str, *args) -> PrimExpr:
    """Call a side-effect-free C function (e.g. an ACLE intrinsic such as
    ``__smlad``); it may be reordered or removed if its result is unused."""
    return Call(dtype, name, [_as_arg(a) for a in args], "pure")


#: The memory builtins (``Call`` of kind ``intrin``, evaluated for their effect):
#: ``memcpy(dst, src, bytes)``, ``memmove(dst, src, bytes)`` (the ranges may
#: overlap) and ``memset(dst, byte, bytes)``, as C's; ``bytes`` is an int32.
MEMORY_BUILTINS = ("memcpy", "memmove", "memset")


def call_memory(name: str, dst: PrimExpr, src, nbytes) -> PrimExpr:
    """A memory builtin (:data:`MEMORY_BUILTINS`): ``src`` is an address, or for
    ``memset`` the byte value (an int32)."""
    if name not in MEMORY_BUILTINS:
        raise TypeError_(f"unknown memory builtin {name!r}: use one of "
                         f"{', '.join(MEMORY_BUILTINS)}")
    src = convert(src)
    if dst.dtype != "handle" or src.dtype != ("int32" if name == "memset" else "handle"):
        raise TypeError_(f"{name} takes an address and "
                         f"{'a byte value' if name == 'memset' else 'an address'}")
    return Call("handle", name, [dst, src, convert(nbytes)], "intrin")


def _as_arg(a):
    return StringImm(a) if isinstance(a, str) else convert(a)


# -- the text form (str(expr)) ------------------------------------------------
# Binary operations are fully parenthesized; ``floordiv``/``floormod`` are
# written as calls and ``/``/``%`` are C's truncating operators.  Constants of
# type int32 print bare, other integer types as ``int8(5)``, floats as
# ``1.5f``.  Variables with clashing names get a numeric suffix.
_SYMBOL = {"add": " + ", "sub": " - ", "mul": "*", "div": " / ", "mod": " % ",
           "eq": " == ", "ne": " != ", "lt": " < ", "le": " <= ", "gt": " > ",
           "ge": " >= ", "and": " && ", "or": " || ", "shl": " << ", "shr": " >> ",
           "bitand": " & ", "bitor": " | ", "bitxor": " ^ "}


def float_literal(v: float) -> str:
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    if np.isnan(v):
        return "nan"
    text = str(np.float32(v))
    if "." not in text and "e" not in text:
        text += ".0"
    return text


class Namer:
    """Gives every variable and buffer a unique display name."""

    def __init__(self, sanitize=None):
        self.names: dict[int, str] = {}
        self.used: set[str] = set()
        self.sanitize = sanitize or (lambda s: s)

    def __call__(self, obj, hint: str) -> str:
        key = id(obj)
        if key not in self.names:
            base = self.sanitize(hint)
            name, n = base, 0
            while name in self.used:
                n += 1
                name = f"{base}_{n}"
            self.used.add(name)
            self.names[key] = name
        return self.names[key]


class ExprPrinter:
    """Prints expressions; :class:`aot.tir.stmt.Printer` adds statements."""

    def __init__(self):
        self.name = Namer()

    def buf(self, b) -> str:
        return self.name(b.data, b.name)

    def expr(self, e) -> str:
        p = self.expr
        if isinstance(e, IntImm):
            if e.dtype == "bool":
                return "True" if e.value else "False"
            return str(e.value) if e.dtype == "int32" else f"{e.dtype}({e.value})"
        if isinstance(e, FloatImm):
            return float_literal(e.value) + "f"
        if isinstance(e, StringImm):
            return '"' + e.value + '"'
        if isinstance(e, FuncRef):
            return f"&{e.name}"
        if isinstance(e, Var):
            return self.name(e, e.name)
        if isinstance(e, Binary):
            if e.op in ("floordiv", "floormod", "min", "max"):
                return f"{e.op}({p(e.a)}, {p(e.b)})"
            return f"({p(e.a)}{_SYMBOL[e.op]}{p(e.b)})"
        if isinstance(e, Not):
            return f"!{p(e.a)}"
        if isinstance(e, Select):
            return f"select({p(e.cond)}, {p(e.t)}, {p(e.f)})"
        if isinstance(e, Cast):
            return f"{e.dtype}({p(e.value)})"
        if isinstance(e, Call):
            args = ", ".join(p(a) for a in e.args)
            if e.kind == "intrin":
                return f"{e.name}({args})"
            sep = ", " if args else ""
            return f'call_{e.kind}("{e.name}"{sep}{args})'
        if isinstance(e, Load):
            return f"{self.buf(e.buffer)}[{p(e.index)}]"
        if isinstance(e, Ramp):
            return f"ramp({p(e.base)}, {p(e.stride)}, {e.lanes})"
        if isinstance(e, Broadcast):
            return f"broadcast({p(e.value)}, {e.lanes})"
        if isinstance(e, AccessPtr):
            return f'access_ptr({self.buf(e.buffer)}, {p(e.offset)}, "{e.mode}")'
        if isinstance(e, Address):
            return (f'address({self.buf(e.buffer)}, {p(e.offset)}, {e.pointee}, '
                    f'"{e.mode}")')
        if isinstance(e, ProducerLoad):
            return f"{e.tensor.name}[{', '.join(p(i) for i in e.indices)}]"
        if isinstance(e, Reduce):
            axes = ", ".join(self.name(iv.var, iv.var.name) for iv in e.axis)
            where = "" if e.condition is None else f", where={p(e.condition)}"
            return f"{e.combiner.name}({p(e.source)}, axis=[{axes}]{where})"
        return f"<{type(e).__name__}>"


def expr_str(e) -> str:
    return ExprPrinter().expr(e)
