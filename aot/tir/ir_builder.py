"""A minimal statement builder for tensor intrinsic bodies."""

from __future__ import annotations

from aot.tir import expr as E
from aot.tir import stmt as S


class IRBuilder:
    """Collects statements in order: ``ib.emit(call_extern(...))``, then
    ``ib.get()`` returns the sequence."""

    def __init__(self):
        self._stmts: list[S.Stmt] = []

    def emit(self, stmt) -> None:
        if isinstance(stmt, E.PrimExpr):
            stmt = S.Evaluate(stmt)
        self._stmts.append(stmt)

    def get(self) -> S.Stmt:
        if not self._stmts:
            return S.Evaluate(E.const(0))
        return S.seq(*self._stmts)


def create() -> IRBuilder:
    return IRBuilder()
