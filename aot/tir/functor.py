"""Generic traversal: rebuild expressions and statements bottom-up.

``Mutator.expr(e)`` and ``Mutator.stmt(s)`` dispatch on the node type to a
method ``visit_<ClassName>``; the default rebuilds the node from visited
children and returns the original object when nothing changed.  The
analyses (``children``, ``walk``, ``free_vars``) look nodes up by class in
tables too, as every lowering pass runs through them.
"""

from __future__ import annotations

from aot.tir import expr as E
from aot.tir import stmt as S


class Mutator:
    """Rebuilds what its ``visit_<ClassName>`` methods change.

    Each node class is looked up once per Mutator class: ``_visitors`` maps
    it to the class's ``visit_`` method or to the default rebuild, so a visit
    costs one dictionary lookup instead of a method name built and searched
    at every node.  ``default_expr`` and ``default_stmt`` are what a
    ``visit_`` method calls to rebuild a node it does not change itself."""

    _visitors: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._visitors = {}  # each class its own: its visit_ methods differ

    @classmethod
    def _visitor(cls, node_type):
        visit = getattr(cls, "visit_" + node_type.__name__, None)
        if visit is None:
            visit = _REBUILD.get(node_type)
            if visit is None:
                kind = "statement" if issubclass(node_type, S.Stmt) else "expression"
                raise TypeError(f"unknown {kind} node {node_type.__name__}")
        cls._visitors[node_type] = visit
        return visit

    def expr(self, e):
        visit = self._visitors.get(type(e)) or self._visitor(type(e))
        return visit(self, e)

    def stmt(self, s):
        if s is None:
            return None
        visit = self._visitors.get(type(s)) or self._visitor(type(s))
        return visit(self, s)

    def default_expr(self, e):
        rebuild = _REBUILD.get(type(e))
        if rebuild is None or not isinstance(e, E.PrimExpr):
            raise TypeError(f"unknown expression node {type(e).__name__}")
        return rebuild(self, e)

    def default_stmt(self, s):
        rebuild = _REBUILD.get(type(s))
        if rebuild is None or not isinstance(s, S.Stmt):
            raise TypeError(f"unknown statement node {type(s).__name__}")
        return rebuild(self, s)


# -- the default rebuilds: the node itself when no child changed ---------------
def _leaf(m, e):
    return e


def _binary(m, e):
    a, b = m.expr(e.a), m.expr(e.b)
    return e if (a is e.a and b is e.b) else E.Binary(e.op, a, b)


def _not(m, e):
    a = m.expr(e.a)
    return e if a is e.a else E.Not(a)


def _select(m, e):
    c, t, f = m.expr(e.cond), m.expr(e.t), m.expr(e.f)
    return e if (c is e.cond and t is e.t and f is e.f) else E.Select(c, t, f)


def _cast(m, e):
    v = m.expr(e.value)
    return e if v is e.value else E.Cast(e.dtype, v)


def _call(m, e):
    args = [m.expr(a) for a in e.args]
    same = all(a is b for a, b in zip(args, e.args))
    return e if same else E.Call(e.dtype, e.name, args, e.kind)


def _load(m, e):
    i = m.expr(e.index)
    return e if i is e.index else E.Load(e.dtype, e.buffer, i)


def _ramp(m, e):
    b, s = m.expr(e.base), m.expr(e.stride)
    return e if (b is e.base and s is e.stride) else E.Ramp(b, s, e.lanes)


def _broadcast(m, e):
    v = m.expr(e.value)
    return e if v is e.value else E.Broadcast(v, e.lanes)


def _access_ptr(m, e):
    o = m.expr(e.offset)
    return e if o is e.offset else E.AccessPtr(e.buffer, o, e.mode)


def _address(m, e):
    o = m.expr(e.offset)
    return e if o is e.offset else E.Address(e.buffer, o, e.pointee, e.mode)


def _producer_load(m, e):
    idx = [m.expr(i) for i in e.indices]
    same = all(a is b for a, b in zip(idx, e.indices))
    return e if same else E.ProducerLoad(e.tensor, idx)


