"""Generic traversal: rebuild expressions and statements bottom-up.

``Mutator.expr(e)`` and ``Mutator.stmt(s)`` dispatch on the node type to a
method ``visit_<ClassName>``; the default rebuilds the node from visited
children and returns the original object when nothing changed.
"""

from __future__ import annotations

from aot.tir import expr as E
from aot.tir import stmt as S


class Mutator:
    def expr(self, e):
        method = getattr(self, "visit_" + type(e).__name__, None)
        if method is not None:
            return method(e)
        return self.default_expr(e)

    def stmt(self, s):
        if s is None:
            return None
        method = getattr(self, "visit_" + type(s).__name__, None)
        if method is not None:
            return method(s)
        return self.default_stmt(s)

    def default_expr(self, e):
        x = self.expr
        if isinstance(e, (E.IntImm, E.FloatImm, E.StringImm, E.FuncRef, E.Var)):
            return e
        if isinstance(e, E.Binary):
            a, b = x(e.a), x(e.b)
            return e if (a is e.a and b is e.b) else E.Binary(e.op, a, b)
        if isinstance(e, E.Not):
            a = x(e.a)
            return e if a is e.a else E.Not(a)
        if isinstance(e, E.Select):
            c, t, f = x(e.cond), x(e.t), x(e.f)
            return e if (c is e.cond and t is e.t and f is e.f) else E.Select(c, t, f)
        if isinstance(e, E.Cast):
            v = x(e.value)
            return e if v is e.value else E.Cast(e.dtype, v)
        if isinstance(e, E.Call):
            args = [x(a) for a in e.args]
            same = all(a is b for a, b in zip(args, e.args))
            return e if same else E.Call(e.dtype, e.name, args, e.kind)
        if isinstance(e, E.Load):
            i = x(e.index)
            return e if i is e.index else E.Load(e.dtype, e.buffer, i)
        if isinstance(e, E.Ramp):
            b, s = x(e.base), x(e.stride)
            return e if (b is e.base and s is e.stride) else E.Ramp(b, s, e.lanes)
        if isinstance(e, E.Broadcast):
            v = x(e.value)
            return e if v is e.value else E.Broadcast(v, e.lanes)
        if isinstance(e, E.AccessPtr):
            o = x(e.offset)
            return e if o is e.offset else E.AccessPtr(e.buffer, o, e.mode)
        if isinstance(e, E.Address):
            o = x(e.offset)
            return e if o is e.offset else E.Address(e.buffer, o, e.pointee, e.mode)
        if isinstance(e, E.ProducerLoad):
            idx = [x(i) for i in e.indices]
            same = all(a is b for a, b in zip(idx, e.indices))
            return e if same else E.ProducerLoad(e.tensor, idx)
        if isinstance(e, E.Reduce):
            src = x(e.source)
            cond = x(e.condition) if e.condition is not None else None
            init = x(e.init) if e.init is not None else None
            if src is e.source and cond is e.condition and init is e.init:
                return e
            return E.Reduce(e.combiner, src, e.axis, cond, init)
        raise TypeError(f"unknown expression node {type(e).__name__}")

    def default_stmt(self, s):
        x, st = self.expr, self.stmt
        if isinstance(s, S.For):
            mn, ext, body = x(s.min), x(s.extent), st(s.body)
            if mn is s.min and ext is s.extent and body is s.body:
                return s
            return S.For(s.var, mn, ext, s.kind, body, s.pragmas)
        if isinstance(s, S.Store):
            v, i = x(s.value), x(s.index)
            return s if (v is s.value and i is s.index) else S.Store(s.buffer, v, i)
        if isinstance(s, S.IfThenElse):
            c, t, f = x(s.cond), st(s.then_case), st(s.else_case)
            if c is s.cond and t is s.then_case and f is s.else_case:
                return s
            return S.IfThenElse(c, t, f)
        if isinstance(s, S.SeqStmt):
            parts = [st(p) for p in s.seq]
            if all(a is b for a, b in zip(parts, s.seq)):
                return s
            return S.seq(*parts)
        if isinstance(s, S.Allocate):
            body = st(s.body)
            return s if body is s.body else S.Allocate(s.buffer, body)
        if isinstance(s, S.Evaluate):
            v = x(s.value)
            return s if v is s.value else S.Evaluate(v)
        if isinstance(s, S.LetStmt):
            v, body = x(s.value), st(s.body)
            return s if (v is s.value and body is s.body) else S.LetStmt(s.var, v, body)
        if isinstance(s, S.Return):
            v = x(s.value)
            return s if v is s.value else S.Return(v)
        if isinstance(s, S.Comment):
            return s
        raise TypeError(f"unknown statement node {type(s).__name__}")


