"""Where the shared models are: ``../shared/models`` relative to the project root.

Tests read the models from there and never copy them into the project.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = ROOT.parent / "shared" / "models"


def _manifest() -> list[dict]:
    path = MODELS_DIR / "MANIFEST.json"
    return json.loads(path.read_text()) if path.exists() else []


#: The manifest entries, one per model file.
MODELS = _manifest()
MODEL_NAMES = [m["name"] for m in MODELS]
