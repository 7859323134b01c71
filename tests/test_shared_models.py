"""The shared models are a precondition of the suite: without their manifest the
model-parametrized tests would collect nothing and the run would pass."""

from __future__ import annotations

import pytest
import os
import subprocess
import sys

from support.models import ROOT


def _pytest(tmp_path, models_dir, *args):
    env = {**os.environ, "AOT_TEST_MODELS_DIR": str(models_dir)}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.slow
def test_a_missing_manifest_fails_the_run_naming_it(tmp_path):
    empty = tmp_path / "models"
    empty.mkdir()
    proc = _pytest(tmp_path, empty, "tests/kernels/test_models.py")
    assert proc.returncode != 0, proc.stdout
    out = proc.stdout + proc.stderr
    assert f"{empty / 'MANIFEST.json'}" in out and "missing" in out


def test_an_empty_manifest_fails_the_run(tmp_path):
    (tmp_path / "MANIFEST.json").write_text("[]\n")
    proc = _pytest(tmp_path, tmp_path, "tests/kernels/test_models.py")
    assert proc.returncode != 0, proc.stdout
    assert "lists no models" in proc.stdout + proc.stderr
