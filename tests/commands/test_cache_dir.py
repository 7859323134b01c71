"""The object cache's folder (aot.commands.build.default_cache_dir): chosen in
one place, and bypassed with a note naming AOT_CACHE_DIR when it cannot be
written (issue 33: a read-only HOME ended in "internal error: OSError")."""

from __future__ import annotations

import pytest
from support.models import MODELS_DIR

from aot.cli import main
from aot.commands.build import default_cache_dir
from aot.errors import AotWarning

HELLO = str(MODELS_DIR / "tflm_hello_world_int8.tflite")


@pytest.fixture
def env(monkeypatch, tmp_path):
    for name in ("AOT_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "a-file").write_text("")
    return monkeypatch


def test_the_order_aot_cache_dir_then_xdg_then_home(env, tmp_path):
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "aot" / "objects"
    env.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "aot" / "objects"
    env.setenv("AOT_CACHE_DIR", str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine" / "objects"
    assert (tmp_path / "mine" / "objects").is_dir()


@pytest.mark.parametrize("variable,folder", [
    ("AOT_CACHE_DIR", "a-file/cache/objects"),
    ("XDG_CACHE_HOME", "a-file/cache/aot/objects"),
    ("HOME", "a-file/cache/.cache/aot/objects"),
])
def test_an_unwritable_cache_is_bypassed_with_a_note(env, tmp_path, variable, folder):
    # A folder below a regular file cannot be made, even by root (chmod would not stop root).
    env.setenv(variable, str(tmp_path / "a-file" / "cache"))
    with pytest.warns(AotWarning) as notes:
        assert default_cache_dir() is None
    (note,) = [str(w.message) for w in notes]
    where = "the home folder" if variable == "HOME" else variable
    assert note.startswith(f"the object cache {tmp_path / folder} (from {where}) cannot be "
                           "written (Not a directory); building without it")
    assert "set AOT_CACHE_DIR to a writable folder" in note


@pytest.mark.slow
def test_aot_run_with_a_read_only_home_runs_without_the_cache(env, tmp_path, capsys):
    env.setenv("HOME", str(tmp_path / "a-file" / "home"))
    assert main(["run", HELLO, "--board", "qemu/mps2-an386", "--fill", "zeros"]) == 0
    out, err = capsys.readouterr()
    assert "internal error" not in err and "note: the object cache" in err
    assert "AOT_CACHE_DIR" in err and "1 invocation of tflm_hello_world_int8" in out
