"""Statements, buffers and functions of the loop IR, and their text form.

``str()`` of a statement or a :class:`PrimFunc` is the loop nest as
:class:`Printer` writes it (the end of this module); expressions print with
:class:`aot.tir.expr.ExprPrinter`.
"""

from __future__ import annotations

from aot.tir.expr import (AccessPtr, Address, ExprPrinter, IntImm, Load, PrimExpr, Ramp,
                          TypeError_, Var, const, convert)


class Buffer:
    """A typed memory region: element ``[i0, ..., in]`` lives at flat index
    ``elem_offset + sum(i_k * strides[k])`` of the array ``data``.

    ``strides`` default to the compact row-major strides of ``shape``.
    ``scope`` is ``global`` (a function argument) or ``local`` (a scratch
    array the generated function declares).  Views made by tensorize share
    ``data`` with the buffer they look into.
    """

    def __init__(self, name, dtype, shape, strides=None, elem_offset=None,
                 scope="global", data=None, offset_factor=1):
        self.name = name
        self.dtype = dtype
        self.shape = tuple(convert(s) for s in shape)
        self.declared_strides = None if strides is None else tuple(convert(s) for s in strides)
        self.elem_offset = convert(elem_offset) if elem_offset is not None else const(0)
        self.scope = scope
        self.data = data if data is not None else Var(name, "handle")
        self.offset_factor = offset_factor

    @property
    def strides(self) -> tuple[PrimExpr, ...]:
        if self.declared_strides is not None:
            return self.declared_strides
        out, acc = [], const(1)
        for s in reversed(self.shape[1:]):
            acc = s * acc if not (isinstance(acc, IntImm) and isinstance(s, IntImm)) \
                else const(acc.value * s.value)
            out.append(acc)
        return tuple(reversed(out)) + (const(1),)

    def offset_of(self, indices) -> PrimExpr:
        """The flat index of ``indices`` (without ``elem_offset``)."""
        indices = [convert(i) for i in indices]
        if len(indices) != len(self.shape):
            raise TypeError_(
                f"buffer {self.name} has {len(self.shape)} dimensions, indexed with {len(indices)}")
        total = const(0)
        for i, s in zip(indices, self.strides):
            total = total + i * s
        return total

    def vload(self, indices, dtype=None) -> PrimExpr:
        return Load(dtype or self.dtype, self, self.elem_offset + self.offset_of(indices))

    def vstore(self, indices, value) -> Stmt:
        return Store(self, convert(value, self.dtype), self.elem_offset + self.offset_of(indices))

    def access_ptr(self, mode: str = "r", offset=0) -> PrimExpr:
        """Pointer to ``elem_offset + offset`` for passing to an extern
        function; mode ``r``, ``w`` or ``rw`` documents the access."""
        return AccessPtr(self, self.elem_offset + convert(offset), mode)

    def size(self) -> int | None:
        n = 1
        for s in self.shape:
            if not isinstance(s, IntImm):
                return None
            n *= s.value
        return n

    def __repr__(self):
        return f"Buffer({self.name}, {self.dtype}, {list(self.shape)})"


def decl_buffer(shape, dtype="float32", name="buf", strides=None, elem_offset=None,
                offset_factor=1, scope="global") -> Buffer:
    """Declare a buffer, e.g. to bind a tensor intrinsic's operands.

    Strides and ``elem_offset`` may be variables: tensorize binds them to the
    strides and offset of the region the intrinsic covers.
    """
    return Buffer(name, dtype, shape, strides, elem_offset, scope, offset_factor=offset_factor)


class Stmt:
    def __repr__(self):
        return stmt_str(self)

    __str__ = __repr__


class For(Stmt):
    """``for (var = min; var < min + extent; ++var) body``.

    ``kind`` is ``serial``, ``unrolled``, ``vectorized`` or ``parallel``;
    ``pragmas`` is a list of ``(key, value)`` set by ``Stage.pragma``.
    """

    def __init__(self, var: Var, min_, extent, kind: str, body: Stmt, pragmas=()):
        self.var, self.min, self.extent = var, convert(min_), convert(extent)
        self.kind, self.body, self.pragmas = kind, body, tuple(pragmas)


class Store(Stmt):
    def __init__(self, buffer: Buffer, value: PrimExpr, index: PrimExpr):
        self.buffer, self.value, self.index = buffer, value, index


class IfThenElse(Stmt):
    def __init__(self, cond, then_case, else_case=None):
        self.cond, self.then_case, self.else_case = cond, then_case, else_case


class SeqStmt(Stmt):
    def __init__(self, seq):
        self.seq = tuple(seq)


class Allocate(Stmt):
    """Declare the scratch ``buffer`` (compact, ``local``) around ``body``."""

    def __init__(self, buffer: Buffer, body: Stmt):
        self.buffer, self.body = buffer, body


class Evaluate(Stmt):
    def __init__(self, value: PrimExpr):
        self.value = value


