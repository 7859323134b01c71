"""``aot build`` and ``aot flash`` on a project for the emulated Cortex-M4."""

from __future__ import annotations

import json

import pytest
from support.models import MODELS_DIR

from aot.cli import main

HELLO = str(MODELS_DIR / "tflm_hello_world_int8.tflite")


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("AOT_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["compile", HELLO, "--board", "qemu/mps2-an386", "-o", str(tmp_path / "a")]) == 0
    assert main(["project", "create", "--board", "qemu/mps2-an386", "--artifact",
                 str(tmp_path / "a"), "-o", str(tmp_path / "p")]) == 0
    return tmp_path / "p"


@pytest.mark.slow
def test_build_prints_the_size_split(project, capsys):
    capsys.readouterr()
    assert main(["build", str(project)]) == 0
    out = capsys.readouterr().out
    assert "flash" in out and "model code" in out and "constants" in out and "stack" in out
    assert (project / "build" / "firmware.elf").is_file()
    # A second build of the same project has nothing left to compile.
    assert main(["build", str(project), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["compiled"] == []
    assert data["sizes"]["flash"]["total"] > data["sizes"]["flash"]["constants"] > 0


@pytest.mark.slow
def test_build_uses_the_object_cache_of_aot_cache_dir(project, tmp_path, capsys):
    assert main(["build", str(project)]) == 0
    assert any((tmp_path / "cache" / "objects").rglob("*.o"))


@pytest.mark.slow
def test_flash_starts_the_board_and_checks_the_model(project, capsys):
    assert main(["build", str(project)]) == 0
    capsys.readouterr()
    assert main(["flash", str(project)]) == 0
    assert "qemu/mps2-an386 runs model" in capsys.readouterr().out


def test_flash_before_build_says_what_to_do(project, capsys):
    assert main(["flash", str(project)]) == 2
    assert "build the project first" in capsys.readouterr().err


def test_build_of_a_non_project(tmp_path, capsys):
    assert main(["build", str(tmp_path)]) == 2
    assert "not an aot firmware project" in capsys.readouterr().err


@pytest.mark.slow
def test_build_bounds_the_peak_stack_on_request(project, capsys):
    assert main(["build", str(project), "--stack", "--json"]) == 0
    peak = json.loads(capsys.readouterr().out)["stack_peak"]
    assert peak["bounded"] and peak["exception"] > 0
    assert peak["total"] == peak["runtime"] + peak["model"] + peak["exception"]
