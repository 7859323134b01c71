"""Which parametrizations stay in the fast subset (plain `pytest`).

The fast subset keeps at least one cheap case of every feature, so that a
developer's run still covers each area; the other cases of the same test are
marked ``slow`` and run under `make test` (docs/architecture.md, "Tests").
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest

SLOW = pytest.mark.slow


def fast_first(cases: Iterable, keep: Iterable[int] | int = 1, *, unpack: bool = False) -> list:
    """``cases`` as ``pytest.param``s, those at the indices in ``keep`` (the
    first ``keep`` when an int) in the fast subset and the rest marked slow.

    A case may already be a ``pytest.param`` (its id and marks are kept);
    ``unpack`` says that a plain tuple holds several arguments (a parametrize of
    several names), as pytest itself reads it.
    """
    cases = list(cases)
    fast = set(range(keep)) if isinstance(keep, int) else set(keep)
    out = []
    for i, case in enumerate(cases):
        marks = () if i in fast else (SLOW,)
        if isinstance(case, type(pytest.param(None))):
            out.append(pytest.param(*case.values, marks=[*case.marks, *marks], id=case.id))
        elif unpack:
            out.append(pytest.param(*case, marks=marks))
        else:
            out.append(pytest.param(case, marks=marks))
    return out
