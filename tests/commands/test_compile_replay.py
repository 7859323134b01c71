"""An unchanged ``aot compile`` is replayed (aot.commands.replay); anything changed compiles."""

from __future__ import annotations

import shutil

import pytest
from support.models import MODELS_DIR

import aot.commands.compile as compile_cmd
from aot.cli import main
from aot.commands import replay
from aot.errors import AotWarning

HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"
MICRO = MODELS_DIR / "tflm_micro_speech.tflite"


@pytest.fixture
def runs(tmp_path, monkeypatch):
    """``aot compile`` with its own cache; lists the compiles that really ran."""
    monkeypatch.setenv("AOT_CACHE_DIR", str(tmp_path / "cache"))
    compiled = []
    real = compile_cmd.run_one
    monkeypatch.setattr(compile_cmd, "run_one", lambda args: compiled.append(args) or real(args))
    return compiled


def _compile(capsys, model, out, *options):
    status = main(["compile", str(model), "--board", "qemu/mps2-an386", "-o", str(out),
                   *options])
    return status, capsys.readouterr()


def _records(tmp_path):
    return sorted((tmp_path / "cache" / "objects" / "compile").glob("*.json"))


def test_an_unchanged_compile_prints_the_same_report_and_touches_nothing(tmp_path, capsys,
                                                                         runs):
    out = tmp_path / "art"
    status, first = _compile(capsys, HELLO, out)
    assert status == 0 and len(runs) == 1 and len(_records(tmp_path)) == 1
    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    status, again = _compile(capsys, HELLO, out)
    assert status == 0 and len(runs) == 1 and again.out == first.out
    assert again.out.startswith("compiled ") and "code " in again.out
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == stamps


@pytest.mark.slow
def test_a_changed_artifact_option_model_aot_or_compiler_compiles_again(tmp_path, capsys,
                                                                        runs, monkeypatch):
    out, model = tmp_path / "art", tmp_path / "m.tflite"
    shutil.copyfile(HELLO, model)
    _compile(capsys, model, out)
    (out / "include" / "model.h").write_text("/* edited */\n")
    _compile(capsys, model, out)
    assert len(runs) == 2 and "edited" not in (out / "include" / "model.h").read_text()
    _compile(capsys, model, out, "--name", "hello")
    assert len(runs) == 3
    shutil.copyfile(MICRO, model)  # same path, other bytes
    status, text = _compile(capsys, model, out)
    assert status == 0 and len(runs) == 4
    monkeypatch.setattr(replay, "source_digest", lambda: "another aot")
    _compile(capsys, model, out)
    assert len(runs) == 5
    monkeypatch.setattr(replay, "_compiler", lambda args: "another gcc")
    _compile(capsys, model, out)
    assert len(runs) == 6
    _compile(capsys, model, out)  # and that last one is replayed
    assert len(runs) == 6


def test_compiles_that_read_or_write_more_are_not_recorded(tmp_path, capsys, runs):
    _compile(capsys, HELLO, tmp_path / "a", "--memory-report")
    _compile(capsys, HELLO, tmp_path / "a", "--memory-report")
    _compile(capsys, HELLO, tmp_path / "b", "--tar")
    assert len(runs) == 3 and _records(tmp_path) == []


def test_a_compile_that_printed_a_note_is_not_recorded(tmp_path, capsys, runs, monkeypatch):
    real = compile_cmd.run_one

    def noted(args):
        import warnings
        warnings.warn("something to say", AotWarning, stacklevel=2)
        return real(args)

    monkeypatch.setattr(compile_cmd, "run_one", noted)
    status, text = _compile(capsys, HELLO, tmp_path / "art")
    assert status == 0 and "note: something to say" in text.err and _records(tmp_path) == []


def test_a_damaged_record_is_a_note_and_a_compile(tmp_path, capsys, runs):
    out = tmp_path / "art"
    _compile(capsys, HELLO, out)
    _records(tmp_path)[0].write_text("{not json")
    status, text = _compile(capsys, HELLO, out)
    assert status == 0 and len(runs) == 2 and "cannot be read" in text.err
    _compile(capsys, HELLO, out)
    assert len(runs) == 2  # recorded again
