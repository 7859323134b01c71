"""``aot config``: the folders firmware builds use, printed for scripts."""

from __future__ import annotations

from pathlib import Path

import pytest

from aot.cli import main


def test_each_folder_is_printed_alone_and_all_together(capsys):
    assert main(["config", "--cmake-dir"]) == 0
    cmake = Path(capsys.readouterr().out.strip())
    assert (cmake / "aotConfig.cmake").is_file() and (cmake / "aot.cmake").is_file()
    assert main(["config", "--cmake-prefix"]) == 0
    prefix = Path(capsys.readouterr().out.strip())
    # find_package(aot) searches <prefix>/aot*/cmake/
    assert cmake.parent.parent == prefix and cmake.parent.name == "aot"
    assert main(["config", "--runtime-dir"]) == 0
    runtime = Path(capsys.readouterr().out.strip())
    assert (runtime / "include" / "aot" / "platform.h").is_file()
    assert main(["config"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"cmake-dir: {cmake}", f"cmake-prefix: {prefix}", f"runtime-dir: {runtime}"]


def test_two_folders_at_once_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["config", "--cmake-dir", "--runtime-dir"])
    assert exit_.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
