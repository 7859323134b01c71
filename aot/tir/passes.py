"""Loop passes: PrimFunc -> PrimFunc, each with a stable name.

:data:`PASSES` maps names to functions; :data:`DEFAULT_PIPELINE` is the
order ``lower`` runs them in.  Every pass preserves what the function
computes; tests check each one on before/expected programs and by running
both sides.
"""

from __future__ import annotations

from aot.errors import PassError, did_you_mean, one_of
from aot.tir import expr as E
from aot.tir import stmt as S
from aot.tir.functor import (Mutator, Substitute, all_nodes, free_vars, substitute, uses_var,
                             walk)
from aot.tir.simplify import Analyzer, equal, linear


class _StmtSimplifier(Mutator):
    """Simplifies every expression knowing the ranges of enclosing loops."""

    def __init__(self, an: Analyzer):
        self.an = an

    def expr(self, e):
        return self.an.simplify(e)

    def visit_For(self, s):
        mn, ext = self.an.simplify(s.min), self.an.simplify(s.extent)
        saved = self.an.ranges.get(s.var)
        if isinstance(mn, E.IntImm) and isinstance(ext, E.IntImm):
            if ext.value <= 0:
                return None
            self.an.bind(s.var, mn.value, mn.value + ext.value - 1)
        body = self.stmt(s.body)
        if saved is None:
            self.an.ranges.pop(s.var, None)
        else:
            self.an.ranges[s.var] = saved
        if body is None:
            return None
        return S.For(s.var, mn, ext, s.kind, body, s.pragmas)

    def visit_IfThenElse(self, s):
        c = self.an.simplify(s.cond)
        if isinstance(c, E.IntImm):
            return self.stmt(s.then_case if c.value else s.else_case)
        t, f = self.stmt(s.then_case), self.stmt(s.else_case)
        if t is None and f is None:
            return None
        if t is None:
            return S.IfThenElse(E.Not(c), f)
        return S.IfThenElse(c, t, f)

    def visit_SeqStmt(self, s):
        parts = [self.stmt(p) for p in s.seq]
        parts = [p for p in parts if p is not None]
        return S.seq(*parts) if parts else None

    def visit_Allocate(self, s):
        body = self.stmt(s.body)
        return None if body is None else S.Allocate(s.buffer, body)


def _nonempty(func, body):
    return func.with_body(body if body is not None else S.Evaluate(E.const(0)))


def simplify_pass(func: S.PrimFunc) -> S.PrimFunc:
    """Canonicalize index arithmetic and fold conditions using loop ranges."""
    return _nonempty(func, _StmtSimplifier(Analyzer()).stmt(func.body))


# -- loop partitioning --------------------------------------------------------
def _likely_conds(body, memo=None):
    """The conjuncts of every ``likely`` guard under ``body``, in the order of
    :func:`stmt_exprs`.  ``memo`` (``id(stmt) -> (stmt, conds)``) keeps each
    statement's list, so asking for a loop and then for every loop inside it
    walks each expression once; the lists are shared, never to be changed."""
    if memo is None:
        memo = {}
    return _conds_of(body, memo)


def _expr_likely(e):
    out = []
    for n in walk(e):
        if isinstance(n, E.Call) and n.name == "likely":
            out.extend(_conjuncts(n.args[0]))
    return out


def _conds_of(s, memo):
    # stmt_exprs is a depth-first walk with a stack: a statement's own
    # expressions first, then its children's subtrees, last child first.
    if s is None:
        return []
    hit = memo.get(id(s))
    if hit is not None and hit[0] is s:
        return hit[1]
    if isinstance(s, S.For):
        out = _expr_likely(s.min) + _expr_likely(s.extent) + _conds_of(s.body, memo)
    elif isinstance(s, S.Store):
        out = _expr_likely(s.value) + _expr_likely(s.index)
    elif isinstance(s, S.IfThenElse):
        out = (_expr_likely(s.cond) + _conds_of(s.else_case, memo)
               + _conds_of(s.then_case, memo))
    elif isinstance(s, S.SeqStmt):
        out = [c for part in reversed(s.seq) for c in _conds_of(part, memo)]
    elif isinstance(s, S.Allocate):
        out = _conds_of(s.body, memo)
    elif isinstance(s, S.Evaluate):
        out = _expr_likely(s.value)
    else:
        out = []
    memo[id(s)] = (s, out)
    return out


