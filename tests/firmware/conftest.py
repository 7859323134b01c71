"""Fixtures of the firmware tests: small artifacts compiled once per session."""

from __future__ import annotations

import pytest
from support.models import MODELS_DIR

from aot.compile import compile_model

HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"


@pytest.fixture(scope="session")
def hello_artifact(tmp_path_factory):
    """tflm_hello_world_int8 compiled for qemu/mps2-an386 (name prefix ``hello``)."""
    compiled = compile_model(HELLO, "qemu/mps2-an386", name="hello", measure_code=False)
    return compiled.write(tmp_path_factory.mktemp("art") / "hello")


@pytest.fixture(scope="session")
def object_cache(tmp_path_factory):
    """One object cache for the session, so runtime objects compile once per board."""
    return tmp_path_factory.mktemp("object-cache")
