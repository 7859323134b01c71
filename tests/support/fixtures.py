"""pytest fixtures for oracle tests; import the fixture into a test module:

    from support.fixtures import tflm  # noqa: F401
"""

from __future__ import annotations

import pytest

from support.oracle import TflmOracle


@pytest.fixture(scope="session")
def tflm():
    """One TFLM worker process shared by the whole test session."""
    oracle = TflmOracle()
    yield oracle
    oracle.close()