class Substitute(Mutator):
    """Replace variables by expressions (``{Var: PrimExpr}``)."""

    def __init__(self, vmap):
        self.vmap = vmap

    def visit_Var(self, v):
        return self.vmap.get(v, v)


def substitute(node, vmap):
    if not vmap:
        return node
    m = Substitute(vmap)
    return m.stmt(node) if isinstance(node, S.Stmt) else m.expr(node)


def children(e):
    """The direct sub-expressions of an expression."""
    if isinstance(e, E.Binary):
        return (e.a, e.b)
    if isinstance(e, E.Not):
        return (e.a,)
    if isinstance(e, E.Select):
        return (e.cond, e.t, e.f)
    if isinstance(e, E.Cast):
        return (e.value,)
    if isinstance(e, E.Call):
        return e.args
    if isinstance(e, E.Load):
        return (e.index,)
    if isinstance(e, E.Ramp):
        return (e.base, e.stride)
    if isinstance(e, E.Broadcast):
        return (e.value,)
    if isinstance(e, (E.AccessPtr, E.Address)):
        return (e.offset,)
    if isinstance(e, E.ProducerLoad):
        return e.indices
    if isinstance(e, E.Reduce):
        out = [e.source]
        if e.condition is not None:
            out.append(e.condition)
        if e.init is not None:
            out.append(e.init)
        return tuple(out)
    return ()


def walk(e):
    """All sub-expressions of ``e`` in pre-order."""
    stack = [e]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(children(n)))


def stmt_exprs(s):
    """Every expression directly held by statements under ``s``."""
    stack = [s]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        if isinstance(n, S.For):
            yield n.min
            yield n.extent
            stack.append(n.body)
        elif isinstance(n, S.Store):
            yield n.value
            yield n.index
        elif isinstance(n, S.IfThenElse):
            yield n.cond
            stack.extend([n.then_case, n.else_case])
        elif isinstance(n, S.SeqStmt):
            stack.extend(n.seq)
        elif isinstance(n, S.Allocate):
            stack.append(n.body)
        elif isinstance(n, (S.Evaluate, S.Return)):
            yield n.value
        elif isinstance(n, S.LetStmt):
            yield n.value
            stack.append(n.body)


def free_vars(e) -> set:
    return {n for n in walk(e) if isinstance(n, E.Var)}


def uses_var(e, vars_) -> bool:
    return any(isinstance(n, E.Var) and n in vars_ for n in walk(e))


def all_nodes(stmt):
    """Every statement under ``stmt`` (itself included), then every expression they hold."""
    stack = [stmt]
    while stack:
        s = stack.pop()
        if s is None:
            continue
        yield s
        if isinstance(s, S.For):
            stack.append(s.body)
        elif isinstance(s, S.SeqStmt):
            stack.extend(s.seq)
        elif isinstance(s, S.IfThenElse):
            stack.extend([s.then_case, s.else_case])
        elif isinstance(s, (S.Allocate, S.LetStmt)):
            stack.append(s.body)
    for e in stmt_exprs(stmt):
        yield from walk(e)
