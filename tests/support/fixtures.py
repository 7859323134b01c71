"""pytest fixtures for oracle tests; tests/conftest.py registers this module as a
plugin, so every test can take ``tflm`` as an argument without importing it."""

from __future__ import annotations

import pytest

from support.oracle import TflmOracle


@pytest.fixture(scope="session")
def tflm():
    """One TFLM worker process shared by the whole test session."""
    oracle = TflmOracle()
    yield oracle
    oracle.close()
