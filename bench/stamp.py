"""The stamp every bench puts in its JSON: which commit produced the numbers, and when.

bench/report.py reads the stamps to say which bench and commit produced each table of
docs/numbers.md, and refuses inputs from different commits (or from a tree with
uncommitted changes) unless told ``--allow-mixed``.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _git(*args: str) -> str:
    proc = subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def stamp() -> dict:
    """``commit`` (full hash, "" outside a git checkout), ``dirty`` (tracked files
    differ from it: the numbers are not reproducible from the commit alone), ``date``
    (UTC), and the machine's cores and load average, which explain noisy timings."""
    return {"commit": _git("rev-parse", "HEAD"),
            "dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "cores": os.cpu_count(),
            "load_average": [round(v, 2) for v in os.getloadavg()]}


def describe(s: dict) -> str:
    """One line for a table or a log: ``commit 1a2b3c4d (+ changes), DATE``."""
    commit = s.get("commit", "")[:8] or "unknown"
    return f"commit {commit}{' (+ uncommitted changes)' if s.get('dirty') else ''}, {s['date']}"
