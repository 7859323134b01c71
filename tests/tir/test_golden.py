"""Golden loop-nest printouts of the seed examples (tests/tir/golden/*.txt).

After an intended change of the printer or the passes, regenerate with
``python tests/tir/test_golden.py`` and review the diff."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import aot

sys.path.insert(0, str(Path(__file__).parent))
from examples import EXAMPLES  # noqa: E402

GOLDEN = Path(__file__).parent / "golden"


def printout(name: str) -> str:
    s, args, fname = EXAMPLES[name]()
    return str(aot.lower(s, args, name=fname)) + "\n"


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_golden_printout(name):
    path = GOLDEN / f"{name}.txt"
    assert path.exists(), f"missing {path}: run python tests/tir/test_golden.py"
    assert printout(name) == path.read_text()


if __name__ == "__main__":
    GOLDEN.mkdir(exist_ok=True)
    for example in EXAMPLES:
        (GOLDEN / f"{example}.txt").write_text(printout(example))
        print("wrote", GOLDEN / f"{example}.txt")
