"""Integer simplification with range analysis.

Index arithmetic (``int32``/``int64`` values without overflow) is put in a
canonical linear form ``c0 + sum(ci * atom_i)`` where atoms are variables or
non-linear sub-expressions; terms are printed by decreasing coefficient.
Known variable ranges let the analyzer fold ``floordiv``/``floormod`` by
constants, decide comparisons (which removes loop guards) and pick a side of
``min``/``max``.  Narrow integer types (which wrap) and floats are only
constant-folded.
"""

from __future__ import annotations

import numpy as np

from aot.tir import expr as E
from aot.tir.functor import Mutator, walk

_INDEX = ("int32", "int64")
_SUM_OPS = ("add", "sub", "mul")  # what the linear form takes apart


def struct_key(e):
    """A hashable key equal for structurally equal expressions (kept on the
    node: a parent's key is built from its children's without walking them)."""
    try:
        return e._struct_key
    except AttributeError:
        key = e._struct_key = _struct_key(e)
        return key


def _struct_key(e):
    if isinstance(e, E.Var):
        return ("var", id(e))
    if isinstance(e, (E.IntImm, E.FloatImm)):
        return ("imm", e.dtype, e.value)
    if isinstance(e, E.StringImm):
        return ("str", e.value)
    if isinstance(e, E.FuncRef):
        return ("func", e.name)
    if isinstance(e, E.Binary):
        return ("bin", e.op, struct_key(e.a), struct_key(e.b))
    if isinstance(e, E.Not):
        return ("not", struct_key(e.a))
    if isinstance(e, E.Select):
        return ("sel", struct_key(e.cond), struct_key(e.t), struct_key(e.f))
    if isinstance(e, E.Cast):
        return ("cast", e.dtype, struct_key(e.value))
    if isinstance(e, E.Call):
        return ("call", e.name, e.dtype, tuple(struct_key(a) for a in e.args))
    if isinstance(e, E.Load):
        return ("load", id(e.buffer.data), e.dtype, struct_key(e.index))
    if isinstance(e, E.Ramp):
        return ("ramp", struct_key(e.base), struct_key(e.stride), e.lanes)
    if isinstance(e, E.Broadcast):
        return ("bcast", struct_key(e.value), e.lanes)
    if isinstance(e, E.ProducerLoad):
        return ("pload", id(e.tensor.op), e.tensor.value_index,
                tuple(struct_key(i) for i in e.indices))
    return ("obj", id(e))


def equal(a, b) -> bool:
    return struct_key(a) == struct_key(b)


def _wrap(value: int, dtype: str) -> int:
    lo, hi = E.int_range(dtype)
    span = hi - lo + 1
    return (value - lo) % span + lo


def _fold_int(op, a, b):
    if op == "add": return a + b
    if op == "sub": return a - b
    if op == "mul": return a * b
    if op in ("div", "mod"):
        if b == 0:
            return None
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b > 0) else -1)
        return q if op == "div" else a - q * b
    if op == "floordiv": return a // b if b else None
    if op == "floormod": return a % b if b else None
    if op == "min": return min(a, b)
    if op == "max": return max(a, b)
    if op == "shl": return a << b if 0 <= b < 64 else None
    if op == "shr": return a >> b if 0 <= b < 64 else None
    if op == "bitand": return a & b
    if op == "bitor": return a | b
    if op == "bitxor": return a ^ b
    if op == "eq": return int(a == b)
    if op == "ne": return int(a != b)
    if op == "lt": return int(a < b)
    if op == "le": return int(a <= b)
    if op == "gt": return int(a > b)
    if op == "ge": return int(a >= b)
    if op == "and": return int(bool(a) and bool(b))
    if op == "or": return int(bool(a) or bool(b))
    return None


def _fold_float(op, a, b):
    x, y = np.float32(a), np.float32(b)
    with np.errstate(all="ignore"):
        if op == "add": return float(x + y)
        if op == "sub": return float(x - y)
        if op == "mul": return float(x * y)
        if op == "div": return float(x / y) if y != 0 else None
        if op == "min": return float(min(x, y))
        if op == "max": return float(max(x, y))
    if op in E.COMPARISONS:
        return int({
            "eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y,
            "gt": x > y, "ge": x >= y}[op])
    return None