class LetStmt(Stmt):
    """Bind ``var`` to the value of ``value`` (evaluated once, here) in ``body``.
    A ``handle`` variable must be bound to an :class:`~aot.tir.expr.Address`; a
    :class:`Buffer` whose ``data`` is that variable reads and writes there."""

    def __init__(self, var: Var, value: PrimExpr, body: Stmt):
        value = convert(value, var.dtype)
        if value.dtype != var.dtype:
            raise TypeError_(f"let {var.name}: a {var.dtype} variable bound to a "
                             f"{value.dtype} value")
        if var.dtype == "handle" and not isinstance(value, Address):
            raise TypeError_(f"let {var.name}: a handle is bound to an address")
        self.var, self.value, self.body = var, value, body


class Comment(Stmt):
    """A note for the reader of the generated code (which group a call runs); no effect."""

    def __init__(self, text: str):
        self.text = text


class Return(Stmt):
    """Leave the function with the int32 status ``value`` (a function that runs
    to its end returns 0)."""

    def __init__(self, value: PrimExpr):
        value = convert(value, "int32")
        if value.dtype != "int32":
            raise TypeError_(f"a function returns an int32 status, not {value.dtype}")
        self.value = value


def seq(*stmts) -> Stmt:
    """A sequence without nested sequences or empty parts."""
    flat = []
    for s in stmts:
        if s is None:
            continue
        if isinstance(s, SeqStmt):
            flat.extend(s.seq)
        else:
            flat.append(s)
    if len(flat) == 1:
        return flat[0]
    return SeqStmt(flat)


class PrimFunc:
    """One kernel: a loop nest over the flat ``params`` buffers.

    ``attrs`` carries ``imports`` (C code placed before the function, from
    the ``import_c`` pragma) and ``target``.
    """

    def __init__(self, name: str, params: list[Buffer], body: Stmt, attrs=None):
        self.name, self.params, self.body = name, list(params), body
        self.attrs = dict(attrs or {})

    def with_body(self, body: Stmt) -> PrimFunc:
        return PrimFunc(self.name, self.params, body, self.attrs)

    def __repr__(self):
        return func_str(self)

    __str__ = __repr__


def ramp(base, stride, lanes) -> Ramp:
    return Ramp(convert(base), convert(stride), lanes)


# -- the text form (str(stmt), str(func)) -------------------------------------
class Printer(ExprPrinter):
    """Prints statements and functions (the form ``print(aot.lower(...))`` shows)."""

    def stmt(self, s, indent: int, out: list[str]) -> None:
        pad = "  " * indent
        if isinstance(s, SeqStmt):
            for part in s.seq:
                self.stmt(part, indent, out)
        elif isinstance(s, For):
            for key, value in s.pragmas:
                out.append(f"{pad}// pragma {key}" + ("" if value is None else f" = {value!r}"))
            kind = "" if s.kind == "serial" else f' "{s.kind}"'
            v = self.name(s.var, s.var.name)
            out.append(f"{pad}for ({v}, {self.expr(s.min)}, {self.expr(s.extent)}){kind} {{")
            self.stmt(s.body, indent + 1, out)
            out.append(pad + "}")
        elif isinstance(s, Store):
            out.append(f"{pad}{self.buf(s.buffer)}[{self.expr(s.index)}] = {self.expr(s.value)}")
        elif isinstance(s, IfThenElse):
            out.append(f"{pad}if ({self.expr(s.cond)}) {{")
            self.stmt(s.then_case, indent + 1, out)
            if s.else_case is not None:
                out.append(pad + "} else {")
                self.stmt(s.else_case, indent + 1, out)
            out.append(pad + "}")
        elif isinstance(s, Allocate):
            b = s.buffer
            dims = ", ".join(self.expr(d) for d in b.shape)
            out.append(f"{pad}allocate {self.buf(b)}: {b.dtype}[{dims}], {b.scope}")
            self.stmt(s.body, indent, out)
        elif isinstance(s, Evaluate):
            out.append(pad + self.expr(s.value))
        elif isinstance(s, LetStmt):
            out.append(f"{pad}let {self.name(s.var, s.var.name)} = {self.expr(s.value)}")
            self.stmt(s.body, indent, out)
        elif isinstance(s, Return):
            out.append(f"{pad}return {self.expr(s.value)}")
        elif isinstance(s, Comment):
            out.append(f"{pad}// {s.text}")
        else:
            out.append(f"{pad}<{type(s).__name__}>")


def stmt_str(s) -> str:
    out: list[str] = []
    Printer().stmt(s, 0, out)
    return "\n".join(out)


def func_str(f) -> str:
    p = Printer()
    params = ", ".join(
        f"{p.buf(b)}: {b.dtype}[{', '.join(p.expr(d) for d in b.shape)}]" for b in f.params)
    out = [f"primfn {f.name}({params}) {{"]
    p.stmt(f.body, 1, out)
    out.append("}")
    return "\n".join(out)