def _reduce(m, e):
    src = m.expr(e.source)
    cond = m.expr(e.condition) if e.condition is not None else None
    init = m.expr(e.init) if e.init is not None else None
    if src is e.source and cond is e.condition and init is e.init:
        return e
    return E.Reduce(e.combiner, src, e.axis, cond, init)


def _for(m, s):
    mn, ext, body = m.expr(s.min), m.expr(s.extent), m.stmt(s.body)
    if mn is s.min and ext is s.extent and body is s.body:
        return s
    return S.For(s.var, mn, ext, s.kind, body, s.pragmas)


def _store(m, s):
    v, i = m.expr(s.value), m.expr(s.index)
    return s if (v is s.value and i is s.index) else S.Store(s.buffer, v, i)


def _if_then_else(m, s):
    c, t, f = m.expr(s.cond), m.stmt(s.then_case), m.stmt(s.else_case)
    if c is s.cond and t is s.then_case and f is s.else_case:
        return s
    return S.IfThenElse(c, t, f)


def _seq(m, s):
    parts = [m.stmt(p) for p in s.seq]
    if all(a is b for a, b in zip(parts, s.seq)):
        return s
    return S.seq(*parts)


def _allocate(m, s):
    body = m.stmt(s.body)
    return s if body is s.body else S.Allocate(s.buffer, body)


def _evaluate(m, s):
    v = m.expr(s.value)
    return s if v is s.value else S.Evaluate(v)


def _let(m, s):
    v, body = m.expr(s.value), m.stmt(s.body)
    return s if (v is s.value and body is s.body) else S.LetStmt(s.var, v, body)


def _return(m, s):
    v = m.expr(s.value)
    return s if v is s.value else S.Return(v)


_REBUILD = {
    E.IntImm: _leaf, E.FloatImm: _leaf, E.StringImm: _leaf, E.FuncRef: _leaf, E.Var: _leaf,
    E.Binary: _binary, E.Not: _not, E.Select: _select, E.Cast: _cast, E.Call: _call,
    E.Load: _load, E.Ramp: _ramp, E.Broadcast: _broadcast, E.AccessPtr: _access_ptr,
    E.Address: _address, E.ProducerLoad: _producer_load, E.Reduce: _reduce,
    S.For: _for, S.Store: _store, S.IfThenElse: _if_then_else, S.SeqStmt: _seq,
    S.Allocate: _allocate, S.Evaluate: _evaluate, S.LetStmt: _let, S.Return: _return,
    S.Comment: _leaf,
}


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
    get = _CHILDREN.get(type(e))
    return () if get is None else get(e)


def _reduce_children(e):
    out = [e.source]
    if e.condition is not None:
        out.append(e.condition)
    if e.init is not None:
        out.append(e.init)
    return tuple(out)


_CHILDREN = {
    E.Binary: lambda e: (e.a, e.b),
    E.Not: lambda e: (e.a,),
    E.Select: lambda e: (e.cond, e.t, e.f),
    E.Cast: lambda e: (e.value,),
    E.Call: lambda e: e.args,
    E.Load: lambda e: (e.index,),
    E.Ramp: lambda e: (e.base, e.stride),
    E.Broadcast: lambda e: (e.value,),
    E.AccessPtr: lambda e: (e.offset,),
    E.Address: lambda e: (e.offset,),
    E.ProducerLoad: lambda e: e.indices,
    E.Reduce: _reduce_children,
}


def walk(e):
    """All sub-expressions of ``e`` in pre-order."""
    return _walk_all([e])


def _walk_all(exprs):
    """The sub-expressions of each of ``exprs`` in turn, each in pre-order:
    one stack for all (every analysis of the passes walks through here)."""
    stack = exprs[::-1]
    while stack:
        n = stack.pop()
        yield n
        get = _CHILDREN.get(type(n))
        if get is not None:
            stack.extend(reversed(get(n)))


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
    yield from _walk_all(list(stmt_exprs(stmt)))
