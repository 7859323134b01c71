"""Whether a lowered kernel may write its output over one of its inputs.

The memory planner (:mod:`aot.executor.memory`) may bind a kernel's output
and one of its inputs to the same address (an elementwise tail writing
over an operand that dies there).  A kernel accepts such a pair only when
its loop nest passes :func:`in_place_problem`, and then declares those two
parameters without ``restrict`` (all the others keep it).

The rule is checked on the lowered loop nest (TIR), after every schedule
and tensorization, so it holds for the C that is printed from it:

* the output ``y`` is only ever stored to: never loaded, never passed by
  address to a helper (a tensorized call);
* the input ``x`` is only loaded inside the value of a store to ``y`` at the
  very same flat index (same expression, same lanes): C evaluates the
  value before the store, so element ``i`` of ``x`` is read just before
  element ``i`` of ``y`` overwrites it;
* ``x`` is never passed by address, read in a loop bound or a condition,
  nor read into a scratch buffer to be used later;
* both have the same element type, so one index names the same bytes.

Each element of the final stage is stored once (tensor-expression lowering
computes a stage's own elements once; loop partitioning splits them into
disjoint parts), so no store of ``y[i]`` follows another read of ``x[i]``.
The kernel tests run every accepted kernel aliased and not aliased and
compare the outputs.
"""

from __future__ import annotations

from aot.tir import expr as E
from aot.tir import stmt as S
from aot.tir.functor import walk
from aot.tir.simplify import equal


def in_place_problem(func: S.PrimFunc, x: S.Buffer, y: S.Buffer) -> str | None:
    """Why ``y`` may not share ``x``'s address in ``func``, or None when it may."""
    if x.dtype != y.dtype:
        return f"{x.name} is {x.dtype} but {y.name} is {y.dtype}"
    xd, yd = id(x.data), id(y.data)
    problems: list[str] = []

    def scan(e, where: str, store_index=None) -> None:
        for n in walk(e):
            if isinstance(n, E.AccessPtr) and id(n.buffer.data) in (xd, yd):
                problems.append(f"{n.buffer.name} is passed by address ({where})")
            elif isinstance(n, E.Load) and id(n.buffer.data) == yd:
                problems.append(f"{y.name} is read ({where})")
            elif isinstance(n, E.Load) and id(n.buffer.data) == xd:
                if store_index is None or not equal(n.index, store_index):
                    problems.append(f"{x.name} is read {where} at another index")

    def visit(s) -> None:
        if s is None:
            return
        if isinstance(s, S.For):
            scan(s.min, "in a loop bound")
            scan(s.extent, "in a loop bound")
            visit(s.body)
        elif isinstance(s, S.SeqStmt):
            for part in s.seq:
                visit(part)
        elif isinstance(s, S.IfThenElse):
            scan(s.cond, "in a condition")
            visit(s.then_case)
            visit(s.else_case)
        elif isinstance(s, S.Allocate):
            visit(s.body)
        elif isinstance(s, S.Store):
            scan(s.index, "in a store index")
            mine = id(s.buffer.data) == yd
            scan(s.value, f"for {y.name}" if mine else f"into {s.buffer.name}",
                 s.index if mine else None)
        elif isinstance(s, S.Evaluate):
            scan(s.value, "in a call")
        else:
            problems.append(f"unknown statement {type(s).__name__}")

    visit(func.body)
    return problems[0] if problems else None
