"""The fixture firmware helpers, importable from any test folder.

They live beside the fixture's C sources in tests/runtime_c/fixture/firmware.py
(a folder that is not a Python package), so they are loaded by path, once.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_NAME = "aot_test_fixture_firmware"


def _load():
    if _NAME not in sys.modules:
        path = Path(__file__).resolve().parents[1] / "runtime_c" / "fixture" / "firmware.py"
        spec = importlib.util.spec_from_file_location(_NAME, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[_NAME] = module
        spec.loader.exec_module(module)
    return sys.modules[_NAME]


fw = _load()
