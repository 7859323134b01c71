"""Shared fixtures.

The shared models live beside the project, in ``../shared/models`` relative
to the project root; tests read them from there and never copy them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = ROOT.parent / "shared" / "models"


def _manifest() -> list[dict]:
    path = MODELS_DIR / "MANIFEST.json"
    return json.loads(path.read_text()) if path.exists() else []


MODELS = _manifest()
MODEL_NAMES = [m["name"] for m in MODELS]


@pytest.fixture(scope="session")
def models_dir() -> Path:
    if not MODELS_DIR.is_dir():
        pytest.fail(f"the shared models are missing: expected them in {MODELS_DIR}")
    return MODELS_DIR


def requires_tool(*names: str):
    """Mark a test that needs external programs (cross compilers, QEMU)."""
    missing = [n for n in names if shutil.which(n) is None]
    return pytest.mark.skipif(bool(missing), reason=f"missing tools: {', '.join(missing)}")