def _conjuncts(c):
    if isinstance(c, E.Binary) and c.op == "and":
        return _conjuncts(c.a) + _conjuncts(c.b)
    return [c]


def _inner_ranges(body):
    out = {}
    stack = [body]
    while stack:
        s = stack.pop()
        if isinstance(s, S.For):
            if isinstance(s.min, E.IntImm) and isinstance(s.extent, E.IntImm):
                out[s.var] = (s.min.value, s.min.value + s.extent.value - 1)
            stack.append(s.body)
        elif isinstance(s, S.SeqStmt):
            stack.extend(s.seq)
        elif isinstance(s, S.IfThenElse):
            stack.extend(p for p in (s.then_case, s.else_case) if p is not None)
        elif isinstance(s, S.Allocate):
            stack.append(s.body)
    return out


def _negative_form(c):
    """``d`` with ``c`` equivalent to ``d < 0`` (integer comparisons)."""
    if not isinstance(c, E.Binary) or c.op not in ("lt", "le", "gt", "ge"):
        return None
    if c.a.dtype not in ("int32", "int64"):
        return None
    if c.op == "lt":
        return c.a - c.b
    if c.op == "le":
        return c.a - c.b - 1
    if c.op == "gt":
        return c.b - c.a
    return c.b - c.a - 1


class _Partitioner(Mutator):
    def __init__(self):
        self.an = Analyzer()
        self.likely: dict = {}  # _likely_conds's memo, for this pass

    def visit_For(self, s):
        if not (isinstance(s.min, E.IntImm) and isinstance(s.extent, E.IntImm)):
            return S.For(s.var, s.min, s.extent, s.kind, self.stmt(s.body), s.pragmas)
        lo, end = s.min.value, s.min.value + s.extent.value
        split = self.find_split(s, lo, end)
        if split is not None:
            parts = [S.For(s.var, a, b - a, s.kind, s.body, s.pragmas)
                     for a, b in ((lo, split), (split, end))]
            out = []
            for part in parts:
                part = _StmtSimplifier(self.an).stmt(part)
                if part is not None:
                    out.append(self.stmt(part))
            return S.seq(*out) if out else None
        saved = self.an.ranges.get(s.var)
        self.an.bind(s.var, lo, end - 1)
        body = self.stmt(s.body)
        if saved is None:
            self.an.ranges.pop(s.var, None)
        else:
            self.an.ranges[s.var] = saved
        return None if body is None else S.For(s.var, s.min, s.extent, s.kind, body, s.pragmas)

    def find_split(self, s, lo, end):
        inner = None
        for cond in _likely_conds(s.body, self.likely):
            d = _negative_form(cond)
            # simplifying never brings a variable in: a guard without the
            # loop's variable cannot split it (most guards of a nest)
            if d is None or not uses_var(d, (s.var,)):
                continue
            lf = linear(self.an.simplify(d))
            k = 0
            rest = E.IntImm(lf.dtype, lf.const)
            for atom, c in lf.terms.values():
                if atom is s.var:
                    k = c
                else:
                    rest = rest + (atom * c if c != 1 else atom)
            if k == 0 or s.var in free_vars(rest):  # not affine in the loop variable
                continue
            if inner is None:
                inner = self.an.with_ranges(_inner_ranges(s.body))
            _, rmax = inner.bound(rest)
            if rmax is None:
                continue
            if k > 0:   # k*v + rest < 0 for every v < point
                point = (-rmax - 1) // k + 1
            else:       # ... for every v >= point
                point = rmax // (-k) + 1
            if lo < point < end:
                return point
        return None

    def visit_IfThenElse(self, s):
        return S.IfThenElse(s.cond, self.stmt(s.then_case), self.stmt(s.else_case))


