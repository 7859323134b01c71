"""Shared fixtures.

The shared models live beside the project, in ``../shared/models`` relative
to the project root; tests read them from there and never copy them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.models import MODEL_NAMES, MODELS, MODELS_DIR, ROOT  # noqa: F401


@pytest.fixture(scope="session")
def models_dir() -> Path:
    if not MODELS_DIR.is_dir():
        pytest.fail(f"the shared models are missing: expected them in {MODELS_DIR}")
    return MODELS_DIR



@pytest.fixture(scope="session")
def host_firmware(tmp_path_factory) -> Path:
    """The fixture model's RPC firmware built for the host port (tests/runtime_c/fixture)."""
    from support.firmware import fw

    return fw.build(tmp_path_factory.mktemp("host-fw"))