class Linear:
    """``const + sum(coeff * atom)``; ``terms`` maps struct keys to
    ``[atom, coeff]`` in order of first appearance.  An atom is what
    :func:`linear` leaves whole: never a constant, a sum, a difference or a
    product by a constant."""

    __slots__ = ("terms", "const", "dtype")

    def __init__(self, dtype, const=0, terms=None):
        self.dtype, self.const, self.terms = dtype, const, terms if terms is not None else {}

    def add(self, other, scale=1):
        for k, (atom, c) in other.terms.items():
            if k in self.terms:
                self.terms[k][1] += c * scale
            else:
                self.terms[k] = [atom, c * scale]
        self.const += other.const * scale


def linear(e) -> Linear | None:
    """The linear form of an index expression, or None for other dtypes; the
    caller owns the returned Linear (it may change it)."""
    if e.dtype not in _INDEX:
        return None
    return _scaled(e.dtype, _linear_form(e), 1)


def _linear_form(e):
    """``linear(e)`` as ``(const, ((key, atom, coeff), ...))``, kept on the node.

    Simplifying bottom-up asks for the form of every sum again at each
    enclosing sum; kept on the nodes, each form is built once from its
    children's.  Terms keep their order of first appearance, and a
    coefficient that cancels to zero keeps its term (and which atom stands
    for the key), as :meth:`Linear.add` does."""
    try:
        return e._linear
    except AttributeError:
        pass
    if isinstance(e, E.IntImm):
        form = (e.value, ())
    elif isinstance(e, E.Binary) and e.op in ("add", "sub"):
        sign = 1 if e.op == "add" else -1
        form = _frozen(_summed(e.dtype, _linear_form(e.a), _linear_form(e.b), sign))
    elif isinstance(e, E.Binary) and e.op == "mul" and isinstance(e.b, E.IntImm):
        form = _frozen(_scaled(e.dtype, _linear_form(e.a), e.b.value))
    elif isinstance(e, E.Binary) and e.op == "mul" and isinstance(e.a, E.IntImm):
        form = _frozen(_scaled(e.dtype, _linear_form(e.b), e.a.value))
    else:
        form = (0, ((struct_key(e), e, 1),))
    e._linear = form
    return form


def _summed(dtype, fa, fb, sign) -> Linear:
    """``a + sign * b`` from the forms of ``a`` and ``b``."""
    lf = Linear(dtype, fa[0] + fb[0] * sign, {k: [atom, c] for k, atom, c in fa[1]})
    terms = lf.terms
    for k, atom, c in fb[1]:
        if k in terms:
            terms[k][1] += c * sign
        else:
            terms[k] = [atom, c * sign]
    return lf


def _scaled(dtype, form, s) -> Linear:
    """``s * a`` from the form of ``a``."""
    return Linear(dtype, form[0] * s, {k: [atom, c * s] for k, atom, c in form[1]})


def _frozen(lf: Linear):
    return lf.const, tuple((k, atom, c) for k, (atom, c) in lf.terms.items())


def _combine_divmod(lf: Linear) -> None:
    """Rewrite ``c*a*floordiv(x, c) + a*floormod(x, c)`` into ``a*x``."""
    terms = lf.terms
    while True:
        for key, (atom, coeff) in terms.items():
            if coeff == 0 or not (isinstance(atom, E.Binary) and atom.op == "floormod"
                                  and isinstance(atom.b, E.IntImm)):
                continue
            dkey = ("bin", "floordiv", struct_key(atom.a), struct_key(atom.b))
            if dkey in terms and terms[dkey][1] == atom.b.value * coeff:
                del terms[dkey]
                del terms[key]
                lf.add(linear(atom.a), coeff)
                break  # the terms changed (not iterated further): scan them again
        else:
            return


def from_linear(lf: Linear) -> E.PrimExpr:
    """The expression of ``lf``: terms by decreasing magnitude of coefficient
    (ties in order of appearance), then the constant.

    The linear form of a node built here is known without walking it:
    ``lf``'s nonzero terms in that order and its constant, so that is what
    the node keeps (tests/tir/test_simplify.py checks it against the form
    the same tree gives when built anew)."""
    dt = lf.dtype
    terms = _printed_terms(lf)
    out = None
    for _, atom, c in terms:
        mag = abs(c)
        t = atom if mag == 1 else E.Binary("mul", atom, E.IntImm(dt, mag))
        if out is None:
            out = t if c > 0 else E.Binary("sub", E.IntImm(dt, 0), t)
        else:
            out = E.Binary("add" if c > 0 else "sub", out, t)
    if out is None:
        out = E.IntImm(dt, lf.const)
    elif lf.const > 0:
        out = E.Binary("add", out, E.IntImm(dt, lf.const))
    elif lf.const < 0:
        out = E.Binary("sub", out, E.IntImm(dt, -lf.const))
    if len(terms) != 1 or out is not terms[0][1]:  # built here, not an atom returned
        out._linear = (lf.const, terms)
    return out