def loop_partition(func: S.PrimFunc) -> S.PrimFunc:
    """Split loops at the points where a ``likely`` guard becomes provably
    true or false, so the main part runs without the guard and the tail
    keeps it (e.g. a split by 20 of 1024: ``x.outer`` in ``[0, 51)``
    unguarded, then ``x.outer = 51`` with ``x.inner < 4``)."""
    return _nonempty(func, _Partitioner().stmt(func.body))


# -- unrolling -----------------------------------------------------------------
class _Unroller(Mutator):
    def visit_For(self, s):
        body = self.stmt(s.body)
        if s.kind == "unrolled" and isinstance(s.extent, E.IntImm) \
                and isinstance(s.min, E.IntImm):
            copies = [substitute(body, {s.var: E.const(s.min.value + i)})
                      for i in range(s.extent.value)]
            return S.seq(*copies) if copies else None
        kind = "serial" if s.kind == "unrolled" else s.kind
        return S.For(s.var, s.min, s.extent, kind, body, s.pragmas)


def unroll(func: S.PrimFunc) -> S.PrimFunc:
    """Replace each ``unrolled`` loop of constant extent by one copy of its
    body per iteration (a loop with a symbolic extent stays a loop)."""
    return _nonempty(func, _Unroller().stmt(func.body))


# -- vectorization --------------------------------------------------------------
VECTOR_OPS = ("add", "sub", "mul", "div", "shl", "shr", "bitand", "bitor", "bitxor",
              "min", "max", "eq", "ne", "lt", "le", "gt", "ge")
MAX_LANES = 64


class _NotVectorizable(Exception):
    pass


class _Vectorizer:
    def __init__(self, var, base, lanes):
        self.var, self.base, self.lanes = var, base, lanes

    def index(self, idx):
        """``(k, base)`` with ``idx == base + k * (var - min)``."""
        lf = linear(idx)
        if lf is None:
            raise _NotVectorizable()
        k = 0
        for atom, c in lf.terms.values():
            if atom is self.var:
                k = c
            elif self.var in free_vars(atom):  # e.g. floordiv(var, 4): not affine
                raise _NotVectorizable()
        base = substitute(idx, {self.var: self.base})
        return k, base

    def expr(self, e):
        """Return ``(expr, is_vector)``."""
        if isinstance(e, E.Var) and e is self.var:
            return E.Ramp(self.base, E.const(1), self.lanes), True
        if isinstance(e, E.Load):
            k, base = self.index(e.index)
            if k == 0:
                return E.Load(e.dtype, e.buffer, base), False
            if k != 1:
                raise _NotVectorizable()
            return E.Load(E.with_lanes(e.dtype, self.lanes), e.buffer,
                          E.Ramp(base, E.const(1), self.lanes)), True
        if isinstance(e, E.Binary):
            (a, va), (b, vb) = self.expr(e.a), self.expr(e.b)
            if not (va or vb):
                return E.Binary(e.op, a, b), False
            if e.op not in VECTOR_OPS or E.element(a.dtype) == "bool":
                raise _NotVectorizable()
            a = a if va else E.Broadcast(a, self.lanes)
            b = b if vb else E.Broadcast(b, self.lanes)
            return E.Binary(e.op, a, b), True
        if isinstance(e, E.Select):
            (c, vc), (t, vt), (f, vf) = self.expr(e.cond), self.expr(e.t), self.expr(e.f)
            if not (vc or vt or vf):
                return E.Select(c, t, f), False
            # C has no vector ?:, codegen blends with the comparison's mask,
            # which has the width of the compared elements.
            if not (vc and isinstance(c, E.Binary) and c.op in E.COMPARISONS
                    and E.bits(c.a.dtype) == E.bits(e.dtype)):
                raise _NotVectorizable()
            t = t if vt else E.Broadcast(t, self.lanes)
            f = f if vf else E.Broadcast(f, self.lanes)
            return E.Select(c, t, f), True
        if isinstance(e, E.Cast):
            v, isv = self.expr(e.value)
            if not isv:
                return E.Cast(e.dtype, v), False
            if E.element(e.dtype) == "bool" or E.element(v.dtype) == "bool":
                raise _NotVectorizable()
            return E.Cast(E.with_lanes(e.dtype, self.lanes), v), True
        if self.var in free_vars(e):
            raise _NotVectorizable()
        return e, False

    def store(self, s):
        k, base = self.index(s.index)
        if k != 1:
            raise _NotVectorizable()
        v, isv = self.expr(s.value)
        if E.element(v.dtype) == "bool":
            raise _NotVectorizable()  # masks are not storable bool vectors
        if not isv:
            v = E.Broadcast(v, self.lanes)
        return S.Store(s.buffer, v, E.Ramp(base, E.const(1), self.lanes))


