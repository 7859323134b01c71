"""The ONNX backend node tests (shipped in the onnx wheel) against the recorded
expectations: each claimed test passes or is refused with an AotError, as
``expectations.json`` says; a wrong value or a crash always fails.

Regenerate the expectations after a deliberate change with
``python tests/support/onnx_node_suite.py --update`` (it refuses while any test
gives a wrong value or crashes) and review the diff.
"""

from __future__ import annotations

import pytest
from support import onnx_node_suite as suite

_PROBLEM = suite.version_problem()
pytestmark = pytest.mark.skipif(_PROBLEM is not None, reason=str(_PROBLEM))

_EXPECTED = suite.load_expectations()
_CLAIMED = suite.claimed_tests() if _PROBLEM is None else []


def test_expectations_cover_exactly_the_claimed_tests():
    """A newly claimed operator brings its node tests into the file (and a dropped one
    takes them out): the suite cannot silently skip tests."""
    assert sorted(_EXPECTED) == _CLAIMED


def test_enough_of_the_claimed_tests_pass():
    passed = [n for n, e in _EXPECTED.items() if e["outcome"] == "pass"]
    assert len(passed) >= 200


@pytest.mark.parametrize("name", _CLAIMED)
def test_node(name):
    got = suite.run_case(name)
    assert got.status in ("pass", "refused"), f"{name}: {got.status}: {got.detail}"
    want = _EXPECTED.get(name, {"outcome": "(not recorded)"})
    assert got.record() == want


def test_docs_state_the_recorded_counts():
    """docs/models.md quotes the counts of the expectations file."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "models.md").read_text()
    m = re.search(r"(\d+) claimed tests: (\d+) pass, (\d+) refused", text)
    assert m, "docs/models.md lost its node-suite counts"
    outcomes = [e["outcome"] for e in _EXPECTED.values()]
    assert (int(m[1]), int(m[2]), int(m[3])) == (
        len(outcomes), outcomes.count("pass"), outcomes.count("refused"))
