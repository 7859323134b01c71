"""Fixtures for runtime tests: the fixture firmware built for the host port."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

# The flash package must come from the project root, see tests/flash/conftest.py.
_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)


def load_firmware_helpers():
    """The shared helper module tests/runtime_c/fixture/firmware.py."""
    name = "aot_test_fixture_firmware"
    if name not in sys.modules:
        path = Path(__file__).resolve().parent / "fixture" / "firmware.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


fw = load_firmware_helpers()


@pytest.fixture(scope="session")
def host_firmware(tmp_path_factory) -> Path:
    return fw.build(tmp_path_factory.mktemp("host-fw"))