class _VectorizePass(Mutator):
    def visit_For(self, s):
        body = self.stmt(s.body)
        if s.kind != "vectorized":
            return S.For(s.var, s.min, s.extent, s.kind, body, s.pragmas)
        ext = s.extent.value if isinstance(s.extent, E.IntImm) else 0
        stores = body.seq if isinstance(body, S.SeqStmt) else (body,)
        if 2 <= ext <= MAX_LANES and ext & (ext - 1) == 0 \
                and all(isinstance(st, S.Store) for st in stores):
            vec = _Vectorizer(s.var, s.min, ext)
            try:
                return S.seq(*[vec.store(st) for st in stores])
            except _NotVectorizable:
                pass
        return S.For(s.var, s.min, s.extent, "serial", body, s.pragmas)


def vectorize(func: S.PrimFunc) -> S.PrimFunc:
    """Turn each ``vectorized`` loop into vector statements when its extent
    is a power of two up to 64, its body is a list of stores whose index
    advances by one element per iteration, and every operation on varying
    values is arithmetic, bitwise, a comparison, min/max or a select whose
    condition compares elements as wide as its result (C vector
    extensions; selects become mask blends); reads that do
    not depend on the loop are broadcast.  Any other vectorized loop becomes
    a scalar loop (the C compiler may still vectorize it)."""
    return _nonempty(func, _VectorizePass().stmt(func.body))


# -- removal of no-ops --------------------------------------------------------------
class _NoOpRemover(Mutator):
    """One pass.  A loop of one iteration is replaced by its body with the
    variable bound to the start: the bindings (``env``) are applied to each
    statement's own expressions as the pass reaches it, which gives what
    substituting the whole body at every such loop gives, without walking a
    nest of k such loops k times (unrolled tuning candidates have many)."""

    def __init__(self):
        self.env: dict = {}

    def _bound(self, e):
        return Substitute(self.env).expr(e) if self.env else e

    def visit_For(self, s):
        mn, ext = self._bound(s.min), self._bound(s.extent)
        if isinstance(ext, E.IntImm) and ext.value <= 0:
            return None
        if isinstance(ext, E.IntImm) and ext.value == 1 and s.kind != "parallel":
            if s.var in self.env:  # already bound outside: substituted there first
                return self.stmt(s.body)
            self.env[s.var] = mn
            try:
                return self.stmt(s.body)
            finally:
                del self.env[s.var]
        body = self.stmt(s.body)
        return None if body is None else S.For(s.var, mn, ext, s.kind, body, s.pragmas)

    def visit_Evaluate(self, s):
        v = self._bound(s.value)
        if isinstance(v, (E.IntImm, E.FloatImm)):
            return None
        return s if v is s.value else S.Evaluate(v)

    def visit_Store(self, s):
        v, i = self._bound(s.value), self._bound(s.index)
        if isinstance(v, E.Load) and v.buffer is s.buffer and _same(v.index, i):
            return None
        return s if (v is s.value and i is s.index) else S.Store(s.buffer, v, i)

    def visit_SeqStmt(self, s):
        parts = [p for p in (self.stmt(p) for p in s.seq) if p is not None]
        return S.seq(*parts) if parts else None

    def visit_IfThenElse(self, s):
        cond = self._bound(s.cond)
        if isinstance(cond, E.IntImm):
            return self.stmt(s.then_case if cond.value else s.else_case)
        t, f = self.stmt(s.then_case), self.stmt(s.else_case)
        if t is None and f is None:
            return None
        if t is None:
            return S.IfThenElse(E.Not(cond), f)
        return S.IfThenElse(cond, t, f)

    def visit_Allocate(self, s):
        body = self.stmt(s.body)
        if body is None:
            return None
        if not _reads_buffer(body, s.buffer):
            # Nothing reads the scratch buffer here: its stores are dead.
            return self.stmt(_DropStores(s.buffer).stmt(body))
        return S.Allocate(s.buffer, body)


