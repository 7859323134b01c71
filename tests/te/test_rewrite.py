"""Schedule.rewrite: functions of the lowered loop IR run after the loop passes."""

from __future__ import annotations

import pytest

import aot
from aot import te
from aot.te import ScheduleError
from aot.tir import stmt as S


def _vadd():
    A = te.placeholder((16,), "float32", "A")
    B = te.compute((16,), lambda i: A[i] + 1.0, name="B")
    return A, B


def test_rewrites_run_after_the_loop_passes_in_order_and_are_dumped():
    A, B = _vadd()
    s = te.create_schedule(B.op)
    seen = []

    def first(func):
        seen.append(("first", func.name))
        return S.PrimFunc("renamed", func.params, func.body, func.attrs)

    def second(func):
        seen.append(("second", func.name))
        return func
    s.rewrite("first", first)
    s.rewrite("second", second)
    dumped = []
    func = aot.lower(s, [A, B], name="f", dump=lambda name, f: dumped.append(name))
    assert seen == [("first", "f"), ("second", "renamed")]
    assert func.name == "renamed"
    assert dumped[-2:] == ["first", "second"]
    assert dumped.index("first") > dumped.index("simplify")  # after the passes


def test_a_rewrite_name_is_registered_once():
    _, B = _vadd()
    s = te.create_schedule(B.op)
    s.rewrite("r", lambda f: f)
    with pytest.raises(ScheduleError, match="already has a rewrite named 'r'"):
        s.rewrite("r", lambda f: f)
