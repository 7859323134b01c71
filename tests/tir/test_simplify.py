"""The simplifier: canonical index forms and range-based decisions."""

from __future__ import annotations

import pytest

from aot.tir import expr as E
from aot.tir.functor import Mutator
from aot.tir.simplify import (Analyzer, _combine_divmod, from_linear, linear, simplify,
                               symbolic_bound)

x, y = E.Var("x"), E.Var("y")


def s(e, **ranges):
    an = Analyzer({v: r for v, r in ((x, ranges.get("x")), (y, ranges.get("y"))) if r})
    return str(an.simplify(e))


def test_linear_forms_collect_terms():
    assert s((x + 3) * 4 - x * 2 + y - 12) == "((x*2) + y)"
    assert s(x - x) == "0"


def test_floordiv_floormod_recombine():
    assert s(E.floordiv(x, 32) * 32 + E.floormod(x, 32)) == "x"


def test_floordiv_with_ranges():
    assert s(E.floordiv(x * 8 + y, 8), y=(0, 7)) == "x"
    assert s(E.floormod(x * 8 + y, 8), y=(0, 7)) == "y"
    assert s(E.floordiv(y, 8), y=(0, 7)) == "0"


def test_comparisons_decided_by_ranges():
    assert s(x * 20 + y < 1024, x=(0, 50), y=(0, 19)) == "True"
    assert s(x * 20 + y < 1024, x=(0, 51), y=(0, 19)) == "(((x*20) + y) < 1024)"
    assert s(x < 0, x=(0, 9)) == "False"


def test_min_max_and_constants():
    assert s(E.min_(x, x + 1)) == "x"
    assert s(E.max_(x, E.const(10)), x=(0, 5)) == "10"
    assert str(simplify(E.cast("int8", E.const(200)))) == "int8(-56)"


def test_truncdiv_of_nonnegative_is_floordiv():
    assert s(E.truncdiv(x * 4 + 3, 4), x=(0, 9)) == "x"


def test_symbolic_bound_relaxes_only_given_vars():
    lo, hi = symbolic_bound(x * 4 + y, {y: (E.const(0), E.const(3))})
    assert (str(lo), str(hi)) == ("(x*4)", "((x*4) + 3)")


def evaluate(e, env):
    """Reference semantics of integer expressions (Python ints, C trunc ops)."""
    if isinstance(e, E.IntImm):
        return e.value
    if isinstance(e, E.Var):
        return env[e]
    a, b = evaluate(e.a, env), evaluate(e.b, env)
    if e.op == "div":
        return abs(a) // abs(b) * (1 if (a >= 0) == (b > 0) else -1)
    if e.op == "mod":
        return a - evaluate(E.Binary("div", e.a, e.b), env) * b
    return {
        "add": a + b, "sub": a - b, "mul": a * b, "floordiv": a // b if b else 0,
        "floormod": a % b if b else 0, "min": min(a, b), "max": max(a, b),
        "lt": int(a < b), "le": int(a <= b), "eq": int(a == b), "ne": int(a != b),
        "gt": int(a > b), "ge": int(a >= b), "and": int(a and b), "or": int(a or b),
    }[e.op]


def random_expr(rng, depth):
    if depth == 0 or rng.random() < 0.2:
        return rng.choice([x, y, E.const(rng.randint(-9, 9))])
    op = rng.choice(["add", "sub", "mul", "floordiv", "floormod", "div", "mod", "min", "max"])
    a = random_expr(rng, depth - 1)
    if op in ("mul", "floordiv", "floormod", "div", "mod"):
        c = rng.choice([-4, -3, 2, 3, 4, 8])
        return E.Binary(op, a, E.const(c))
    return E.Binary(op, a, random_expr(rng, depth - 1))


@pytest.mark.parametrize("seed", range(40))
def test_simplify_preserves_values_on_the_whole_range(seed):
    import random as _random
    rng = _random.Random(seed)
    xr = (rng.randint(-6, 2), rng.randint(3, 9))
    yr = (rng.randint(0, 3), rng.randint(4, 12))
    e = random_expr(rng, 4)
    cmp = E.Binary(rng.choice(["lt", "le", "eq", "ne", "ge"]), e, random_expr(rng, 2))
    an = Analyzer({x: xr, y: yr})
    for expr in (e, cmp):
        simple = an.simplify(expr)
        lo, hi = an.bound(simple)
        for xv in range(xr[0], xr[1] + 1):
            for yv in range(yr[0], yr[1] + 1):
                env = {x: xv, y: yv}
                want = evaluate(expr, env)
                assert evaluate(simple, env) == want, (str(expr), str(simple), env)
                if expr is e:
                    assert (lo is None or lo <= want) and (hi is None or want <= hi), \
                        (str(expr), lo, hi, env)


