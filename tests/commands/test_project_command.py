"""``aot project create``: a project folder from an artifact, errors as exit status 2."""

from __future__ import annotations

from support.models import MODELS_DIR

from aot.cli import main

HELLO = str(MODELS_DIR / "tflm_hello_world_int8.tflite")


def test_create_from_a_compiled_artifact(tmp_path, capsys):
    assert main(["compile", HELLO, "--board", "qemu/mps2-an386", "-o", str(tmp_path / "a")]) == 0
    assert main(["project", "create", "--board", "qemu/mps2-an386", "--artifact",
                 str(tmp_path / "a"), "-o", str(tmp_path / "p")]) == 0
    out = capsys.readouterr().out
    assert "created the firmware project" in out and "aot build" in out
    assert (tmp_path / "p" / "Makefile").is_file()
    assert (tmp_path / "p" / "CMakeLists.txt").is_file()


def test_wrong_board_is_a_one_line_error(tmp_path, capsys):
    assert main(["compile", HELLO, "--board", "qemu/mps2-an386", "-o", str(tmp_path / "a")]) == 0
    assert main(["project", "create", "--board", "qemu/mps2-an500", "--artifact",
                 str(tmp_path / "a"), "-o", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert "compile it again with --board qemu/mps2-an500" in err
    assert "Traceback" not in err
