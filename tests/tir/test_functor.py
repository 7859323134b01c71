"""The generic traversal: dispatch on the node class, rebuild only what changed."""

from __future__ import annotations

import pytest

from aot.tir import expr as E
from aot.tir import stmt as S
from aot.tir.functor import Mutator, substitute

x, y = E.Var("x"), E.Var("y")


class _Double(Mutator):
    def visit_IntImm(self, e):
        return E.IntImm(e.dtype, 2 * e.value)


class _Negate(_Double):
    def visit_IntImm(self, e):
        return E.IntImm(e.dtype, -e.value)


def test_each_mutator_class_dispatches_to_its_own_visitors():
    e = x + 3
    # the subclass looked up first: its table must not leak into its base's
    assert str(_Negate().expr(e)) == "(x + -3)"
    assert str(_Double().expr(e)) == "(x + 6)"
    assert str(_Negate().expr(e)) == "(x + -3)"


def test_unchanged_nodes_are_returned_as_they_are():
    e = E.Select(x < y, E.Cast("int8", x), E.Cast("int8", y))
    body = S.seq(S.Store(S.Buffer("b", "int8", [4]), e, x), S.Evaluate(E.const(0)))
    assert Mutator().expr(e) is e
    assert Mutator().stmt(body) is body
    assert substitute(body, {E.Var("z"): x}) is body
    out = substitute(body, {x: E.const(1)})
    assert out is not body and str(out.seq[1]) == str(body.seq[1])


def test_an_unknown_node_is_refused():
    with pytest.raises(TypeError, match="unknown expression node object"):
        Mutator().expr(object())
    with pytest.raises(TypeError, match="unknown statement node IntImm"):
        Mutator().default_stmt(E.const(1))
