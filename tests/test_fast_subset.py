"""The fast subset's mechanism: ``@pytest.mark.one_fast`` (tests/conftest.py).

Which tests are slow is measured, not declared (docs/architecture.md, "Tests"):
no deterministic property of a test (a shared model or a board among its
parameters, the ``qemu`` marker) separates the slow ones from the cheap ones
that merely read a model or a board record, so the rule is kept in the docs and
these tests check only that a test marked ``one_fast`` brings exactly one case
into the fast subset.  They read the tests the session collected, so a run of
one file checks that file.
"""

from __future__ import annotations

import collections

import pytest


def test_a_one_fast_test_keeps_exactly_one_case(request):
    fast = collections.Counter()
    for item in request.session.items:
        if item.get_closest_marker("one_fast") is not None:
            fast[(item.path.name, item.originalname)] += item.get_closest_marker("slow") is None
    assert all(n <= 1 for n in fast.values()), {k: n for k, n in fast.items() if n > 1}


@pytest.mark.parametrize("case", [0, 1, 2])
@pytest.mark.one_fast
def test_only_the_first_case_of_a_one_fast_test_is_fast(case, request):
    assert (request.node.get_closest_marker("slow") is None) == (case == 0)


@pytest.mark.parametrize("case", [pytest.param(0, marks=pytest.mark.slow), 1, 2])
@pytest.mark.one_fast
def test_a_case_already_slow_leaves_the_next_one_fast(case, request):
    assert (request.node.get_closest_marker("slow") is None) == (case == 1)