@pytest.mark.parametrize("seed", [*range(30), 379])  # 379: C remainder of a negative value
def test_symbolic_bound_contains_every_value(seed):
    """Bound inference relaxes some loop variables and keeps others fixed."""
    import random as _random
    rng = _random.Random(5000 + seed)
    e = random_expr(rng, 3)
    xr, yr = (0, rng.randint(1, 7)), (0, rng.randint(1, 9))
    an = Analyzer({x: xr, y: yr})
    r = symbolic_bound(e, {y: (E.const(yr[0]), E.const(yr[1]))}, an)
    if r is None:  # unknown is allowed (the caller then uses the whole tensor)
        return
    for xv in range(xr[0], xr[1] + 1):
        lo, hi = evaluate(r[0], {x: xv}), evaluate(r[1], {x: xv})
        for yv in range(yr[0], yr[1] + 1):
            assert lo <= evaluate(e, {x: xv, y: yv}) <= hi, (str(e), str(r[0]), str(r[1]))


class _Rebuild(Mutator):
    """A copy of every node: fresh nodes, nothing derived kept on them yet."""

    def visit_IntImm(self, e):
        return E.IntImm(e.dtype, e.value)

    def visit_Binary(self, e):
        return E.Binary(e.op, self.expr(e.a), self.expr(e.b))


def _form(e):
    lf = linear(e)
    return lf.const, [(k, str(atom), c) for k, (atom, c) in lf.terms.items()]


@pytest.mark.parametrize("seed", range(20))
def test_the_linear_form_a_node_keeps_is_the_one_its_tree_gives(seed):
    """from_linear gives its result the form it was built from; asked again of
    the same tree rebuilt from scratch, linear must find the same terms in the
    same order (what the simplifier's output then depends on)."""
    import random as _random
    rng = _random.Random(9000 + seed)
    an = Analyzer({x: (0, 7), y: (-3, 5)})
    for _ in range(10):
        e = random_expr(rng, 4)
        simple = an.simplify(e)
        if simple.dtype != "int32":
            continue
        assert _form(simple) == _form(_Rebuild().expr(simple)), str(e)
        assert str(an.simplify(simple)) == str(an.simplify(_Rebuild().expr(simple)))


def _one_node_at_a_time(e, an):
    """The rule for an index sum, difference or product applied node by node:
    its simplified operands written out, put in linear form, recombined."""
    if not (isinstance(e, E.Binary) and e.op in ("add", "sub", "mul")):
        return an.simplify(e)
    a, b = _one_node_at_a_time(e.a, an), _one_node_at_a_time(e.b, an)
    if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
        return an.simplify(E.Binary(e.op, a, b))
    lf = linear(E.Binary(e.op, a, b))
    _combine_divmod(lf)
    return from_linear(lf)


def random_sum(rng, depth):
    """Sums of a few atoms with small coefficients: ties, cancellations and
    floordiv/floormod pairs that recombine."""
    if depth == 0 or rng.random() < 0.15:
        return rng.choice([x, y, E.floordiv(x, 3), E.floormod(x, 3), E.floormod(y, 4), x * y,
                           E.const(rng.randint(-5, 5))])
    op = rng.choice(["add", "sub", "add", "mul"])
    a = random_sum(rng, depth - 1)
    if op == "mul":
        c = E.const(rng.choice([-2, -1, 0, 2, 3]))
        return E.Binary(op, a, c) if rng.random() < 0.5 else E.Binary(op, c, a)
    return E.Binary(op, a, random_sum(rng, depth - 1))


@pytest.mark.parametrize("seed", range(20))
def test_a_chain_of_sums_simplifies_as_node_by_node(seed):
    """The simplifier keeps the operands of a sum that are sums as linear
    forms instead of writing each out; the result must be the same text as
    writing out every node's result (the order of terms included)."""
    import random as _random
    rng = _random.Random(7000 + seed)
    an = Analyzer({x: (0, 7), y: (-3, 5)})
    for _ in range(10):
        for e in (random_sum(rng, 6), random_expr(rng, 5)):
            assert str(an.simplify(e)) == str(_one_node_at_a_time(e, an)), str(e)


def test_constants_wrap_as_the_dtype_does():
    big = E.const(2 ** 31 - 1)
    assert s(big + 1) == "-2147483648"
    assert s(x * 0 + big * 2 + x) == "(x - 2)"


@pytest.mark.parametrize("seed", range(10))
def test_the_bound_of_a_linear_form_is_the_bound_of_its_expression(seed):
    import random as _random
    rng = _random.Random(8000 + seed)
    an = Analyzer({x: (0, 7), y: (-3, 5)})
    for _ in range(20):
        lf = linear(random_sum(rng, 4))
        assert an._linear_bound(lf) == an.bound(from_linear(lf))
