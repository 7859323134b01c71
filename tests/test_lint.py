"""The tree passes ``ruff check`` with the rules of pyproject.toml's [tool.ruff].

Skipped, saying so, when ruff (in the ``test`` extra) is not installed.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The project's Python: the packages, their tests and the benchmarks.
CHECKED = ("aot", "flash", "tests", "bench")

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ruff") is None,
    reason="ruff is not installed (pip install -e '.[test]' installs it)")


def _ruff(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    # --no-cache: a test run leaves no .ruff_cache in the tree.
    return subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise",
         *args],
        cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=300)


def test_tree_is_clean():
    for name in CHECKED:
        assert (ROOT / name).is_dir(), f"{name}/ is gone: update CHECKED"
    done = _ruff(*CHECKED)
    assert done.returncode == 0, (
        "ruff check finds (fix them, or `ruff check --fix` for the mechanical ones):\n"
        + done.stdout + done.stderr)


def test_configuration_is_in_force():
    """The project's rules apply: an unused import and an over-long line are findings."""
    probe = "import os\n\nLONG = '" + "x" * 100 + "'\n"
    done = _ruff("--stdin-filename", "aot/_lint_probe.py", "-", stdin=probe)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "F401" in done.stdout and "E501" in done.stdout, done.stdout
