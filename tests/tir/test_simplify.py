"""The simplifier: canonical index forms and range-based decisions."""

from __future__ import annotations

from aot.tir import expr as E
from aot.tir.simplify import Analyzer, simplify, symbolic_bound

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
