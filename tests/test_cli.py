"""The ``aot`` command as a user meets it: help, exit codes, no tracebacks."""

import subprocess
import sys

import pytest

from aot.cli import main
from aot.commands import COMMANDS


def test_every_command_has_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for module in COMMANDS:
        assert module.NAME in out


@pytest.mark.parametrize("name", [m.NAME for m in COMMANDS])
def test_subcommand_help(name, capsys):
    with pytest.raises(SystemExit) as exc:
        main([name, "--help"])
    assert exc.value.code == 0
    assert "usage: aot " + name in capsys.readouterr().out


def test_command_names_are_unique():
    names = [m.NAME for m in COMMANDS]
    assert len(names) == len(set(names))


def test_unknown_command_is_a_usage_error():
    proc = subprocess.run(
        [sys.executable, "-m", "aot", "no-such-command"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
