"""A readable text form of the loop IR (the form ``print(aot.lower(...))`` shows).

Binary operations are fully parenthesized; ``floordiv``/``floormod`` are
written as calls and ``/``/``%`` are C's truncating operators.  Constants of
type int32 print bare, other integer types as ``int8(5)``, floats as
``1.5f``.  Variables with clashing names get a numeric suffix.
"""

from __future__ import annotations

import numpy as np

from aot.tir import expr as E
from aot.tir import stmt as S

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


class Printer:
    def __init__(self):
        self.name = Namer()

    def buf(self, b) -> str:
        return self.name(b.data, b.name)

    def expr(self, e) -> str:
        p = self.expr
        if isinstance(e, E.IntImm):
            if e.dtype == "bool":
                return "True" if e.value else "False"
            return str(e.value) if e.dtype == "int32" else f"{e.dtype}({e.value})"
        if isinstance(e, E.FloatImm):
            return float_literal(e.value) + "f"
        if isinstance(e, E.StringImm):
            return '"' + e.value + '"'
        if isinstance(e, E.Var):
            return self.name(e, e.name)
        if isinstance(e, E.Binary):
            if e.op in ("floordiv", "floormod", "min", "max"):
                return f"{e.op}({p(e.a)}, {p(e.b)})"
            return f"({p(e.a)}{_SYMBOL[e.op]}{p(e.b)})"
        if isinstance(e, E.Not):
            return f"!{p(e.a)}"
        if isinstance(e, E.Select):
            return f"select({p(e.cond)}, {p(e.t)}, {p(e.f)})"
        if isinstance(e, E.Cast):
            return f"{e.dtype}({p(e.value)})"
        if isinstance(e, E.Call):
            args = ", ".join(p(a) for a in e.args)
            if e.kind == "intrin":
                return f"{e.name}({args})"
            sep = ", " if args else ""
            return f'call_{e.kind}("{e.name}"{sep}{args})'
        if isinstance(e, E.Load):
            return f"{self.buf(e.buffer)}[{p(e.index)}]"
        if isinstance(e, E.Ramp):
            return f"ramp({p(e.base)}, {p(e.stride)}, {e.lanes})"
        if isinstance(e, E.Broadcast):
            return f"broadcast({p(e.value)}, {e.lanes})"
        if isinstance(e, E.AccessPtr):
            return f'access_ptr({self.buf(e.buffer)}, {p(e.offset)}, "{e.mode}")'
        if isinstance(e, E.ProducerLoad):
            return f"{e.tensor.name}[{', '.join(p(i) for i in e.indices)}]"
        if isinstance(e, E.Reduce):
            axes = ", ".join(self.name(iv.var, iv.var.name) for iv in e.axis)
            where = "" if e.condition is None else f", where={p(e.condition)}"
            return f"{e.combiner.name}({p(e.source)}, axis=[{axes}]{where})"
        return f"<{type(e).__name__}>"

    def stmt(self, s, indent: int, out: list[str]) -> None:
        pad = "  " * indent
        if isinstance(s, S.SeqStmt):
            for part in s.seq:
                self.stmt(part, indent, out)
        elif isinstance(s, S.For):
            for key, value in s.pragmas:
                out.append(f"{pad}// pragma {key}" + ("" if value is None else f" = {value!r}"))
            kind = "" if s.kind == "serial" else f' "{s.kind}"'
            v = self.name(s.var, s.var.name)
            out.append(f"{pad}for ({v}, {self.expr(s.min)}, {self.expr(s.extent)}){kind} {{")
            self.stmt(s.body, indent + 1, out)
            out.append(pad + "}")
        elif isinstance(s, S.Store):
            out.append(f"{pad}{self.buf(s.buffer)}[{self.expr(s.index)}] = {self.expr(s.value)}")
        elif isinstance(s, S.IfThenElse):
            out.append(f"{pad}if ({self.expr(s.cond)}) {{")
            self.stmt(s.then_case, indent + 1, out)
            if s.else_case is not None:
                out.append(pad + "} else {")
                self.stmt(s.else_case, indent + 1, out)
            out.append(pad + "}")
        elif isinstance(s, S.Allocate):
            b = s.buffer
            dims = ", ".join(self.expr(d) for d in b.shape)
            out.append(f"{pad}allocate {self.buf(b)}: {b.dtype}[{dims}], {b.scope}")
            self.stmt(s.body, indent, out)
        elif isinstance(s, S.Evaluate):
            out.append(pad + self.expr(s.value))
        else:
            out.append(f"{pad}<{type(s).__name__}>")


def expr_str(e) -> str:
    return Printer().expr(e)


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