def _printed_terms(lf: Linear) -> tuple:
    """``lf``'s nonzero terms ``(key, atom, coeff)`` in the order
    :func:`from_linear` writes them: by decreasing magnitude of coefficient,
    ties in order of appearance (the sort is stable)."""
    terms = [(k, atom, c) for k, (atom, c) in lf.terms.items() if c != 0]
    if len(terms) > 1:
        terms.sort(key=lambda t: -abs(t[2]))
    return tuple(terms)


class Analyzer:
    """Simplifies expressions given inclusive ranges ``{Var: (lo, hi)}``."""

    def __init__(self, ranges=None):
        self.ranges = dict(ranges or {})
        self._simplifier = _Simplifier(self)  # stateless but for the ranges it reads

    def bind(self, var, lo, hi):
        self.ranges[var] = (lo, hi)

    def with_ranges(self, extra) -> Analyzer:
        a = Analyzer(self.ranges)
        a.ranges.update(extra)
        return a

    # -- bounds --------------------------------------------------------
    def bound(self, e):
        """Inclusive integer bounds ``(lo, hi)``; ``None`` for unknown sides."""
        if e.dtype in _INDEX:
            const, terms = _linear_form(e)
            if not (len(terms) == 1 and const == 0 and terms[0][2] == 1):
                return self._sum_bound(const, ((atom, c) for _, atom, c in terms))
        return self._atom_bound(e)

    def _linear_bound(self, lf: Linear):
        """``bound(from_linear(lf))``, without writing the expression."""
        terms = [(atom, c) for atom, c in lf.terms.values() if c != 0]
        if len(terms) == 1 and lf.const == 0 and terms[0][1] == 1:
            return self._atom_bound(terms[0][0])  # from_linear gives the atom itself
        return self._sum_bound(lf.const, terms)

    def _sum_bound(self, const, terms):
        lo = hi = const
        for atom, c in terms:
            alo, ahi = self._atom_bound(atom)
            if c >= 0:
                lo = None if lo is None or alo is None else lo + c * alo
                hi = None if hi is None or ahi is None else hi + c * ahi
            else:
                lo = None if lo is None or ahi is None else lo + c * ahi
                hi = None if hi is None or alo is None else hi + c * alo
        return lo, hi

    def _atom_bound(self, e):
        if isinstance(e, E.IntImm):
            return e.value, e.value
        if isinstance(e, E.Var):
            if e in self.ranges:
                return self.ranges[e]
        elif isinstance(e, E.Binary):
            op = e.op
            if op in ("floordiv", "div", "floormod", "mod") and isinstance(e.b, E.IntImm) \
                    and e.b.value > 0:
                c = e.b.value
                lo, hi = self.bound(e.a)
                trunc_ok = lo is not None and lo >= 0
                if op == "floordiv" or (op == "div" and trunc_ok):
                    return (None if lo is None else lo // c, None if hi is None else hi // c)
                if op == "floormod" or (op == "mod" and trunc_ok):
                    if lo is not None and hi is not None and lo // c == hi // c:
                        return lo % c, hi % c
                    return 0, c - 1
                if op == "mod":
                    return -(c - 1), c - 1
            if op in ("min", "max"):
                (al, ah), (bl, bh) = self.bound(e.a), self.bound(e.b)
                f = min if op == "min" else max
                lo = f(al, bl) if al is not None and bl is not None else (
                    (al if al is not None else bl) if op == "max" else None)
                hi = f(ah, bh) if ah is not None and bh is not None else (
                    (ah if ah is not None else bh) if op == "min" else None)
                return lo, hi
            if op == "mul":
                (al, ah), (bl, bh) = self.bound(e.a), self.bound(e.b)
                if None not in (al, ah, bl, bh):
                    prods = [al * bl, al * bh, ah * bl, ah * bh]
                    return min(prods), max(prods)
            if op in E.COMPARISONS or op in ("and", "or"):
                return 0, 1
        elif isinstance(e, E.Select):
            (tl, th), (fl, fh) = self.bound(e.t), self.bound(e.f)
            lo = None if tl is None or fl is None else min(tl, fl)
            hi = None if th is None or fh is None else max(th, fh)
            return lo, hi
        elif isinstance(e, E.Cast) and E.is_int(e.dtype) and E.is_int(e.value.dtype):
            lo, hi = self.bound(e.value)
            dlo, dhi = E.int_range(e.dtype)
            if lo is not None and hi is not None and dlo <= lo and hi <= dhi:
                return lo, hi
        if E.is_int(e.dtype) and E.bits(e.dtype) < 64:
            return E.int_range(e.dtype)
        return None, None

    def can_prove(self, cond) -> bool:
        c = self.simplify(cond)
        return isinstance(c, E.IntImm) and c.value == 1

    # -- simplification -----------------------------------------------
    def simplify(self, e):
        return self._simplifier.expr(e)


class _Simplifier(Mutator):
    def __init__(self, analyzer: Analyzer):
        self.an = analyzer

    def visit_Binary(self, e):
        if e.op in _SUM_OPS and e.dtype in _INDEX:
            return from_linear(self._sum(e))
        a, b = self.expr(e.a), self.expr(e.b)
        op, dt = e.op, e.dtype
        elem = E.element(a.dtype)
        # constant folding
        if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
            v = _fold_int(op, a.value, b.value)
            if v is not None:
                return E.IntImm(dt, v if E.element(dt) == "bool" else _wrap(v, dt))
        if isinstance(a, E.FloatImm) and isinstance(b, E.FloatImm):
            v = _fold_float(op, a.value, b.value)
            if v is not None:
                return E.IntImm(dt, v) if E.element(dt) == "bool" else E.FloatImm(dt, v)
        if op in ("and", "or"):
            for x, y in ((a, b), (b, a)):
                if isinstance(x, E.IntImm):
                    if op == "and":
                        return y if x.value else x
                    return x if x.value else y
            return e if (a is e.a and b is e.b) else E.Binary(op, a, b)
        if elem in _INDEX and E.lanes_of(a.dtype) == 1:
            return self._index_binary(e, op, a, b)
        if E.is_int(elem) and op in ("mul", "add", "sub"):
            if op == "mul" and (E.is_const_int(b, 1)):
                return a
            if op == "mul" and (E.is_const_int(a, 1)):
                return b
            if op in ("add", "sub") and E.is_const_int(b, 0):
                return a
        return e if (a is e.a and b is e.b) else E.Binary(op, a, b)

    def _sum(self, e) -> Linear:
        """The linear form whose :func:`from_linear` is the simplified index
        sum, difference or product ``e``: its operands simplified, constants
        folded (wrapping as the dtype does), the forms combined and
        ``c*a*floordiv(x, c) + a*floormod(x, c)`` recombined.

        An operand that is such a node itself stays a form (what its
        expression, written by :func:`from_linear`, would give
        :func:`linear`): a chain of n terms is not written out and taken
        apart again at each of its n nodes."""
        dt = e.dtype
        fa, a_imm, a_node = self._operand(e.a)
        fb, b_imm, b_node = self._operand(e.b)
        if a_imm is not None and b_imm is not None:
            return Linear(dt, _wrap(_fold_int(e.op, a_imm, b_imm), dt))
        if e.op == "add":
            lf = _summed(dt, fa, fb, 1)
        elif e.op == "sub":
            lf = _summed(dt, fa, fb, -1)
        elif b_imm is not None:
            lf = _scaled(dt, fa, b_imm)
        elif a_imm is not None:
            lf = _scaled(dt, fb, a_imm)
        else:  # a product of two variable operands is an atom
            atom = E.Binary("mul", _written(a_node), _written(b_node))
            lf = Linear(dt, 0, {struct_key(atom): [atom, 1]})
        _combine_divmod(lf)
        return lf

    def _operand(self, x):
        """``(form, value if a constant else None, expression or Linear)`` of
        the simplified operand ``x`` of an index sum (:meth:`_sum`)."""
        if isinstance(x, E.Binary) and x.op in _SUM_OPS and x.dtype in _INDEX:
            lf = self._sum(x)
            terms = _printed_terms(lf)
            return (lf.const, terms), (None if terms else lf.const), lf
        if not isinstance(x, (E.Var, E.IntImm)):  # each simplifies to itself
            x = self.expr(x)
        return _linear_form(x), (x.value if isinstance(x, E.IntImm) else None), x

    def _index_binary(self, e, op, a, b):
        an = self.an
        if op in ("div", "mod") and isinstance(b, E.IntImm) and b.value > 0:
            lo, _ = an.bound(a)
            if lo is not None and lo >= 0:
                op = "floordiv" if op == "div" else "floormod"
        if op in ("floordiv", "floormod") and isinstance(b, E.IntImm) and b.value > 0:
            c = b.value
            if c == 1:
                return a if op == "floordiv" else E.IntImm(a.dtype, 0)
            lf = linear(a)
            whole = Linear(a.dtype)
            rest = Linear(a.dtype, lf.const % c)
            whole.const = lf.const - lf.const % c
            for k, (atom, coeff) in lf.terms.items():
                (whole if coeff % c == 0 else rest).terms[k] = [atom, coeff]
            rest_e = from_linear(rest)
            lo, hi = an.bound(rest_e)
            if lo is not None and hi is not None and 0 <= lo and hi < c:
                if op == "floordiv":
                    return from_linear(_div_exact(whole, c))
                return rest_e
            if whole.terms or whole.const:
                # floordiv(c*q + r, c) == q + floordiv(r, c)
                if op == "floordiv":
                    return from_linear(_div_exact(whole, c)) + E.Binary("floordiv", rest_e, b)
                return E.Binary("floormod", rest_e, b)
            lo, hi = an.bound(a)
            if lo is not None and hi is not None and lo // c == hi // c:
                if op == "floordiv":
                    return E.IntImm(a.dtype, lo // c)
                return self.expr(a - E.IntImm(a.dtype, lo // c * c))
            return E.Binary(op, a, b)
        if op in ("min", "max"):
            lo, hi = an._linear_bound(_diff(a, b))
            if hi is not None and hi <= 0:
                return a if op == "min" else b
            if lo is not None and lo >= 0:
                return b if op == "min" else a
            return E.Binary(op, a, b)
        if op in E.COMPARISONS:
            lo, hi = an._linear_bound(_diff(a, b))
            verdict = _decide(op, lo, hi)
            if verdict is not None:
                return E.IntImm("bool", verdict)
            # normalize "x - y < 0" back to the operands, with constants folded
            return E.Binary(op, a, b)
        return e if (a is e.a and b is e.b) else E.Binary(op, a, b)

    def visit_Not(self, e):
        a = self.expr(e.a)
        if isinstance(a, E.IntImm):
            return E.IntImm("bool", 0 if a.value else 1)
        return e if a is e.a else E.Not(a)

    def visit_Select(self, e):
        c = self.expr(e.cond)
        if isinstance(c, E.IntImm):
            return self.expr(e.t if c.value else e.f)
        t, f = self.expr(e.t), self.expr(e.f)
        if equal(t, f):
            return t
        return E.Select(c, t, f)

    def visit_Cast(self, e):
        v = self.expr(e.value)
        if isinstance(v, E.IntImm) and E.lanes_of(e.dtype) == 1:
            if E.is_float(e.dtype):
                return E.FloatImm(e.dtype, float(np.float32(v.value)))
            if e.dtype == "bool":
                return E.IntImm("bool", int(v.value != 0))
            return E.IntImm(e.dtype, _wrap(v.value, e.dtype))
        if isinstance(v, E.FloatImm) and E.lanes_of(e.dtype) == 1 and E.is_int(e.dtype):
            if abs(v.value) < 2 ** 62:
                return E.IntImm(e.dtype, _wrap(int(v.value), e.dtype))
        if v.dtype == e.dtype:
            return v
        return e if v is e.value else E.Cast(e.dtype, v)

    def visit_Call(self, e):
        args = [self.expr(a) for a in e.args]
        if e.name == "likely" and isinstance(args[0], E.IntImm):
            return args[0]
        return E.Call(e.dtype, e.name, args, e.kind)


def _written(operand):
    """The expression of an operand :meth:`_Simplifier._operand` kept as a form."""
    return from_linear(operand) if isinstance(operand, Linear) else operand


def _div_exact(lf: Linear, c: int) -> Linear:
    out = Linear(lf.dtype, lf.const // c)
    out.terms = {k: [a, co // c] for k, (a, co) in lf.terms.items()}
    return out


def _diff(a, b) -> Linear:
    lf = linear(a)
    lf.add(linear(b), -1)
    _combine_divmod(lf)
    return lf


def _decide(op, lo, hi):
    """Decide ``d op 0`` from bounds of d, or None."""
    if op == "lt":
        return 1 if hi is not None and hi < 0 else 0 if lo is not None and lo >= 0 else None
    if op == "le":
        return 1 if hi is not None and hi <= 0 else 0 if lo is not None and lo > 0 else None
    if op == "gt":
        return 1 if lo is not None and lo > 0 else 0 if hi is not None and hi <= 0 else None
    if op == "ge":
        return 1 if lo is not None and lo >= 0 else 0 if hi is not None and hi < 0 else None
    if op == "eq":
        if lo == 0 and hi == 0:
            return 1
        if (lo is not None and lo > 0) or (hi is not None and hi < 0):
            return 0
    if op == "ne":
        r = _decide("eq", lo, hi)
        return None if r is None else 1 - r
    return None


def simplify(e, ranges=None):
    """Simplify an expression or statement (statements: see tir.passes)."""
    return Analyzer(ranges).simplify(e)


def symbolic_bound(e, relax, analyzer=None):
    """Bounds ``(lo, hi)`` of ``e`` as expressions when the variables in
    ``relax`` (``{Var: (lo_expr, hi_expr)}``, inclusive) take any value in
    their range and all other variables stay fixed; None if unknown."""
    an = analyzer or Analyzer()
    if not any(isinstance(n, E.Var) and n in relax for n in _walk(e)):
        s = an.simplify(e)
        return s, s
    if e.dtype in _INDEX:
        lf = linear(an.simplify(e))
        lo = Linear(e.dtype, lf.const)
        hi = Linear(e.dtype, lf.const)
        for atom, c in lf.terms.values():
            r = _atom_sym_bound(atom, relax, an)
            if r is None:
                return None
            alo, ahi = r
            lo.add(linear(alo if c >= 0 else ahi), c)
            hi.add(linear(ahi if c >= 0 else alo), c)
        return an.simplify(from_linear(lo)), an.simplify(from_linear(hi))
    return _atom_sym_bound(e, relax, an)


def _atom_sym_bound(e, relax, an):
    if isinstance(e, E.Var):
        return relax.get(e, (e, e))
    if not any(isinstance(n, E.Var) and n in relax for n in _walk(e)):
        return e, e
    if isinstance(e, E.Binary):
        if e.op in ("floordiv", "div") and isinstance(e.b, E.IntImm) and e.b.value > 0:
            r = symbolic_bound(e.a, relax, an)
            if r is None:
                return None
            if e.op == "div":
                lo, _ = an.bound(r[0])
                if lo is None or lo < 0:
                    return None
            return an.simplify(E.Binary("floordiv", r[0], e.b)), \
                an.simplify(E.Binary("floordiv", r[1], e.b))
        if e.op in ("floormod", "mod") and isinstance(e.b, E.IntImm) and e.b.value > 0:
            c = e.b.value
            if e.op == "mod":  # C's remainder takes the sign of the dividend
                r = symbolic_bound(e.a, relax, an)
                lo = an.bound(r[0])[0] if r is not None else None
                if lo is None or lo < 0:
                    return E.IntImm(e.dtype, 1 - c), E.IntImm(e.dtype, c - 1)
            return E.IntImm(e.dtype, 0), E.IntImm(e.dtype, c - 1)
        if e.op in ("min", "max"):
            ra, rb = symbolic_bound(e.a, relax, an), symbolic_bound(e.b, relax, an)
            if ra is None or rb is None:
                return None
            return an.simplify(E.Binary(e.op, ra[0], rb[0])), \
                an.simplify(E.Binary(e.op, ra[1], rb[1]))
    if isinstance(e, E.Select):
        rt, rf = symbolic_bound(e.t, relax, an), symbolic_bound(e.f, relax, an)
        if rt is None or rf is None:
            return None
        return an.simplify(E.Binary("min", rt[0], rf[0])), \
            an.simplify(E.Binary("max", rt[1], rf[1]))
    return None


def _walk(e):
    return walk(e)
