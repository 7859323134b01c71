"""Shared fixtures.

The shared models live beside the project, in ``../shared/models`` relative
to the project root; tests read them from there and never copy them.  The
environment variable ``AOT_TEST_MODELS_DIR`` points the tests at another
folder (read here only, before any test module imports the paths).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import support.models

if os.environ.get("AOT_TEST_MODELS_DIR"):
    support.models.use_models_dir(Path(os.environ["AOT_TEST_MODELS_DIR"]))

from support.models import MANIFEST, MODEL_NAMES, MODELS, MODELS_DIR, ROOT  # noqa: E402,F401

# The oracle fixture (`tflm`) for every test module, registered once here rather
# than imported into each module (an imported fixture reads as an unused name).
pytest_plugins = ["support.fixtures"]


def pytest_configure(config) -> None:
    # The whole-model tests are parametrized by the manifest: without it they
    # would collect nothing and the run would pass having tested no model.
    if not MANIFEST.is_file():
        raise pytest.UsageError(
            f"the shared models' manifest is missing: expected {MANIFEST} (the models belong "
            "in ../shared/models beside the project, or set AOT_TEST_MODELS_DIR)")
    if not MODELS:
        raise pytest.UsageError(f"{MANIFEST} lists no models: the whole-model tests would "
                                "test nothing")


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


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items) -> None:
    # `@pytest.mark.one_fast` on a parametrized test: its first parametrization not
    # already marked slow stays in the fast subset (a cheap representative) and the
    # others are marked slow, before `-m 'not slow'` deselects them (tryfirst: ahead of the mark
    # plugin).  docs/architecture.md "Tests" has the rule.
    seen = set()
    for item in items:
        if item.get_closest_marker("one_fast") is None or item.get_closest_marker("slow"):
            continue
        key = (item.path, getattr(item, "originalname", item.name))
        if key in seen:
            item.add_marker(pytest.mark.slow)
        seen.add(key)