class _DropStores(Mutator):
    def __init__(self, buf):
        self.data = buf.data

    def visit_Store(self, s):
        return None if s.buffer.data is self.data else s


def _reads_buffer(stmt, buf) -> bool:
    for n in all_nodes(stmt):
        if isinstance(n, (E.Load, E.AccessPtr)) and n.buffer.data is buf.data:
            return True
    return False


def _same(a, b):
    return equal(a, b)


def _buffers_used(stmt) -> set:
    """The ``id`` of the data of every buffer ``stmt`` loads, stores or points into."""
    return {id(n.buffer.data) for n in all_nodes(stmt)
            if isinstance(n, (E.Load, E.AccessPtr, S.Store))}


def remove_no_op(func: S.PrimFunc) -> S.PrimFunc:
    """Drop empty loops, loops of one iteration (the variable becomes the
    start), constant conditions, constant expression statements, stores of
    a value into the place it was read from, and scratch buffers that are
    never read (with the stores into them)."""
    return _nonempty(func, _NoOpRemover().stmt(func.body))


# -- storage rewrite -------------------------------------------------------------------
class _ReplaceBuffer(Mutator):
    def __init__(self, bmap):
        self.bmap = bmap

    def _b(self, b):
        return self.bmap.get(id(b.data), b)

    def visit_Load(self, e):
        return E.Load(e.dtype, self._b(e.buffer), self.expr(e.index))

    def visit_AccessPtr(self, e):
        b = self._b(e.buffer)
        if b is e.buffer:
            return E.AccessPtr(e.buffer, self.expr(e.offset), e.mode)
        return E.AccessPtr(b, self.expr(e.offset), e.mode)

    def visit_Store(self, s):
        return S.Store(self._b(s.buffer), self.expr(s.value), self.expr(s.index))


class _StripAllocs(Mutator):
    """Drop nested declarations of buffers declared at the function level
    (loop partitioning leaves one copy in the main loop and one in the
    tail), except inside parallel loops, where each thread needs its own."""

    def __init__(self, ids):
        self.ids = ids

    def visit_For(self, s):
        if s.kind == "parallel":
            return s
        return self.default_stmt(s)

    def visit_Allocate(self, s):
        body = self.stmt(s.body)
        if id(s.buffer.data) in self.ids:
            return body
        return S.Allocate(s.buffer, body)


class _DropAllocs(Mutator):
    def __init__(self, ids):
        self.ids = ids

    def visit_Allocate(self, s):
        body = self.stmt(s.body)
        if id(s.buffer.data) in self.ids:
            return body
        return s if body is s.body else S.Allocate(s.buffer, body)


def drop_allocations(stmt, ids):
    """``stmt`` without the declarations of the buffers whose data variables'
    ``id`` is in ``ids`` (their bodies kept): what a rewrite leaves once no
    statement reads those buffers any more (the accumulator rows of a fused
    epilogue)."""
    return _DropAllocs(set(ids)).stmt(stmt)


def _flatten_allocs(stmt):
    """Top-level scratch buffers and the flat statement list they cover
    (buffers are distinct, so hoisting their declarations is safe)."""
    if isinstance(stmt, S.Allocate):
        allocs, stmts = _flatten_allocs(stmt.body)
        return [stmt.buffer] + allocs, stmts
    if isinstance(stmt, S.SeqStmt):
        allocs, stmts = [], []
        for part in stmt.seq:
            a, st = _flatten_allocs(part)
            allocs += a
            stmts += st
        return allocs, stmts
    return [], [stmt]


def storage_rewrite(func: S.PrimFunc) -> S.PrimFunc:
    """Share scratch buffers: the function-level scratch buffers (stages
    computed at the root) get the statement range where they are used, and
    buffers of the same dtype whose ranges do not overlap share one array
    (as large as the largest); each shared array is declared once."""
    allocs, stmts = _flatten_allocs(func.body)
    # Unrolled copies repeat one allocation; its contents never outlive a copy.
    allocs = list({id(b.data): b for b in allocs}.values())
    if not allocs or any(b.size() is None for b in allocs):
        return func
    body = S.seq(*stmts)
    live = {}
    used = [_buffers_used(st) for st in stmts]  # one walk of each, not one per buffer
    for b in allocs:
        users = [i for i, u in enumerate(used) if id(b.data) in u]
        live[id(b)] = (users[0], users[-1]) if users else (0, -1)
    slots: list[list] = []   # [buffer, last_use, members]
    bmap = {}
    for b in sorted(allocs, key=lambda b: live[id(b)][0]):
        first, last = live[id(b)]
        for slot in slots:
            if slot[0].dtype == b.dtype and slot[1] < first:
                slot[1] = max(slot[1], last)
                slot[2].append(b)
                break
        else:
            slots.append([b, last, [b]])
    out_allocs = []
    for slot in slots:
        members = slot[2]
        size = max(m.size() for m in members)
        name = members[0].name if len(members) == 1 else "_".join(m.name for m in members)
        shared = members[0] if len(members) == 1 else \
            S.Buffer(name, members[0].dtype, [size], scope="local")
        for m in members:
            if shared is not m:
                bmap[id(m.data)] = shared
        out_allocs.append(shared)
    body = _StripAllocs({id(b.data) for b in allocs}).stmt(body)
    new_body = _ReplaceBuffer(bmap).stmt(body) if bmap else body
    for b in reversed(out_allocs):
        new_body = S.Allocate(b, new_body)
    return func.with_body(new_body)


PASSES = {
    "simplify": simplify_pass,
    "loop_partition": loop_partition,
    "unroll": unroll,
    "vectorize": vectorize,
    "remove_no_op": remove_no_op,
    "storage_rewrite": storage_rewrite,
}

DEFAULT_PIPELINE = ("simplify", "loop_partition", "unroll", "vectorize", "remove_no_op",
                    "storage_rewrite", "simplify")


def run_pipeline(func: S.PrimFunc, passes=None, disabled=(), dump=None) -> S.PrimFunc:
    """Run ``passes`` (names, default :data:`DEFAULT_PIPELINE`) minus
    ``disabled``; ``dump(name, func)`` is called after each pass."""
    names = list(passes if passes is not None else DEFAULT_PIPELINE)
    for n in list(names) + list(disabled):
        if n not in PASSES:
            raise PassError(f"unknown loop pass {n!r}{did_you_mean(n, PASSES)}; "
                            f"{one_of(PASSES)}")
    for n in names:
        if n in disabled:
            continue
        func = PASSES[n](func)
        if dump is not None:
            dump(n, func)
    return func
